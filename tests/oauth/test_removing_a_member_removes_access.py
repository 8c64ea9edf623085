"""Issue 12, item 2: removing a member, or deactivating a user, ends their access at once: a
running server refuses their cached access token (the revocation is broadcast, far inside
TOKEN_CACHE_SECONDS) and their refresh token is invalid_grant. Each test signs in a fresh user,
so the shared cast keeps its memberships."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx2
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser
from django.core.cache import cache

from mcpsite.models import Tenant
from tests.conftest import Cast, LiveServer
from tests.http import signed_in
from tests.mcp.clients import modern_post
from tests.oauth.helpers import Pkce, authorize_query, callback_params, decide, exchange, register_client


@dataclass
class SignedIn:
    user: AbstractUser
    client_id: str
    access_token: str
    refresh_token: str


@pytest.fixture
def carol(live: LiveServer, cast: Cast) -> Iterator[SignedIn]:
    """A fresh member of `demo` with tokens from the real code flow, already cached by the server."""
    user = get_user_model().objects.create_user(f"carol-{uuid.uuid4().hex[:8]}", password="carol-password-1")
    cast.tenant("demo").members.add(user)
    cache.delete("mcpsite:dcr:127.0.0.1")  # the suite registers many clients from this address
    client_id = register_client(live).json()["client_id"]
    pkce, http = Pkce.new(), signed_in(live, user.username, "carol-password-1")
    code = callback_params(decide(http, authorize_query(client_id, live.mcp_url(), pkce)))["code"]
    tokens = exchange(live, client_id, code, pkce.verifier, live.mcp_url()).json()
    signed = SignedIn(user, client_id, tokens["access_token"], tokens["refresh_token"])
    assert list_tools(live, signed.access_token).status_code == 200  # now in the server's token cache
    yield signed
    user.delete()


def list_tools(live: LiveServer, token: str) -> httpx2.Response:
    return modern_post(live.mcp_url(), "tools/list", token=token)


def refresh(live: LiveServer, signed: SignedIn) -> httpx2.Response:
    data = {"grant_type": "refresh_token", "refresh_token": signed.refresh_token, "client_id": signed.client_id}
    return httpx2.post(f"{live.url}/o/token/", data=data, timeout=10)


def assert_refused_at_once(live: LiveServer, signed: SignedIn) -> None:
    deadline = time.monotonic() + 2.0  # the broadcast bound; the cache would trust it for 30 s
    while (response := list_tools(live, signed.access_token)).status_code != 401:
        assert time.monotonic() < deadline, f"access token still accepted ({response.status_code})"
        time.sleep(0.05)
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    refused = refresh(live, signed)
    assert refused.status_code == 400
    assert refused.json()["error"] == "invalid_grant"


REMOVALS: dict[str, Callable[[Tenant, AbstractUser], None]] = {
    "tenant.members.remove": lambda tenant, user: tenant.members.remove(user.pk),
    "tenant.members.set (the admin)": lambda tenant, user: tenant.members.set(tenant.members.exclude(pk=user.pk)),
    "user.tenants.remove": lambda tenant, user: user.tenants.remove(tenant),  # type: ignore[attr-defined]
    "user.tenants.clear": lambda tenant, user: user.tenants.clear(),  # type: ignore[attr-defined]
}


@pytest.mark.parametrize("removal", REMOVALS)
def test_a_removed_member_loses_access_at_once(live: LiveServer, cast: Cast, carol: SignedIn, removal: str) -> None:
    REMOVALS[removal](cast.tenant("demo"), carol.user)
    assert_refused_at_once(live, carol)


def test_a_deactivated_user_loses_access_at_once(live: LiveServer, cast: Cast, carol: SignedIn) -> None:
    carol.user.is_active = False
    carol.user.save()
    assert_refused_at_once(live, carol)


def test_membership_is_checked_again_when_refreshing(
    server_factory: Callable[..., LiveServer], live: LiveServer, cast: Cast, carol: SignedIn
) -> None:
    """A membership row deleted behind the signals' back (a bulk delete of the through rows)
    revokes nothing, yet the refresh is refused, and so is the token where it is not cached."""
    Tenant.members.through.objects.filter(tenant=cast.tenant("demo"), user_id=carol.user.pk).delete()
    fresh = server_factory(MCPSITE_SITE_ROOT=live.url)  # another process behind the same URL
    try:
        response = list_tools(fresh, carol.access_token)
        assert response.status_code == 401
        refused = refresh(fresh, carol)
        assert refused.status_code == 400
        assert refused.json()["error"] == "invalid_grant"
    finally:
        fresh.stop()


def test_deactivation_is_checked_again_when_refreshing(
    server_factory: Callable[..., LiveServer], live: LiveServer, cast: Cast, carol: SignedIn
) -> None:
    get_user_model().objects.filter(pk=carol.user.pk).update(is_active=False)  # a bulk update: no signal
    fresh = server_factory(MCPSITE_SITE_ROOT=live.url)
    try:
        assert list_tools(fresh, carol.access_token).status_code == 401
        refused = refresh(fresh, carol)
        assert refused.status_code == 400
        assert refused.json()["error"] == "invalid_grant"
    finally:
        fresh.stop()
