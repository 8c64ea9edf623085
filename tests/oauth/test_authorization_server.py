"""The authorization server: metadata, registration, PKCE, consent, codes, refresh and revocation,
each failure answered with the error its RFC names."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx2
import pytest
from django.core.cache import cache
from oauth2_provider.models import Application

from tests.conftest import Cast, LiveServer
from tests.http import signed_in
from tests.mcp.clients import modern_post
from tests.oauth.helpers import (
    Pkce,
    authorize_query,
    callback_params,
    decide,
    exchange,
    register_client,
)


@pytest.fixture
def client_id(live: LiveServer, cast: Cast) -> str:
    response = register_client(live)
    assert response.status_code == 201, response.text
    return str(response.json()["client_id"])


def test_metadata_describes_an_s256_only_code_flow_with_registration(live: LiveServer) -> None:
    metadata = httpx2.get(f"{live.url}/.well-known/oauth-authorization-server").json()
    assert metadata["issuer"] == live.url
    assert metadata["authorization_endpoint"] == f"{live.url}/o/authorize/"
    assert metadata["token_endpoint"] == f"{live.url}/o/token/"
    assert metadata["registration_endpoint"] == f"{live.url}/o/register/"
    assert metadata["revocation_endpoint"] == f"{live.url}/o/revoke_token/"
    assert metadata["introspection_endpoint"] == f"{live.url}/o/introspect/"
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert metadata["response_types_supported"] == ["code"]
    assert "none" in metadata["token_endpoint_auth_methods_supported"]


def test_protected_resource_metadata_points_at_the_authorization_server(live: LiveServer) -> None:
    metadata = httpx2.get(f"{live.url}/.well-known/oauth-protected-resource/t/demo/mcp").json()
    assert metadata["resource"] == live.mcp_url()
    assert metadata["authorization_servers"] == [live.url]
    assert metadata["scopes_supported"] == ["mcp", "files:write", "payments"]  # mcp and every tool scope


def test_registered_public_client_is_visible_in_the_admin(live: LiveServer, cast: Cast) -> None:
    response = register_client(live, name="Inspector-like client")
    assert response.status_code == 201
    assert response.json()["token_endpoint_auth_method"] == "none"
    assert Application.objects.get(client_id=response.json()["client_id"]).client_type == "public"
    admin = signed_in(live, "staff", "staff-password-1").get("/admin/oauth2_provider/application/")
    assert "Inspector-like client" in admin.text


def test_registration_is_rate_limited(server_factory: Callable[..., LiveServer], cast: Cast) -> None:
    server = server_factory(MCPSITE_DCR_PER_HOUR="2")
    try:
        cache.delete("mcpsite:dcr:127.0.0.1")
        assert [register_client(server).status_code for _ in range(2)] == [201, 201]
        refused = register_client(server)
        assert refused.status_code == 429
        assert refused.json()["error"] == "slow_down"
        assert refused.headers["retry-after"] == "3600"
    finally:
        cache.delete("mcpsite:dcr:127.0.0.1")
        server.stop()


def test_code_flow_issues_a_token_for_the_tenant_only(live: LiveServer, cast: Cast, client_id: str) -> None:
    pkce, http = Pkce.new(), signed_in(live, "alice", "alice-password-1")
    params = callback_params(decide(http, authorize_query(client_id, live.mcp_url(), pkce)))
    assert params["state"] == "xyz"
    token = exchange(live, client_id, params["code"], pkce.verifier, live.mcp_url())
    assert token.status_code == 200, token.text
    access = token.json()["access_token"]
    assert modern_post(live.mcp_url("demo"), "tools/list", token=access).status_code == 200
    refused = modern_post(live.mcp_url("other"), "tools/list", token=access)
    assert refused.status_code == 401 and 'error="invalid_token"' in refused.headers["www-authenticate"]


def test_plain_pkce_is_refused(live: LiveServer, cast: Cast, client_id: str) -> None:
    http = signed_in(live, "alice", "alice-password-1")
    query = authorize_query(client_id, live.mcp_url(), Pkce("x" * 43, "x" * 43), code_challenge_method="plain")
    params = callback_params(decide(http, query))
    assert params["error"] == "invalid_request"
    assert "code" not in params


def test_missing_pkce_is_refused(live: LiveServer, cast: Cast, client_id: str) -> None:
    http = signed_in(live, "alice", "alice-password-1")
    query = authorize_query(client_id, live.mcp_url(), Pkce.new())
    query = query.replace("code_challenge=", "x_code_challenge=").replace("code_challenge_method=", "x_ccm=")
    params = callback_params(http.get(query))
    assert params["error"] == "invalid_request"


def test_wrong_pkce_verifier_is_invalid_grant(live: LiveServer, cast: Cast, client_id: str) -> None:
    pkce, http = Pkce.new(), signed_in(live, "alice", "alice-password-1")
    params = callback_params(decide(http, authorize_query(client_id, live.mcp_url(), pkce)))
    response = exchange(live, client_id, params["code"], Pkce.new().verifier, live.mcp_url())
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"


def test_wrong_redirect_uri_is_not_followed(live: LiveServer, cast: Cast, client_id: str) -> None:
    http = signed_in(live, "alice", "alice-password-1")
    response = http.get(authorize_query(client_id, live.mcp_url(), Pkce.new(), redirect_uri="http://evil.example/cb"))
    assert response.status_code == 400  # never redirected to an unregistered URI (RFC 6749 4.1.2.1)
    assert "invalid_request" in response.text
    assert "evil.example" not in response.headers.get("location", "")


def test_loopback_redirect_uri_may_use_any_port(live: LiveServer, cast: Cast, client_id: str) -> None:
    http = signed_in(live, "alice", "alice-password-1")
    other_port = "http://127.0.0.1:50123/callback"
    response = decide(http, authorize_query(client_id, live.mcp_url(), Pkce.new(), redirect_uri=other_port))
    assert response.status_code == 302
    assert response.headers["location"].startswith(other_port + "?code=")


def test_reused_authorization_code_is_invalid_grant(live: LiveServer, cast: Cast, client_id: str) -> None:
    pkce, http = Pkce.new(), signed_in(live, "alice", "alice-password-1")
    params = callback_params(decide(http, authorize_query(client_id, live.mcp_url(), pkce)))
    assert exchange(live, client_id, params["code"], pkce.verifier, live.mcp_url()).status_code == 200
    again = exchange(live, client_id, params["code"], pkce.verifier, live.mcp_url())
    assert again.status_code == 400
    assert again.json()["error"] == "invalid_grant"


def test_deny_sends_access_denied(live: LiveServer, cast: Cast, client_id: str) -> None:
    http = signed_in(live, "alice", "alice-password-1")
    params = callback_params(decide(http, authorize_query(client_id, live.mcp_url(), Pkce.new()), allow=False))
    assert params["error"] == "access_denied"
    assert params["state"] == "xyz"


def test_non_member_cannot_authorize_the_tenant(live: LiveServer, cast: Cast, client_id: str) -> None:
    http = signed_in(live, "mallory", "mallory-password-1")
    params = callback_params(http.get(authorize_query(client_id, live.mcp_url("demo"), Pkce.new())))
    assert params["error"] == "access_denied"
    assert params["state"] == "xyz"


@pytest.mark.parametrize("resource", [None, "https://elsewhere.example/mcp", "TENANT/../other"])
def test_authorization_needs_one_of_our_tenants_as_resource(
    live: LiveServer, cast: Cast, client_id: str, resource: str | None
) -> None:
    http = signed_in(live, "alice", "alice-password-1")
    if resource == "TENANT/../other":
        resource = f"{live.url}/t/nowhere/mcp"
    params = callback_params(http.get(authorize_query(client_id, resource, Pkce.new())))
    assert params["error"] == "invalid_target"


def test_refresh_token_rotates_and_the_old_one_is_refused(live: LiveServer, cast: Cast, client_id: str) -> None:
    pkce, http = Pkce.new(), signed_in(live, "alice", "alice-password-1")
    params = callback_params(decide(http, authorize_query(client_id, live.mcp_url(), pkce)))
    first = exchange(live, client_id, params["code"], pkce.verifier, live.mcp_url()).json()

    def refresh(token: str) -> httpx2.Response:
        data = {"grant_type": "refresh_token", "refresh_token": token, "client_id": client_id}
        return httpx2.post(f"{live.url}/o/token/", data=data, timeout=10)

    second = refresh(first["refresh_token"])
    assert second.status_code == 200, second.text
    assert second.json()["refresh_token"] != first["refresh_token"]
    assert modern_post(live.mcp_url(), "tools/list", token=second.json()["access_token"]).status_code == 200
    replay = refresh(first["refresh_token"])
    assert replay.status_code == 400
    assert replay.json()["error"] == "invalid_grant"


def test_revocation_reaches_every_process_within_the_bound(
    server_factory: Callable[..., LiveServer], live: LiveServer, cast: Cast, client_id: str
) -> None:
    other = server_factory(MCPSITE_SITE_ROOT=live.url)  # a second process behind the same URL
    try:
        pkce, http = Pkce.new(), signed_in(live, "alice", "alice-password-1")
        params = callback_params(decide(http, authorize_query(client_id, live.mcp_url(), pkce)))
        access = exchange(live, client_id, params["code"], pkce.verifier, live.mcp_url()).json()["access_token"]
        for process in (live, other):  # both verify it, so both have it cached
            assert modern_post(process.mcp_url(), "tools/list", token=access).status_code == 200
        revoked = httpx2.post(f"{live.url}/o/revoke_token/", data={"token": access, "client_id": client_id})
        assert revoked.status_code == 200
        deadline = time.monotonic() + 2.0  # the broadcast bound we hold ourselves to; the stated worst case is 30 s
        for process in (live, other):
            while (status := modern_post(process.mcp_url(), "tools/list", token=access).status_code) != 401:
                assert time.monotonic() < deadline, f"process {process.port} still accepts a revoked token ({status})"
                time.sleep(0.05)
    finally:
        other.stop()


def test_introspection_reports_the_token(live: LiveServer, cast: Cast, client_id: str) -> None:
    pkce, http = Pkce.new(), signed_in(live, "alice", "alice-password-1")
    params = callback_params(decide(http, authorize_query(client_id, live.mcp_url(), pkce)))
    access = exchange(live, client_id, params["code"], pkce.verifier, live.mcp_url()).json()["access_token"]
    resource_server = Application.objects.create(
        name="resource server",
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_CLIENT_CREDENTIALS,
        client_secret="rs-secret-0123456789",
    )
    response = httpx2.post(
        f"{live.url}/o/introspect/",
        data={"token": access},
        auth=(resource_server.client_id, "rs-secret-0123456789"),
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["active"] is True
    assert body["scope"] == "mcp"
    assert body["client_id"] == client_id
