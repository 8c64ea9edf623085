"""A tenant's verifier builds a token's `AccessToken` once per cache entry (it was the verifier's
largest cost on the hot path) and never serves it past the entry: a reloaded entry is rebuilt
with what changed, and an evicted token (revoked, member removed) is refused, not answered from
the verifier's own memory."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mcpsite.auth import TenantTokenVerifier, VerifiedToken, token_checksum, tokens

RESOURCE = "http://127.0.0.1:8000/t/demo/mcp"
TENANT_ID = 41


def entry(*, scopes: tuple[str, ...] = ("mcp",), tenant_ids: frozenset[int] = frozenset({TENANT_ID})) -> VerifiedToken:
    return VerifiedToken(
        client_id="client",
        subject="7",
        scopes=scopes,
        resources=(RESOURCE,),
        expires_at=int(time.time()) + 3600,
        cached_until=time.monotonic() + 30,
        tenant_ids=tenant_ids,
    )


@pytest.fixture
def raw() -> Iterator[str]:
    token = secrets.token_urlsafe(32)
    yield token
    tokens.evict(token_checksum(token))


def verifier() -> TenantTokenVerifier:
    return TenantTokenVerifier(resource_url=RESOURCE, issuer="http://127.0.0.1:8000", tenant_id=TENANT_ID)


@pytest.mark.anyio
async def test_a_cached_token_is_verified_without_rebuilding_its_access_token(raw: str) -> None:
    tokens.put(token_checksum(raw), entry())
    check = verifier()
    first = await check.verify_token(raw)
    assert first is not None and first.scopes == ["mcp"] and first.resource == RESOURCE and first.subject == "7"
    assert await check.verify_token(raw) is first


@pytest.mark.anyio
async def test_a_reloaded_token_is_verified_with_what_changed(raw: str) -> None:
    check = verifier()
    tokens.put(token_checksum(raw), entry())
    first = await check.verify_token(raw)
    tokens.put(token_checksum(raw), entry(scopes=("mcp", "admin")))
    again = await check.verify_token(raw)
    assert again is not first and again is not None and again.scopes == ["mcp", "admin"]
    tokens.put(token_checksum(raw), entry(tenant_ids=frozenset({TENANT_ID + 1})))  # no longer a member here
    assert await check.verify_token(raw) is None


@pytest.mark.anyio
async def test_an_evicted_token_is_refused_though_its_access_token_was_built(
    raw: str, django_db_setup: None, django_db_blocker: Any
) -> None:
    check = verifier()
    tokens.put(token_checksum(raw), entry())
    assert await check.verify_token(raw) is not None
    tokens.evict(token_checksum(raw))  # what a revocation's broadcast does; the database has no such token
    with django_db_blocker.unblock():  # the reload reads the suite's database (no flush: others share it)
        assert await check.verify_token(raw) is None
