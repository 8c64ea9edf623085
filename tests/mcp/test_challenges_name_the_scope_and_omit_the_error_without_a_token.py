"""Both MCP entries (the SDK's app for 2025-11-25, our fast entry for 2026-07-28) answer a refused
request with the challenge the authorization specs ask for: no ``error`` when no token was sent
(RFC 6750 section 3.1), ``invalid_token`` for a token we refuse, 403 ``insufficient_scope`` for a
token without the scope, and every challenge names ``scope="mcp"`` and the resource metadata."""

from __future__ import annotations

import json

import httpx2
import pytest

from tests.conftest import Cast, LiveServer
from tests.mcp.clients import raw_post

LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode()
INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
).encode()
# (body, headers) for each entry: a handshake-era request goes to the SDK's app, a stateless one to ours.
ENTRIES = {
    "2025-11-25": (INITIALIZE, {"MCP-Protocol-Version": "2025-11-25"}),
    "2026-07-28": (LIST, {"Mcp-Method": "tools/list"}),
}


def post(live: LiveServer, entry: str, token: str | None, **headers: str) -> httpx2.Response:
    body, entry_headers = ENTRIES[entry]
    return raw_post(live.mcp_url(), body, token, **entry_headers, **headers)


def metadata(live: LiveServer) -> str:
    return f'resource_metadata="{live.url}/.well-known/oauth-protected-resource/t/demo/mcp"'


@pytest.mark.parametrize("entry", ENTRIES)
def test_a_request_without_a_token_gets_a_challenge_without_an_error(live: LiveServer, entry: str) -> None:
    response = post(live, entry, None)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == f'Bearer scope="mcp", {metadata(live)}'


@pytest.mark.parametrize("entry", ENTRIES)
def test_another_authorization_scheme_counts_as_no_token(live: LiveServer, entry: str) -> None:
    response = post(live, entry, None, Authorization="Basic YWxpY2U6cHc=")
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == f'Bearer scope="mcp", {metadata(live)}'


@pytest.mark.parametrize("entry", ENTRIES)
def test_a_refused_token_gets_invalid_token_and_the_scope(live: LiveServer, entry: str) -> None:
    response = post(live, entry, "not-a-token")
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == (
        f'Bearer error="invalid_token", error_description="Authentication required", scope="mcp", {metadata(live)}'
    )
    assert response.json() == {"error": "invalid_token", "error_description": "Authentication required"}


@pytest.mark.parametrize("entry", ENTRIES)
def test_a_token_without_the_scope_gets_insufficient_scope_and_the_scope(
    live: LiveServer, cast: Cast, entry: str
) -> None:
    response = post(live, entry, cast.token(live, scope="read"))
    assert response.status_code == 403
    assert response.headers["www-authenticate"] == (
        f'Bearer error="insufficient_scope", error_description="Required scope: mcp", scope="mcp", {metadata(live)}'
    )
