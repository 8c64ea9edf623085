"""RFC 9207: every authorization response, a code or an error, carries the issuer (`iss`, exactly
once, equal to the metadata's ``issuer``), and the metadata says it does, so a client talking to
several authorization servers can tell whose response it got (mix-up defense)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from tests.conftest import Cast, LiveServer
from tests.http import signed_in
from tests.oauth.helpers import Pkce, authorize_query, callback_params, decide, register_client


@pytest.fixture
def client_id(live: LiveServer, cast: Cast) -> str:
    response = register_client(live)
    assert response.status_code == 201, response.text
    return str(response.json()["client_id"])


def issuers(location: str) -> list[str]:
    return parse_qs(urlsplit(location).query).get("iss", [])


def test_the_metadata_says_authorization_responses_carry_the_issuer(live: LiveServer) -> None:
    metadata = httpx2.get(f"{live.url}/.well-known/oauth-authorization-server").json()
    assert metadata["authorization_response_iss_parameter_supported"] is True


def test_a_code_response_names_the_issuer(live: LiveServer, cast: Cast, client_id: str) -> None:
    http = signed_in(live, "alice", "alice-password-1")
    response = decide(http, authorize_query(client_id, live.mcp_url(), Pkce.new()))
    params = callback_params(response)
    assert params["code"] and params["state"] == "xyz"
    assert issuers(response.headers["location"]) == [live.url]


def test_a_denial_names_the_issuer(live: LiveServer, cast: Cast, client_id: str) -> None:
    http = signed_in(live, "alice", "alice-password-1")
    response = decide(http, authorize_query(client_id, live.mcp_url(), Pkce.new()), allow=False)
    assert callback_params(response)["error"] == "access_denied"
    assert issuers(response.headers["location"]) == [live.url]


def test_a_refusal_before_consent_names_the_issuer(live: LiveServer, cast: Cast, client_id: str) -> None:
    """mallory is no member of demo: refused on the GET, as an error redirect to the client."""
    http = signed_in(live, "mallory", "mallory-password-1")
    response = http.get(authorize_query(client_id, live.mcp_url(), Pkce.new()))
    params = callback_params(response)
    assert (params["error"], params["error_description"]) == ("access_denied", "You are not a member of Demo.")
    assert issuers(response.headers["location"]) == [live.url]
