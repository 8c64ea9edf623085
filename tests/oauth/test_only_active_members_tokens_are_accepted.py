"""Issue 12, item 1: a token acts for a person at a tenant. Anonymous registration of a
client_credentials client, a userless token and a non-member's token get nothing anywhere."""

from __future__ import annotations

import secrets
from datetime import timedelta

import httpx2
import pytest
from django.core.cache import cache
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application

from tests.conftest import Cast, LiveServer
from tests.mcp.clients import modern_post


@pytest.fixture(autouse=True)
def registrations_allowed() -> None:
    cache.delete("mcpsite:dcr:127.0.0.1")  # the suite registers many clients from this address


def stored_token(live: LiveServer, *, user: object | None, slug: str = "demo") -> str:
    """A token written straight into the database, as a leak or a bug elsewhere could leave one."""
    application = Application.objects.create(
        name="machine", client_type=Application.CLIENT_CONFIDENTIAL, authorization_grant_type="client-credentials"
    )
    token = secrets.token_urlsafe(32)
    AccessToken.objects.create(
        user=user,
        application=application,
        token=token,
        expires=timezone.now() + timedelta(hours=1),
        scope="mcp",
        resource=[live.mcp_url(slug)],
    )
    return token


def delete_folder(live: LiveServer, token: str, path: str) -> httpx2.Response:
    params = {"name": "delete_folder", "arguments": {"path": path}}
    return modern_post(live.mcp_url(), "tools/call", params, token, **{"Mcp-Name": "delete_folder"})


def test_anonymous_registration_of_a_client_credentials_client_is_refused(live: LiveServer, cast: Cast) -> None:
    response = httpx2.post(
        f"{live.url}/o/register/",
        json={"client_name": "attacker", "grant_types": ["client_credentials"], "token_endpoint_auth_method": "none"},
        timeout=10,
    )
    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid_client_metadata",
        "error_description": "Only authorization_code clients (with refresh_token) may register.",
    }


def test_the_token_endpoint_serves_no_client_credentials_grant(live: LiveServer, cast: Cast) -> None:
    """Not even for a confidential client staff created: such a token would act for no one."""
    application = Application.objects.create(
        name="staff machine",
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_CLIENT_CREDENTIALS,
        client_secret="machine-secret-0123456789",
    )
    response = httpx2.post(
        f"{live.url}/o/token/",
        data={"grant_type": "client_credentials", "scope": "mcp", "resource": live.mcp_url()},
        auth=(application.client_id, "machine-secret-0123456789"),
        timeout=10,
    )
    assert response.status_code == 400
    assert response.json()["error"] == "unauthorized_client"
    assert not AccessToken.objects.filter(application=application).exists()


def test_a_userless_token_is_refused_by_every_tenant(live: LiveServer, cast: Cast) -> None:
    token, path = stored_token(live, user=None), cast.folder([])
    response = delete_folder(live, token, path)
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    assert cast.folder_exists(path)


def test_a_non_members_token_for_the_tenant_is_refused(live: LiveServer, cast: Cast) -> None:
    token, path = stored_token(live, user=cast.user("mallory"), slug="demo"), cast.folder([])
    response = delete_folder(live, token, path)
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    assert cast.folder_exists(path)


def test_a_members_token_still_runs_the_tools(live: LiveServer, cast: Cast) -> None:
    path = cast.folder([])
    response = delete_folder(live, cast.token(live, "bob"), path)
    assert response.status_code == 200, response.text
    assert not cast.folder_exists(path)


def test_a_registration_asking_for_a_client_secret_is_registered_as_public(live: LiveServer, cast: Cast) -> None:
    response = httpx2.post(
        f"{live.url}/o/register/",
        json={
            "client_name": "secret asker",
            "application_type": "web",
            "redirect_uris": ["https://client.example/cb"],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "client_secret_post",
        },
        timeout=10,
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in body
    assert Application.objects.get(client_id=body["client_id"]).client_type == "public"
