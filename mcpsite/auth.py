"""Bearer tokens from django-oauth-toolkit, verified for the MCP SDK.

Verified tokens are kept in a per-process cache so the hot path does not query. A token
changed or revoked in the database is evicted from every process by a broadcast
(`token.changed`); if that broadcast is lost, the cache entry still expires after
``MCPSITE["TOKEN_CACHE_SECONDS"]``, the stated revocation bound.

A tenant accepts a token only when it names the tenant's resource and its user is active and a
member of the tenant. The cached entry carries the ids of the tenants its user is a member of,
so that check costs no query either; removing a member or deactivating a user revokes the
tokens (`services.token_revoke_for_member`), which evicts them through the same broadcast.
It carries the member's roles the same way (tenant id -> the tools a restricted role may call,
`mcpsite.roles`); a role changed evicts its holders' entries (``members.changed``), and a lost
broadcast is bounded by the same ``TOKEN_CACHE_SECONDS``.

Both MCP entries refuse a request with the same challenge, `BearerChallenge`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
from channels.db import database_sync_to_async
from django.utils import timezone
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken
from oauth2_provider.models import AccessToken as StoredToken
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from mcpsite import metrics
from mcpsite.conf import mcpsite_settings

logger = logging.getLogger(__name__)


def token_checksum(token: str) -> str:
    """The lookup key django-oauth-toolkit stores (sha256 of the raw token)."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class VerifiedToken:
    client_id: str
    subject: str | None
    scopes: tuple[str, ...]
    resources: tuple[str, ...]
    expires_at: int
    cached_until: float
    # The tenants whose endpoint may accept it: those its (active) user is a member of.
    tenant_ids: frozenset[int] = frozenset()
    # Tenant id -> every tool the user's role there may call; a tenant not named: every tool.
    roles: Mapping[int, frozenset[str]] = field(default_factory=dict)


class MemberToken(AccessToken):
    """The SDK's `AccessToken`, with what the member's role at this tenant lets them call: read by
    `mcpsite.roles` off the request's authenticated user, so a role costs no lookup per call."""

    tools: frozenset[str] | None = None
    """The tool names the member may call here; None: every tool the tenant serves."""


@dataclass
class _Load:
    done: anyio.Event = field(default_factory=anyio.Event)
    result: VerifiedToken | None = None
    overtaken: bool = False


class TokenCache:
    """checksum -> `VerifiedToken`, shared by every tenant's verifier in this process.

    `lookup` loads a missing entry once however many requests ask for it at the same moment (at
    64 concurrent calls an expiring entry otherwise sent 64 identical queries through Django's
    one sync thread: a ~300 ms stall every `TOKEN_CACHE_SECONDS`, found by bench/run), and reads
    again when an eviction arrives during the load (a revocation must not be undone by a read
    that started before it).
    """

    def __init__(self) -> None:
        self._entries: dict[str, VerifiedToken] = {}
        self._loading: dict[str, _Load] = {}

    async def lookup(
        self, checksum: str, load: Callable[[str], Awaitable[VerifiedToken | None]]
    ) -> VerifiedToken | None:
        entry = self.get(checksum)
        if entry is not None:
            if metrics.COUNTING:
                metrics.TOKEN_CACHE_HIT.inc()
            return entry
        if metrics.COUNTING:
            metrics.TOKEN_CACHE_MISS.inc()
        while (entry := self.get(checksum)) is None:
            pending = self._loading.get(checksum)
            if pending is not None:
                await pending.done.wait()
                if pending.overtaken:
                    continue
                return pending.result
            pending = self._loading[checksum] = _Load()
            try:
                pending.result = await load(checksum)
            finally:
                del self._loading[checksum]
                pending.done.set()
            if pending.overtaken:
                continue
            if pending.result is not None:
                self.put(checksum, pending.result)
            return pending.result
        return entry

    def get(self, checksum: str) -> VerifiedToken | None:
        entry = self._entries.get(checksum)
        if entry is None:
            return None
        if entry.cached_until <= time.monotonic() or entry.expires_at <= time.time():
            self._entries.pop(checksum, None)
            return None
        return entry

    def put(self, checksum: str, entry: VerifiedToken) -> None:
        if len(self._entries) > 100_000:  # bounded: a flood of distinct tokens cannot grow it forever
            self._entries.clear()
        self._entries[checksum] = entry

    def evict(self, checksum: str) -> None:
        self._entries.pop(checksum, None)
        pending = self._loading.get(checksum)
        if pending is not None:
            pending.overtaken = True

    def evict_subjects(self, subjects: Collection[str]) -> None:
        """Forget every entry of these users (their role changed): a scan, as rare as role changes.
        A load in flight may have read the old role: it is read again."""
        for checksum, entry in list(self._entries.items()):
            if entry.subject in subjects:
                del self._entries[checksum]
        for pending in self._loading.values():
            pending.overtaken = True

    def clear(self) -> None:
        self._entries.clear()


