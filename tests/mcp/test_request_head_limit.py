"""The web process reads at most MCPSITE_MAX_REQUEST_HEAD (64 KiB) of request line and headers:
a longer head gets 431 and its connection closes; the server goes on serving."""

from __future__ import annotations

import socket

import httpx2

from tests.conftest import LiveServer


def exchange(server: LiveServer, header_bytes: int) -> bytes:
    """One GET with an `X-Padding` header of that size, on its own connection; what came back
    before the server closed it."""
    request = (
        b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        + b"X-Padding: " + b"a" * header_bytes + b"\r\n\r\n"
    )  # fmt: skip
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as connection:
        connection.sendall(request)
        received = b""
        while chunk := connection.recv(65536):
            received += chunk
    return received


def test_a_one_megabyte_header_is_refused_with_431_and_the_server_answers_the_next_request(live: LiveServer) -> None:
    answer = exchange(live, 1024 * 1024)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0] == b"HTTP/1.1 431 Request Header Fields Too Large"
    assert b"connection: close" in head.split(b"\r\n")
    assert body == b"Request line and headers too large.\n"
    assert httpx2.get(f"{live.url}/healthz", timeout=10).status_code == 200


def test_a_head_just_over_the_limit_is_refused_and_one_under_it_is_served(live: LiveServer) -> None:
    assert exchange(live, 66 * 1024).startswith(b"HTTP/1.1 431 ")
    assert exchange(live, 60 * 1024).startswith(b"HTTP/1.1 200 ")
