"""The key-ring codec: sealed with the minting key, opened with any non-retired one, no queries."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from cryptography.exceptions import InvalidTag
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext
from mcp.server.request_state import InvalidRequestState

from mcpsite.keyring import KeyRing, KeyRingUnavailable, open_material, rotation
from mcpsite.models import RequestStateKey

pytestmark = pytest.mark.django_db


def loaded_ring() -> KeyRing:
    ring = KeyRing()
    ring.reload()
    return ring


def test_seal_and_unseal_round_trip_without_queries() -> None:
    ring = loaded_ring()
    with CaptureQueriesContext(connection) as queries:
        token = ring.seal(b'{"s": "state"}')
        assert ring.unseal(token) == b'{"s": "state"}'
    assert len(queries) == 0
    assert token.startswith("k1.")
    assert b"state" not in token.encode()  # encrypted, not just signed


def test_every_seal_is_different() -> None:
    ring = loaded_ring()
    assert ring.seal(b"x") != ring.seal(b"x")


@pytest.mark.parametrize(
    "mangle",
    [
        lambda t: t[:-2] + ("AA" if t[-2:] != "AA" else "BB"),
        lambda t: t[:20],
        lambda t: "v1." + t[3:],
        lambda t: t + "=",
    ],
    ids=["tampered", "truncated", "other-format", "non-canonical"],
)
def test_mangled_tokens_are_invalid(mangle: Callable[[str], str]) -> None:
    ring = loaded_ring()
    with pytest.raises(InvalidRequestState):
        ring.unseal(mangle(ring.seal(b"payload")))


def test_rotation_keeps_old_tokens_until_retired() -> None:
    ring = loaded_ring()
    old_token = ring.seal(b"old")
    old_key = RequestStateKey.objects.get(phase="minting")
    new_key = rotation.keyring_promote(key=rotation.keyring_add_key(), check_rollout=False)
    assert ring.reload() is True
    assert ring.minting_kid == new_key.kid
    assert ring.unseal(old_token) == b"old"
    assert ring.unseal(ring.seal(b"new")) == b"new"
    rotation.keyring_retire(key=old_key, now_override=True)
    ring.reload()
    with pytest.raises(InvalidRequestState, match="unknown or retired key"):
        ring.unseal(old_token)


def test_reload_is_a_no_op_when_nothing_changed() -> None:
    ring = loaded_ring()
    assert ring.reload() is False


def test_no_minting_key_refuses_to_seal() -> None:
    RequestStateKey.objects.filter(phase="minting").update(phase="verifying")
    ring = loaded_ring()
    with pytest.raises(KeyRingUnavailable, match="no minting key"):
        ring.seal(b"x")


def test_only_one_key_can_mint() -> None:
    key = rotation.keyring_add_key()
    with pytest.raises(IntegrityError), transaction.atomic():
        RequestStateKey.objects.filter(pk=key.pk).update(phase="minting")


def test_material_is_encrypted_at_rest_and_bound_to_its_key_id() -> None:
    key = rotation.keyring_add_key()
    stored = bytes(key.material)
    assert len(open_material(key.kid, stored)) == 32
    with pytest.raises(InvalidTag):  # the key id is authenticated data
        open_material("00000000", stored)


def test_retired_keys_cannot_mint_again_and_minting_keys_cannot_retire() -> None:
    minting = RequestStateKey.objects.get(phase="minting")
    with pytest.raises(rotation.KeyRingRefused, match="promote another key first"):
        rotation.keyring_retire(key=minting)
    other = rotation.keyring_retire(key=rotation.keyring_add_key())
    with pytest.raises(rotation.KeyRingRefused, match="retired"):
        rotation.keyring_promote(key=other)