tokens = TokenCache()


def _load(checksum: str) -> VerifiedToken | None:
    from mcpsite.models import MemberRole, Tenant

    stored = (
        StoredToken.objects.select_related("application", "user")
        .filter(token_checksum=checksum, expires__gt=timezone.now())
        .first()
    )
    if stored is None or stored.application is None:
        return None
    # A token acts for its user at a tenant: one without a user (client_credentials, or a DCR
    # registration token) or of a deactivated user acts for no one, so no tenant accepts it.
    if stored.user is None or not stored.user.is_active:
        logger.info("bearer token refused: it has no active user (client %s)", stored.application.client_id)
        return None
    return VerifiedToken(
        client_id=stored.application.client_id,
        subject=str(stored.user_id),
        scopes=tuple(stored.scope.split()),
        resources=tuple(stored.resource or ()),
        expires_at=int(stored.expires.timestamp()),
        cached_until=time.monotonic() + mcpsite_settings()["TOKEN_CACHE_SECONDS"],
        tenant_ids=frozenset(Tenant.objects.of_member(stored.user_id).values_list("pk", flat=True)),
        roles={held.tenant_id: held.role.allowed_tools() for held in MemberRole.objects.held_by(stored.user_id)},
    )


_load_async = database_sync_to_async(_load)


class TenantTokenVerifier:
    """The SDK `TokenVerifier` for one tenant: (client id, issuer, subject) from a DOT token.

    A token not issued for this tenant's resource URL is refused here (logged with both URLs);
    the SDK's bearer middleware (``validate_token_resource``) checks the same again.
    A token whose user is not a member of this tenant is refused here (``None``: 401).
    """

    def __init__(self, *, resource_url: str, issuer: str, tenant_id: int) -> None:
        self.resource_url = resource_url
        self.issuer = issuer
        self.tenant_id = tenant_id
        # checksum -> (the cache entry, the AccessToken built from it). Building the pydantic model
        # was the verifier's largest cost on a cache hit; it is rebuilt whenever `tokens` holds a
        # different entry (a reload, or an eviction: then `lookup` refuses before we get here).
        self._built: dict[str, tuple[VerifiedToken, AccessToken]] = {}

    async def verify_token(self, token: str) -> AccessToken | None:
        checksum = token_checksum(token)
        entry = await tokens.lookup(checksum, _load_async)
        if entry is None:
            logger.info("bearer token refused: unknown, revoked, expired or without an active user")
            return None
        if self.tenant_id not in entry.tenant_ids:
            logger.info("bearer token refused: user %s is not a member of tenant %s", entry.subject, self.tenant_id)
            return None
        if self.resource_url not in entry.resources:
            # Refused here rather than by the SDK's bearer middleware, whose line reads
            # "resource None": say which URL the token was minted for and which it was shown to.
            logger.info(
                "bearer token refused: minted for %s, shown to %s (mint one for this server's site root)",
                ", ".join(entry.resources) or "no resource",
                self.resource_url,
            )
            return None
        built = self._built.get(checksum)
        if built is not None and built[0] is entry:
            return built[1]
        access = MemberToken(
            token=token,
            client_id=entry.client_id,
            scopes=list(entry.scopes),
            expires_at=entry.expires_at,
            resource=self.resource_url,
            subject=entry.subject,
            claims={"iss": self.issuer},
            tools=entry.roles.get(self.tenant_id),
        )
        if len(self._built) > 100_000:  # bounded like `tokens`
            self._built.clear()
        self._built[checksum] = (entry, access)
        return access


