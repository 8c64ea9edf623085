"""SIGTERM ends the web process even while a client holds a standing stream open.

MCP clients such as the Inspector open `subscriptions/listen` (2026-07-28) and keep it open for the
whole session; uvicorn waits for every connection to close before it shuts down, so without a bound
a restart (systemd, Kubernetes, Ctrl+C) hung until something sent SIGKILL.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable

from tests.conftest import LiveServer

GRACE_SECONDS = 2

LISTEN = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": "listen",
        "method": "subscriptions/listen",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "standing-stream", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
            "notifications": {"toolsListChanged": True},
        },
    }
).encode()


def open_listen_stream(server: LiveServer) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    head = (
        f"POST /t/open/mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\n"
        f"Content-Length: {len(LISTEN)}\r\n\r\n"
    ).encode()
    sock.sendall(head + LISTEN)
    received = b""
    while b"notifications/subscriptions/acknowledged" not in received:
        chunk = sock.recv(65536)
        assert chunk, f"stream closed before it was acknowledged: {received!r}"
        received += chunk
    assert received.startswith(b"HTTP/1.1 200"), received[:200]
    return sock


def read_until_closed(sock: socket.socket) -> None:
    """Return once the server has closed its end (EOF or reset); `TimeoutError` if it never does."""
    sock.settimeout(5)
    try:
        while sock.recv(65536):  # whatever was still buffered, then EOF
            pass
    except ConnectionResetError:
        pass


def test_sigterm_ends_the_process_within_the_grace_period_despite_a_standing_stream(
    server_factory: Callable[..., LiveServer],
) -> None:
    server = server_factory(MCPSITE_SHUTDOWN_GRACE_SECONDS=str(GRACE_SECONDS))
    stream = open_listen_stream(server)
    try:
        assert server.process is not None
        started = time.monotonic()
        server.process.terminate()
        try:
            server.process.wait(timeout=GRACE_SECONDS + 8)
        finally:
            elapsed = time.monotonic() - started
            server.stop(kill=True)  # only acts if it is still running (the old code: forever)
        assert elapsed < GRACE_SECONDS + 8
        assert "Waiting for connections to close" in server.log()
        read_until_closed(stream)  # the server ended the stream rather than leaving it behind
    finally:
        stream.close()
