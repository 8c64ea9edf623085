"""MCP (2025-11-25 and 2026-07-28, SEP-837) asks a client registering dynamically to say which kind
it is, ``application_type`` "native" or "web" (OpenID Connect Registration), but many deployed
clients predate it. One that does not say is given the kind its redirect URIs show, as the official
SDKs choose it: "native" when a redirect URI is on a loopback host (a mix of loopback and https
too: only a native app listens on loopback, and it may also claim an https URI), "web" when all are
https elsewhere. What was inferred is stored beside the client and named in the response. A stated
kind is kept; another value, or "web" with a loopback redirect URI, is refused."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from django.core.cache import cache
from oauth2_provider.models import Application

from mcpsite.models import ClientApplicationType
from tests.conftest import Cast, LiveServer
from tests.oauth.browser import CALLBACK

WEB_CALLBACK = "https://client.example/cb"


@pytest.fixture(autouse=True)
def registrations_allowed() -> None:
    cache.delete("mcpsite:dcr:127.0.0.1")  # the suite registers many clients from this address


def register(live: LiveServer, redirect_uris: list[str] | None = None, **extra: Any) -> httpx2.Response:
    metadata = {
        "client_name": "kind",
        "redirect_uris": redirect_uris or [CALLBACK],
        "grant_types": ["authorization_code"],
        **extra,
    }
    return httpx2.post(f"{live.url}/o/register/", json=metadata, timeout=10)


def stored(response: httpx2.Response) -> tuple[str, bool]:
    kind = ClientApplicationType.objects.get(application__client_id=response.json()["client_id"])
    return kind.application_type, kind.inferred


@pytest.mark.parametrize(
    "redirect_uris",
    [
        [CALLBACK],
        ["http://[::1]:53817/cb", "http://localhost:6274/oauth/callback"],
        ["http://127.0.0.1:33418/callback", WEB_CALLBACK],  # loopback and a claimed https URI
    ],
)
def test_a_client_with_a_loopback_redirect_uri_that_does_not_say_is_registered_as_native(
    live: LiveServer, cast: Cast, redirect_uris: list[str]
) -> None:
    response = register(live, redirect_uris)
    assert response.status_code == 201, response.text
    assert response.json()["application_type"] == "native"
    assert stored(response) == ("native", True)


def test_a_client_with_only_https_redirect_uris_that_does_not_say_is_registered_as_web(
    live: LiveServer, cast: Cast
) -> None:
    response = register(live, [WEB_CALLBACK, "https://client.example/other"])
    assert response.status_code == 201, response.text
    assert response.json()["application_type"] == "web"
    assert stored(response) == ("web", True)


def test_a_null_application_type_is_read_as_left_out(live: LiveServer, cast: Cast) -> None:
    response = register(live, application_type=None)
    assert response.status_code == 201, response.text
    assert stored(response) == ("native", True)


@pytest.mark.parametrize(
    ("kind", "redirect_uris"), [("native", [CALLBACK]), ("web", [WEB_CALLBACK]), ("native", [WEB_CALLBACK])]
)
def test_a_stated_kind_is_kept(live: LiveServer, cast: Cast, kind: str, redirect_uris: list[str]) -> None:
    response = register(live, redirect_uris, application_type=kind)
    assert response.status_code == 201, response.text
    assert response.json()["application_type"] == kind
    assert stored(response) == (kind, False)


@pytest.mark.parametrize("kind", ["desktop", "", "Native"])
def test_a_registration_with_an_unknown_application_type_is_refused(live: LiveServer, cast: Cast, kind: str) -> None:
    before = Application.objects.count()
    response = register(live, application_type=kind)
    assert (response.status_code, response.json()) == (
        400,
        {
            "error": "invalid_client_metadata",
            "error_description": (
                'application_type is "native" or "web" (or left out, to be read from the redirect URIs).'
            ),
        },
    )
    assert Application.objects.count() == before


@pytest.mark.parametrize("loopback", [CALLBACK, "https://localhost:8443/cb"])
def test_a_web_client_with_a_loopback_redirect_uri_is_refused(live: LiveServer, cast: Cast, loopback: str) -> None:
    before = Application.objects.count()
    response = register(live, [WEB_CALLBACK, loopback], application_type="web")
    assert (response.status_code, response.json()) == (
        400,
        {
            "error": "invalid_redirect_uri",
            "error_description": (
                f"{loopback!r} is a loopback address, which only a native client listens on:"
                ' register with application_type "native".'
            ),
        },
    )
    assert Application.objects.count() == before


def test_an_update_is_inferred_again_and_a_read_names_the_kind(live: LiveServer, cast: Cast) -> None:
    registered = register(live).json()
    management = {"Authorization": f"Bearer {registered['registration_access_token']}"}
    url = registered["registration_client_uri"]

    updated = httpx2.put(
        url, json={"redirect_uris": [WEB_CALLBACK], "grant_types": ["authorization_code"]}, headers=management
    )

    assert updated.status_code == 200, updated.text
    assert updated.json()["application_type"] == "web"
    assert stored(updated) == ("web", True)
    rotated = {"Authorization": f"Bearer {updated.json()['registration_access_token']}"}  # an update rotates it
    read = httpx2.get(url, headers=rotated)
    assert (read.status_code, read.json()["application_type"]) == (200, "web")
