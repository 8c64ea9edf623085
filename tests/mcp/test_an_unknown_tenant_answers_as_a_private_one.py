"""Whether a tenant exists is not told to someone who may not use it: an unknown (or disabled)
tenant answers every request exactly as a private tenant answers a caller without a valid token
for it (status, headers, body; only the slug in the challenge's URL differs). Only a member's
token gets further, and a public tenant is visible by design (it answers anyone)."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx2
import pytest

from tests.conftest import Cast, LiveServer

REAL, UNKNOWN = "demo", "nowhere"

MODERN_BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/list",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    }
).encode()
LEGACY_BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
).encode()
ACCEPT = "application/json, text/event-stream"
MODERN = {
    "Content-Type": "application/json",
    "Accept": ACCEPT,
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/list",
}
LEGACY = {"Content-Type": "application/json", "Accept": ACCEPT, "MCP-Protocol-Version": "2025-11-25"}

Request = Callable[[httpx2.Client, str], httpx2.Response]


def mcp(method: str, body: bytes = b"", headers: dict[str, str] | None = None) -> Request:
    return lambda http, slug: http.request(method, f"/t/{slug}/mcp", content=body, headers=headers or {})


# What a caller without a valid token for the tenant may send: each generation's POST, the
# session stream and its end, methods the endpoint does not serve, oversized or foreign requests.
REQUESTS: dict[str, Request] = {
    "2026-07-28 POST": mcp("POST", MODERN_BODY, MODERN),
    "2025-11-25 initialize": mcp("POST", LEGACY_BODY, LEGACY),
    "a POST with no headers at all": mcp("POST", b"{}"),
    "a POST with a body over the limit": mcp("POST", b" " * (2 * 1024 * 1024), MODERN),
    "a POST from a foreign Host": mcp("POST", MODERN_BODY, {**MODERN, "Host": "evil.example"}),
    "a POST from a foreign Origin": mcp("POST", MODERN_BODY, {**MODERN, "Origin": "http://evil.example"}),
    "the GET stream": mcp("GET", b"", {"Accept": "text/event-stream", "MCP-Protocol-Version": "2025-11-25"}),
    "a DELETE": mcp("DELETE", b"", {"Mcp-Session-Id": "0123456789abcdef", "MCP-Protocol-Version": "2025-11-25"}),
    "a PUT": mcp("PUT", b"{}"),
    "a HEAD": mcp("HEAD"),
    "the protected-resource metadata": lambda http, slug: http.get(
        f"/.well-known/oauth-protected-resource/t/{slug}/mcp"
    ),
}


def seen(response: httpx2.Response, slug: str) -> tuple[int, list[tuple[str, str]], bytes]:
    """The answer as a caller sees it, with the tenant's slug written as `<slug>` (and without
    uvicorn's `date`, which ticks, the length, which the slug's changes, and the request id, which
    each request has its own of, `mcpsite.logs`)."""

    def general(text: str) -> str:
        return text.replace(f"/t/{slug}/mcp", "/t/<slug>/mcp")

    assert len(response.headers.get_list("x-request-id")) == 1
    if response.request.method != "HEAD":
        assert int(response.headers.get("content-length", "0")) == len(response.content)
    per_request = {"date", "content-length", "x-request-id"}
    headers = sorted((k, general(v)) for k, v in response.headers.multi_items() if k not in per_request)
    return response.status_code, headers, general(response.content.decode(errors="replace")).encode()


@pytest.fixture
def http(live: LiveServer) -> httpx2.Client:
    return httpx2.Client(base_url=live.url, timeout=10)


@pytest.mark.parametrize("what", list(REQUESTS))
@pytest.mark.parametrize("token_of", ["nobody", "a stranger", "another tenant's member"])
def test_an_unknown_tenant_answers_exactly_as_a_private_one(
    live: LiveServer, cast: Cast, http: httpx2.Client, what: str, token_of: str
) -> None:
    token = {
        "nobody": None,
        "a stranger": "not-a-token",
        "another tenant's member": cast.token(live, "mallory", "other"),
    }[token_of]
    if token is not None:
        http.headers["Authorization"] = f"Bearer {token}"
    real = seen(REQUESTS[what](http, REAL), REAL)
    unknown = seen(REQUESTS[what](http, UNKNOWN), UNKNOWN)
    assert unknown == real


def test_the_challenge_of_an_unknown_tenant_names_its_own_metadata(live: LiveServer, http: httpx2.Client) -> None:
    response = REQUESTS["2026-07-28 POST"](http, UNKNOWN)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == (
        f'Bearer scope="mcp", resource_metadata="{live.url}/.well-known/oauth-protected-resource/t/{UNKNOWN}/mcp"'
    )
    assert response.content == b""


def test_a_member_still_reaches_a_private_tenant_and_the_public_one_answers_anyone(
    live: LiveServer, cast: Cast, http: httpx2.Client
) -> None:
    member = REQUESTS["2026-07-28 POST"](http, REAL)
    http.headers["Authorization"] = f"Bearer {cast.token(live)}"
    assert (member.status_code, REQUESTS["2026-07-28 POST"](http, REAL).status_code) == (401, 200)
    del http.headers["Authorization"]
    assert REQUESTS["2026-07-28 POST"](http, "open").status_code == 200
