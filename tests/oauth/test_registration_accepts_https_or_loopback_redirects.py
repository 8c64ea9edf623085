"""Issue 12, item 7: a registered redirect URI is https, or http on a loopback address (RFC 8252
section 7.3); a plain-http URI elsewhere could hand codes to anyone on the path."""

from __future__ import annotations

import httpx2
import pytest
from django.core.cache import cache

from tests.conftest import Cast, LiveServer
from tests.oauth.helpers import register_client


@pytest.fixture(autouse=True)
def registrations_allowed() -> None:
    cache.delete("mcpsite:dcr:127.0.0.1")  # the suite registers many clients from this address


@pytest.mark.parametrize("redirect_uri", ["http://evil.example/cb", "http://10.0.0.7:8080/cb", "http:///cb"])
def test_a_plain_http_redirect_uri_off_loopback_is_refused(live: LiveServer, cast: Cast, redirect_uri: str) -> None:
    response = register_client(live, redirect_uri=redirect_uri)
    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid_redirect_uri",
        "error_description": (
            f"Redirect URIs must be https, or http on a loopback address: {redirect_uri!r} is neither."
        ),
    }


@pytest.mark.parametrize(
    "redirect_uri",
    [
        "http://127.0.0.1:53817/cb",
        "http://[::1]:53817/cb",
        "http://localhost:6274/oauth/callback",
        "https://client.example/cb",
    ],
)
def test_https_or_loopback_redirect_uris_register(live: LiveServer, cast: Cast, redirect_uri: str) -> None:
    response = register_client(live, redirect_uri=redirect_uri)
    assert response.status_code == 201, response.text
    assert response.json()["redirect_uris"] == [redirect_uri]


def test_a_registration_update_is_held_to_the_same_rules(live: LiveServer, cast: Cast) -> None:
    registered = register_client(live).json()
    management = {"Authorization": f"Bearer {registered['registration_access_token']}"}
    url = registered["registration_client_uri"]
    plain_http = httpx2.put(
        url,
        json={"redirect_uris": ["http://evil.example/cb"], "grant_types": ["authorization_code"]},
        headers=management,
        timeout=10,
    )
    assert plain_http.status_code == 400
    assert plain_http.json()["error"] == "invalid_redirect_uri"
    machine = httpx2.put(url, json={"grant_types": ["client_credentials"]}, headers=management, timeout=10)
    assert machine.status_code == 400
    assert machine.json()["error"] == "invalid_client_metadata"
    kept = httpx2.get(url, headers=management, timeout=10).json()
    assert kept["redirect_uris"] == registered["redirect_uris"]
    assert kept["grant_types"] == ["authorization_code", "refresh_token"]
