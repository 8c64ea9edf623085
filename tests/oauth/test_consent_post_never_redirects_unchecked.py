"""Issue 12, item 8: the consent form's hidden fields can be edited. The POST redirects nowhere
before the client's redirect URI is checked again, and a refused resource is answered on our own
page (not sent to the client)."""

from __future__ import annotations

import re

import httpx2
import pytest
from django.core.cache import cache

from tests.conftest import Cast, LiveServer
from tests.http import csrf, signed_in
from tests.oauth.helpers import Pkce, authorize_query, register_client


@pytest.fixture
def consent(live: LiveServer, cast: Cast) -> tuple[httpx2.Client, str, dict[str, str]]:
    """alice on a valid consent page: her session, the page's URL and its form fields."""
    cache.delete("mcpsite:dcr:127.0.0.1")  # the suite registers many clients from this address
    client_id = register_client(live).json()["client_id"]
    http = signed_in(live, "alice", "alice-password-1")
    query = authorize_query(client_id, live.mcp_url(), Pkce.new())
    page = http.get(query)
    assert page.status_code == 200, page.text[:500]
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page.text))
    fields["csrfmiddlewaretoken"] = csrf(page)
    return http, query, fields


def assert_our_page(response: httpx2.Response, error: str) -> None:
    assert response.status_code == 400, response.text[:500]
    assert "location" not in response.headers
    assert f"Cannot authorize: {error}" in response.text


@pytest.mark.parametrize(
    "edits",
    [
        {"resource": "https://elsewhere.example/mcp", "allow": "Authorize"},  # refused resource
        {"resource": "not a resource"},  # malformed resource (DOT's own check redirects)
        {},  # Deny
    ],
    ids=["refused-resource", "malformed-resource", "deny"],
)
def test_an_unregistered_redirect_uri_is_never_redirected_to(
    live: LiveServer, consent: tuple[httpx2.Client, str, dict[str, str]], edits: dict[str, str]
) -> None:
    http, query, fields = consent
    response = http.post(query, data={**fields, "redirect_uri": "http://evil.example/cb", **edits})
    assert_our_page(response, "invalid_request")


@pytest.mark.parametrize(
    ("resource", "error"),
    [("https://elsewhere.example/mcp", "invalid_target"), ("OTHER", "access_denied")],
    ids=["not-a-tenant", "not-her-tenant"],
)
def test_a_refused_resource_is_answered_on_our_page(
    live: LiveServer, consent: tuple[httpx2.Client, str, dict[str, str]], resource: str, error: str
) -> None:
    http, query, fields = consent
    resource = live.mcp_url("other") if resource == "OTHER" else resource
    response = http.post(query, data={**fields, "resource": resource, "allow": "Authorize"})
    assert_our_page(response, error)
