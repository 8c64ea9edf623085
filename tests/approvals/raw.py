"""Raw protocol calls for the tests that must choose exactly what the client declares."""

from __future__ import annotations

import json
from typing import Any

import httpx2

from tests.mcp.clients import raw_post

BOTH_MODES: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}


def modern_call(
    url: str,
    token: str,
    tool: str,
    arguments: dict[str, Any],
    capabilities: dict[str, Any] | None = None,
    **headers: str,
) -> dict[str, Any]:
    """One 2026-07-28 first round of `tools/call`; the whole JSON-RPC response."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": tool,
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": BOTH_MODES if capabilities is None else capabilities,
            },
        },
    }
    response = raw_post(
        url, json.dumps(body).encode(), token, **{"Mcp-Method": "tools/call", "Mcp-Name": tool, **headers}
    )
    return dict(response.json())


def legacy_call(
    url: str, token: str, tool: str, arguments: dict[str, Any], capabilities: dict[str, Any], timeout: float = 10.0
) -> dict[str, Any]:
    """A 2025-11-25 session that declares exactly `capabilities`, and one `tools/call` in it; the
    call's JSON-RPC response (read from the SSE stream or the JSON body)."""
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    with httpx2.Client(headers=headers, timeout=timeout) as http:
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities,
                "clientInfo": {"name": "raw-legacy", "version": "1"},
            },
        }
        response = http.post(url, json=init)
        assert response.status_code == 200, response.text
        session = {"Mcp-Session-Id": response.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
        http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
        with http.stream("POST", url, json=call, headers=session) as stream:
            if not stream.headers.get("content-type", "").startswith("text/event-stream"):
                return dict(json.loads(stream.read()))
            for line in stream.iter_lines():
                if not line.startswith("data:") or not line[5:].strip():
                    continue
                message = json.loads(line[5:])
                if message.get("id") == 1 and ("result" in message or "error" in message):
                    return dict(message)
                if "method" in message:
                    raise AssertionError(f"the server sent {message['method']} to a client that cannot answer it")
    raise AssertionError("the call was not answered")
