"""A client that leaves before its request body ends gets nothing (nobody is there to read it) and
costs the server log one line, not an "Exception in ASGI application" traceback: a 2026-07-28
request and a 2025-11-25 one (which the SDK's session app reads) alike."""

from __future__ import annotations

import json
import socket
import time

import pytest
from starlette.types import Message

from bench.asgi import post_scope
from mcp_server.compose import build_server
from tests.conftest import Cast, LiveServer
from tools_app.tenant import TenantInfo

BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "provision",
            "arguments": {"name": "orders"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
).encode()
HALF = len(BODY) // 2
LEGACY_BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "leaving", "version": "1"},
        },
    }
).encode()


def headers(host: str, token: str | None) -> list[tuple[str, str]]:
    auth = [("authorization", f"Bearer {token}")] if token else []
    return [
        ("host", host),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "provision"),
        ("content-length", str(len(BODY))),
        *auth,
    ]


def test_a_client_leaving_mid_body_logs_one_line_and_no_traceback(live: LiveServer, cast: Cast) -> None:
    token = cast.token(live)
    head = "".join(f"{k}: {v}\r\n" for k, v in headers(f"127.0.0.1:{live.port}", token))
    live.mark_log()
    with socket.create_connection(("127.0.0.1", live.port)) as sock:
        sock.sendall(f"POST /t/demo/mcp HTTP/1.1\r\n{head}\r\n".encode() + BODY[:HALF])
        time.sleep(0.2)  # the request is inside the server, waiting for the rest of the body
    live.wait_for_log("left mid-body")
    time.sleep(0.5)  # a traceback or a second line would be written by now
    tail = live.log_path.read_bytes()[live._log_offset :].decode(errors="replace")
    assert "Exception in ASGI application" not in tail
    lines = tail.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].endswith(
        " INFO mcp_server.endpoint: client 127.0.0.1 left mid-body on POST /t/demo/mcp; nothing answered"
    )


@pytest.mark.anyio
async def test_a_client_leaving_mid_body_is_answered_nothing() -> None:
    info = TenantInfo(id=1, slug="leaving", name="Leaving", public=True, toolsets=("demo",), version="v1")
    server, app = build_server(info)
    messages: list[Message] = [
        {"type": "http.request", "body": BODY[:HALF], "more_body": True},
        {"type": "http.disconnect"},
    ]
    sent: list[Message] = []

    async def receive() -> Message:
        return messages.pop(0)

    async def send(message: Message) -> None:
        sent.append(message)

    async with server.session_manager.run():
        await app(post_scope("/t/leaving/mcp", headers("127.0.0.1:8000", None)), receive, send)
    assert sent == []


def test_a_2025_11_25_client_leaving_mid_body_logs_one_line_and_no_traceback(live: LiveServer, cast: Cast) -> None:
    token = cast.token(live)
    head = "".join(
        f"{k}: {v}\r\n"
        for k, v in [
            ("host", f"127.0.0.1:{live.port}"),
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2025-11-25"),
            ("content-length", str(len(LEGACY_BODY))),
            ("authorization", f"Bearer {token}"),
        ]
    )
    live.mark_log()
    with socket.create_connection(("127.0.0.1", live.port)) as sock:
        sock.sendall(f"POST /t/demo/mcp HTTP/1.1\r\n{head}\r\n".encode() + LEGACY_BODY[: len(LEGACY_BODY) // 2])
        time.sleep(0.2)  # the request is inside the server, waiting for the rest of the body
    live.wait_for_log("left mid-body")
    time.sleep(0.5)  # a traceback or a second line would be written by now
    tail = live.log_path.read_bytes()[live._log_offset :].decode(errors="replace")
    assert "Exception in ASGI application" not in tail
    assert "Traceback" not in tail
    lines = tail.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].endswith(
        " INFO mcp_server.sessions: client 127.0.0.1 left mid-body on POST /t/demo/mcp; nothing answered"
    )


@pytest.mark.anyio
async def test_a_2025_11_25_client_leaving_mid_body_is_answered_nothing() -> None:
    info = TenantInfo(id=1, slug="leaving", name="Leaving", public=True, toolsets=("demo",), version="v1")
    server, app = build_server(info)
    legacy_headers = [
        ("host", "127.0.0.1:8000"),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2025-11-25"),
        ("content-length", str(len(LEGACY_BODY))),
    ]
    messages: list[Message] = [
        {"type": "http.request", "body": LEGACY_BODY[:10], "more_body": True},
        {"type": "http.disconnect"},
    ]
    sent: list[Message] = []

    async def receive() -> Message:
        return messages.pop(0)

    async def send(message: Message) -> None:
        sent.append(message)

    async with server.session_manager.run():
        await app(post_scope("/t/leaving/mcp", legacy_headers), receive, send)
    assert sent == []
