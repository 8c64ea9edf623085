"""The requestState key ring: key material at rest, and the codec the SDK seals with.

`RequestStateSecurity.codec` is called synchronously on every round, so the codec never
queries: it reads an immutable in-memory snapshot that `KeyRing.reload()` swaps in whenever
the ring changes (a channel-layer broadcast, or the periodic poll as a fallback).
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from mcp.server.request_state import InvalidRequestState

from mcpsite.conf import mcpsite_settings
from mcpsite.exceptions import McpsiteError

logger = logging.getLogger(__name__)

_PREFIX = "k1."
_PREFIX_BYTES = _PREFIX.encode()
_KID_LEN = 4
_NONCE_LEN = 12
_TAG_LEN = 16


class KeyRingUnavailable(McpsiteError):
    """The ring has no minting key, so no requestState can be sealed."""


def _b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _b64u_decode(text: str) -> bytes:
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64u(raw) != text:  # only the canonical encoding of a token we minted decodes
        raise ValueError("non-canonical base64url")
    return raw


# --- key material at rest -------------------------------------------------------------------

_kek_cache: AESGCM | None = None


def key_encryption_key() -> AESGCM:
    """AES-GCM under the key-encryption key from the environment (or derived, embedded default)."""
    global _kek_cache
    if _kek_cache is None:
        configured = mcpsite_settings()["KEY_ENCRYPTION_KEY"]
        if configured:
            secret = configured.encode()
        else:
            logger.warning(
                "MCPSITE_KEY_ENCRYPTION_KEY is not set: deriving the requestState key-encryption key from "
                "SECRET_KEY (embedded default). Set it explicitly in production."
            )
            secret = settings.SECRET_KEY.encode()
        if len(secret) < 32:
            raise ValueError("the key-encryption key must be at least 32 bytes of secret randomness")
        derived = HKDF(algorithm=SHA256(), length=32, salt=None, info=b"mcpsite/keyring/kek/v1").derive(secret)
        _kek_cache = AESGCM(derived)
    return _kek_cache


def seal_material(kid: str, material: bytes) -> bytes:
    nonce = os.urandom(_NONCE_LEN)
    return nonce + key_encryption_key().encrypt(nonce, material, b"mcpsite/keyring:" + kid.encode())


def open_material(kid: str, sealed: bytes) -> bytes:
    return key_encryption_key().decrypt(sealed[:_NONCE_LEN], sealed[_NONCE_LEN:], b"mcpsite/keyring:" + kid.encode())


def new_key_material() -> tuple[str, bytes]:
    """A fresh (key id, 32-byte key) pair; the id is a random public label, not derived from the key."""
    return os.urandom(_KID_LEN).hex(), os.urandom(32)


# --- the in-memory ring and the codec -------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """One loaded version of the ring: every non-retired key, and which one mints."""

    keys: dict[bytes, AESGCM] = field(default_factory=dict)
    minting: bytes | None = None
    version: str = "empty"


def _version(rows: list[tuple[str, str]]) -> str:
    return hashlib.sha256(repr(sorted(rows)).encode()).hexdigest()[:12]


class KeyRing:
    """Holds the current `Snapshot`; also the `RequestStateCodec` the tenants' servers seal with."""

    def __init__(self) -> None:
        self._snapshot = Snapshot()

    @property
    def version(self) -> str:
        return self._snapshot.version

    @property
    def kids(self) -> list[str]:
        return sorted(kid.hex() for kid in self._snapshot.keys)

    @property
    def minting_kid(self) -> str | None:
        minting = self._snapshot.minting
        return minting.hex() if minting is not None else None

    def reload(self) -> bool:
        """Load the ring from the database (sync; never call on the event loop). True if it changed."""
        from mcpsite.models import RequestStateKey

        rows = list(
            RequestStateKey.objects.exclude(phase=RequestStateKey.Phase.RETIRED).values_list("kid", "phase", "material")
        )
        version = _version([(kid, phase) for kid, phase, _ in rows])
        if version == self._snapshot.version:
            return False
        keys: dict[bytes, AESGCM] = {}
        minting: bytes | None = None
        for kid, phase, sealed in rows:
            try:
                keys[bytes.fromhex(kid)] = AESGCM(open_material(kid, bytes(sealed)))
            except (InvalidTag, ValueError):
                logger.error("requestState key %s cannot be decrypted with this key-encryption key; skipped", kid)
                continue
            if phase == "minting":
                minting = bytes.fromhex(kid)
        self._snapshot = Snapshot(keys=keys, minting=minting, version=version)
        logger.info(
            "requestState key ring loaded: version %s, %d key(s), minting %s",
            version,
            len(keys),
            minting.hex() if minting else "none",
        )
        return True

    # RequestStateCodec -------------------------------------------------------------------

    def seal(self, payload: bytes) -> str:
        snapshot = self._snapshot
        kid = snapshot.minting
        if kid is None:
            raise KeyRingUnavailable(
                "the requestState key ring has no minting key: add and promote one in the admin "
                "(or run `manage.py seed_demo`)"
            )
        nonce = os.urandom(_NONCE_LEN)
        sealed = snapshot.keys[kid].encrypt(nonce, payload, _PREFIX_BYTES + kid)
        return _PREFIX + _b64u(kid + nonce + sealed)

    def unseal(self, token: str) -> bytes:
        if not token.startswith(_PREFIX):
            raise InvalidRequestState("malformed")
        try:
            raw = _b64u_decode(token[len(_PREFIX) :])
        except ValueError:
            raise InvalidRequestState("malformed") from None
        if len(raw) < _KID_LEN + _NONCE_LEN + _TAG_LEN:
            raise InvalidRequestState("malformed")
        kid, nonce, sealed = raw[:_KID_LEN], raw[_KID_LEN : _KID_LEN + _NONCE_LEN], raw[_KID_LEN + _NONCE_LEN :]
        aead = self._snapshot.keys.get(kid)
        if aead is None:
            raise InvalidRequestState(f"unknown or retired key {kid.hex()}")
        try:
            return aead.decrypt(nonce, sealed, _PREFIX_BYTES + kid)
        except InvalidTag:
            raise InvalidRequestState("seal") from None


ring = KeyRing()
"""The process-wide ring every tenant's `RequestStateSecurity` shares."""
