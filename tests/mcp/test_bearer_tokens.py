"""The MCP endpoint is a protected resource: DOT bearer tokens, verified and cached per process."""

from __future__ import annotations

import time
from datetime import timedelta

import httpx2
import pytest
from oauth2_provider.models import AccessToken

from tests.conftest import Cast, LiveServer
from tests.mcp.clients import modern_post


def list_tools(live: LiveServer, token: str | None, slug: str = "demo") -> httpx2.Response:
    return modern_post(live.mcp_url(slug), "tools/list", token=token)


def test_a_valid_token_lists_the_tools(live: LiveServer, cast: Cast) -> None:
    response = list_tools(live, cast.token(live))
    assert response.status_code == 200
    assert {t["name"] for t in response.json()["result"]["tools"]} == {"provision", "delete_folder", "book_table"}


@pytest.mark.parametrize("token", [None, "not-a-token"])
def test_missing_or_unknown_token_is_401_with_www_authenticate(live: LiveServer, token: str | None) -> None:
    response = list_tools(live, token)
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    # RFC 6750 section 3.1: no error code when no token was sent.
    assert ('error="invalid_token"' in challenge) == (token is not None)
    assert f'resource_metadata="{live.url}/.well-known/oauth-protected-resource/t/demo/mcp"' in challenge


def test_protected_resource_metadata_names_the_tenant(live: LiveServer) -> None:
    response = httpx2.get(f"{live.url}/.well-known/oauth-protected-resource/t/demo/mcp")
    assert response.status_code == 200
    assert response.json()["resource"] == f"{live.url}/t/demo/mcp"


def test_expired_token_is_401(live: LiveServer, cast: Cast) -> None:
    token = cast.token(live, expires_in=timedelta(seconds=1))
    assert list_tools(live, token).status_code == 200
    time.sleep(1.1)
    assert list_tools(live, token).status_code == 401


def test_revoked_token_is_refused_at_once(live: LiveServer, cast: Cast) -> None:
    """Cached after its first use; the revocation reaches the cache by broadcast, well inside the bound."""
    token = cast.token(live)
    assert list_tools(live, token).status_code == 200
    AccessToken.objects.get(token=token).revoke()
    deadline = time.monotonic() + 2.0
    while list_tools(live, token).status_code == 200:
        assert time.monotonic() < deadline, "revoked token still accepted after 2 s"
        time.sleep(0.05)
    assert list_tools(live, token).status_code == 401


def test_token_for_another_tenant_is_401(live: LiveServer, cast: Cast) -> None:
    mallory = cast.token(live, "mallory", "other")
    assert list_tools(live, mallory, "other").status_code == 200
    response = list_tools(live, mallory, "demo")
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]


def test_token_without_a_resource_is_401(live: LiveServer, cast: Cast) -> None:
    assert list_tools(live, cast.token(live, resource=[])).status_code == 401


def test_a_token_minted_for_another_site_root_is_refused_naming_both_urls(live: LiveServer, cast: Cast) -> None:
    elsewhere = "http://127.0.0.1:1/t/demo/mcp"
    live.mark_log()
    response = list_tools(live, cast.token(live, resource=[elsewhere]))
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    line = live.wait_for_log("bearer token refused: minted for")
    assert f"minted for {elsewhere}, shown to {live.mcp_url('demo')}" in line
    assert "resource None" not in live.log_since_mark()


def test_token_without_the_mcp_scope_is_403(live: LiveServer, cast: Cast) -> None:
    response = list_tools(live, cast.token(live, scope="read"))
    assert response.status_code == 403
    assert 'error="insufficient_scope"' in response.headers["www-authenticate"]
