"""A client that sends its request slowly, or not at all, holds a connection for a bounded time,
and one address holds a bounded number of them: the web process (`mcp_server.serve`) closes a
connection whose request head has not arrived within MCPSITE_REQUEST_HEAD_TIMEOUT_SECONDS (408)
or whose body has not within MCPSITE_REQUEST_BODY_TIMEOUT_SECONDS (the app sees the client
leave), and answers 429 to an address already holding MCPSITE_MAX_CONNECTIONS_PER_ADDRESS.
A trusted proxy's address is not capped: everyone behind it shares it.

Raw sockets, since no HTTP client can be told to stall; small settings, so it runs in seconds."""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Callable, Iterator

import pytest

from tests.conftest import LiveServer

HEAD_TIMEOUT, BODY_TIMEOUT, CAP = 1.0, 1.5, 4
SLACK = 3.0  # what a loaded machine may add before the server's timer runs and we see the close


@pytest.fixture(scope="module")
def server(server_factory: Callable[..., LiveServer]) -> Iterator[LiveServer]:
    server = server_factory(
        MCPSITE_REQUEST_HEAD_TIMEOUT_SECONDS=str(HEAD_TIMEOUT),
        MCPSITE_REQUEST_BODY_TIMEOUT_SECONDS=str(BODY_TIMEOUT),
        MCPSITE_MAX_CONNECTIONS_PER_ADDRESS=str(CAP),
    )
    yield server
    server.stop()


@pytest.fixture(scope="module")
def behind_a_proxy(server_factory: Callable[..., LiveServer]) -> Iterator[LiveServer]:
    """This machine's address is a trusted proxy's."""
    server = server_factory(MCPSITE_MAX_CONNECTIONS_PER_ADDRESS=str(CAP), MCPSITE_TRUSTED_PROXIES="127.0.0.1")
    yield server
    server.stop()


def connect(server: LiveServer) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=10)


def until_closed(connection: socket.socket, within: float) -> tuple[bytes, float]:
    """What the server sent until it closed the connection, and how long that took from now."""
    started = time.monotonic()
    connection.settimeout(within)
    received = b""
    while chunk := connection.recv(65536):
        received += chunk
    return received, time.monotonic() - started


def healthz(connection: socket.socket) -> bytes:
    """One kept-alive GET /healthz on `connection`: its status line."""
    connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = connection.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed after {received!r}")
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    length = next(int(line.split(b":")[1]) for line in lines if line.lower().startswith(b"content-length"))
    while len(body) < length and (chunk := connection.recv(65536)):
        body += chunk
    return lines[0]


def test_a_connection_that_sends_nothing_is_answered_408_and_closed(server: LiveServer) -> None:
    with connect(server) as connection:
        received, took = until_closed(connection, within=HEAD_TIMEOUT + SLACK)
    assert received.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert received.endswith(b"\r\n\r\nRequest not received in time.\n")
    assert HEAD_TIMEOUT * 0.8 <= took


def test_a_head_sent_a_line_at_a_time_is_closed_when_its_time_is_up(server: LiveServer) -> None:
    """Progress does not buy time: the head's deadline runs from its start."""
    with connect(server) as connection:
        started = time.monotonic()
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        for _ in range(int((HEAD_TIMEOUT + SLACK) / 0.1)):  # bounded: one line every 0.1 s
            if select.select([connection], [], [], 0.1)[0]:
                break  # the server answered (and closes)
            connection.sendall(b"X-Slow: 1\r\n")
        received, _ = until_closed(connection, within=SLACK)
        took = time.monotonic() - started
    assert received.startswith(b"HTTP/1.1 408 ")
    assert HEAD_TIMEOUT * 0.8 <= took <= HEAD_TIMEOUT + SLACK


def test_a_kept_alive_connection_whose_next_head_stalls_is_closed(server: LiveServer) -> None:
    with connect(server) as connection:
        assert healthz(connection) == b"HTTP/1.1 200 OK"
        connection.sendall(b"GET /healthz HTTP/1.1\r\n")
        received, took = until_closed(connection, within=HEAD_TIMEOUT + SLACK)
    assert received.startswith(b"HTTP/1.1 408 ")
    assert HEAD_TIMEOUT * 0.8 <= took


def test_a_body_that_never_ends_is_closed_and_the_app_answers_nothing(server: LiveServer) -> None:
    server.mark_log()
    with connect(server) as connection:
        connection.sendall(
            f"POST /t/open/mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n".encode()
            + b"Content-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
            b"Mcp-Method: tools/list\r\nContent-Length: 1000\r\n\r\n" + b'{"jsonrpc": "2.0", '
        )
        received, took = until_closed(connection, within=BODY_TIMEOUT + SLACK)
    assert received == b""
    assert BODY_TIMEOUT * 0.8 <= took
    log = server.wait_for_log("left mid-body")
    assert "Closed a connection from 127.0.0.1: request body not received within 1.5 s." in log
    assert "Traceback" not in log


def test_an_address_holding_its_cap_of_connections_gets_429_for_another(server: LiveServer) -> None:
    held = [connect(server) for _ in range(CAP)]
    try:
        for connection in held:  # each served, then kept alive: surely open and counted
            assert healthz(connection) == b"HTTP/1.1 200 OK"
        with connect(server) as refused:
            received, _ = until_closed(refused, within=SLACK)
        assert received.startswith(b"HTTP/1.1 429 Too Many Requests\r\n")
        assert received.endswith(b"\r\n\r\nToo many open connections from this address.\n")

        held.pop().close()
        deadline = time.monotonic() + SLACK
        while True:  # the server learns of the close as soon as it reads it
            with connect(server) as another:
                try:
                    status = healthz(another)
                except ConnectionError:
                    status = b"refused"
            if status == b"HTTP/1.1 200 OK" or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert status == b"HTTP/1.1 200 OK"
    finally:
        for connection in held:
            connection.close()


def test_connections_from_a_trusted_proxy_are_not_capped(behind_a_proxy: LiveServer) -> None:
    held = [connect(behind_a_proxy) for _ in range(CAP * 2)]
    try:
        assert [healthz(connection) for connection in held] == [b"HTTP/1.1 200 OK"] * (CAP * 2)
    finally:
        for connection in held:
            connection.close()
