"""A POST with neither ``MCP-Protocol-Version`` nor ``Mcp-Session-Id`` that is no ``initialize`` is
told the version header is missing and what it should be, not "Missing session ID" (the SDK's answer,
which sends a 2026-07-28 client that forgot the header looking for sessions). ``initialize`` without
the header still opens a session, and a 2025-11-25 request without its session keeps the SDK's answer."""

from __future__ import annotations

import json

import httpx2

from tests.conftest import Cast, LiveServer

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def post(server: LiveServer, token: str, body: object, **headers: str) -> httpx2.Response:
    return httpx2.post(
        server.mcp_url(),
        content=json.dumps(body).encode(),
        headers={**HEADERS, "Authorization": f"Bearer {token}", **headers},
        timeout=10,
    )


def call(method: str) -> dict[str, object]:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"_meta": meta}}


def test_a_2026_request_without_its_version_header_is_told_the_header_is_missing(live: LiveServer, cast: Cast) -> None:
    response = post(live, cast.token(live), call("tools/list"), **{"Mcp-Method": "tools/list"})

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32600
    assert "MCP-Protocol-Version header is missing" in error["message"]
    assert "`MCP-Protocol-Version: 2026-07-28`" in error["message"]
    assert "session" not in error["message"].split(".")[0].lower()
    assert "mcp-session-id" not in {k.lower() for k in response.headers}  # no session was opened for it


def test_a_body_that_does_not_parse_without_either_header_gets_the_same_answer(live: LiveServer, cast: Cast) -> None:
    response = httpx2.post(
        live.mcp_url(), content=b"{not json", headers={**HEADERS, "Authorization": f"Bearer {cast.token(live)}"}
    )

    assert response.status_code == 400
    assert "MCP-Protocol-Version header is missing" in response.json()["error"]["message"]


def test_initialize_without_the_header_still_opens_a_session(live: LiveServer, cast: Cast) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    token = cast.token(live)
    response = post(live, token, initialize)

    assert response.status_code == 200
    session = response.headers["mcp-session-id"]
    assert httpx2.delete(
        live.mcp_url(),
        headers={"Authorization": f"Bearer {token}", "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"},
    ).status_code in (200, 204)


def test_a_2025_request_without_its_session_keeps_the_sdks_answer(live: LiveServer, cast: Cast) -> None:
    response = post(
        live,
        cast.token(live),
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        **{"MCP-Protocol-Version": "2025-11-25"},
    )

    assert response.status_code == 400
    assert response.json()["error"]["message"] == "Bad Request: Missing session ID"