class BearerChallenge:
    """The SDK's `RequireAuthMiddleware` (a token is required, and every required scope) with the
    challenge the MCP authorization specs ask for, which the SDK's middleware has no parameter for:

    - a request that sent no bearer token gets a bare challenge, no ``error`` (RFC 6750 section
      3.1: "if the request lacks any authentication information, the resource server SHOULD NOT
      include an error code"); a token we refuse gets ``invalid_token``, a missing scope 403
      ``insufficient_scope``;
    - every challenge names the scope to ask for (``scope="mcp"``: MCP 2025-11-25 and 2026-07-28,
      scope selection) beside ``resource_metadata`` (RFC 9728 section 5.1).

    Used by both entries: `mcp_server.endpoint` builds its chain with it, and `challenge_sdk_route`
    puts it in place of the SDK's own in the SDK's app, so both answer the same challenge.
    """

    def __init__(self, app: ASGIApp, required_scopes: list[str], resource_metadata_url: Any = None) -> None:
        self.app = app
        self.required_scopes = required_scopes
        self.resource_metadata_url = resource_metadata_url

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not isinstance(scope.get("user"), AuthenticatedUser):
            if not _sent_a_bearer_token(scope):
                await self._challenge(send, 401)
            else:
                await self._challenge(send, 401, "invalid_token", "Authentication required")
            return
        granted = scope["auth"].scopes if scope.get("auth") is not None else []
        for required in self.required_scopes:
            if required not in granted:
                await self._challenge(send, 403, "insufficient_scope", f"Required scope: {required}")
                return
        await self.app(scope, receive, send)

    async def _challenge(self, send: Send, status: int, error: str | None = None, description: str = "") -> None:
        await challenge_send(
            send,
            status,
            scopes=self.required_scopes,
            resource_metadata_url=self.resource_metadata_url,
            error=error,
            description=description,
        )


async def challenge_send(
    send: Send,
    status: int,
    *,
    scopes: Sequence[str],
    resource_metadata_url: Any,
    error: str | None = None,
    description: str = "",
) -> None:
    """One bearer challenge: ``WWW-Authenticate`` with the error (if any), the scopes to ask for
    and the resource metadata, and the SDK's JSON body for a refusal."""
    parts = [f'error="{error}"', f'error_description="{description}"'] if error else []
    if scopes:
        parts.append(f'scope="{" ".join(scopes)}"')
    if resource_metadata_url:
        parts.append(f'resource_metadata="{resource_metadata_url}"')
    # The SDK's JSON body for a refusal; a bare challenge has no error to put in one.
    body = json.dumps({"error": error, "error_description": description}).encode() if error else b""
    headers = [
        (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", f"Bearer {', '.join(parts)}".encode()),
    ]
    if body:
        headers.append((b"content-type", b"application/json"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def granted_scopes(scope: Scope) -> Sequence[str]:
    """The scopes of the request's verified token (none without one)."""
    auth = scope.get("auth")
    return auth.scopes if auth is not None else ()


async def insufficient_scope(
    send: Send, *, needed: Sequence[str], granted: Sequence[str], resource_metadata_url: Any
) -> None:
    """403 ``insufficient_scope`` for a call whose tool needs scopes the token lacks: the challenge
    names every scope the call needs (RFC 6750 section 3.1; MCP's step-up), not only the missing
    ones, so a client that asks for exactly those gets a token that makes the call."""
    missing = " ".join(scope for scope in needed if scope not in granted)
    logger.info("tool call refused: the token lacks scope %s", missing)
    await challenge_send(
        send,
        403,
        scopes=needed,
        resource_metadata_url=resource_metadata_url,
        error="insufficient_scope",
        description=f"Required scope: {missing}",
    )


def _sent_a_bearer_token(scope: Scope) -> bool:
    # The SDK's backend reads the same header: anything else (no header, another scheme) is no token.
    return any(k == b"authorization" and v[:7].lower() == b"bearer " for k, v in scope["headers"])


def challenge_sdk_route(sdk_app: Starlette, path: str) -> None:
    """Put `BearerChallenge` in place of the `RequireAuthMiddleware` the SDK's app wraps its MCP
    route in (`Server.streamable_http_app` takes no middleware for it), keeping its settings."""
    for route in sdk_app.routes:
        if isinstance(route, Route) and route.path == path and isinstance(route.app, RequireAuthMiddleware):
            sdk = route.app
            route.app = BearerChallenge(sdk.app, sdk.required_scopes, sdk.resource_metadata_url)
            return
    raise RuntimeError(f"the SDK's app has no authenticated route {path}: its layout changed")
