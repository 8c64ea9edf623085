"""MCP (2025-11-25 and 2026-07-28, SEP-837): a client registering dynamically says which kind of
client it is, ``application_type`` "native" or "web" (OpenID Connect Registration); one that does
not is refused with RFC 7591's ``invalid_client_metadata``."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from tests.conftest import Cast, LiveServer
from tests.oauth.browser import CALLBACK

REFUSED = {
    "error": "invalid_client_metadata",
    "error_description": 'Say which kind of client this is: application_type "native" or "web".',
}


def register(live: LiveServer, **extra: Any) -> httpx2.Response:
    metadata = {"client_name": "kind", "redirect_uris": [CALLBACK], "grant_types": ["authorization_code"], **extra}
    return httpx2.post(f"{live.url}/o/register/", json=metadata, timeout=10)


def test_a_registration_without_an_application_type_is_refused(live: LiveServer, cast: Cast) -> None:
    response = register(live)
    assert response.status_code == 400
    assert response.json() == REFUSED


@pytest.mark.parametrize("kind", ["desktop", "", None])
def test_a_registration_with_an_unknown_application_type_is_refused(
    live: LiveServer, cast: Cast, kind: str | None
) -> None:
    response = register(live, application_type=kind)
    assert response.status_code == 400
    assert response.json() == REFUSED


@pytest.mark.parametrize("kind", ["native", "web"])
def test_a_native_or_web_client_registers(live: LiveServer, cast: Cast, kind: str) -> None:
    response = register(live, application_type=kind)
    assert response.status_code == 201, response.text
