"""Every response carries ``X-Request-ID``: the one a trusted proxy sent when it is well formed,
else one the server made. A client cannot choose the id its lines are logged under."""

from __future__ import annotations

import re
from typing import Any

import httpx2
import pytest

from tests.conftest import Cast, LiveServer
from tests.http import modern_tool_call
from tests.operate.conftest import PROXY_ADDRESS, json_lines

MADE_HERE = re.compile(r"[0-9a-f]{32}")


def get(server: LiveServer, path: str, *, via: str = "127.0.0.1", **headers: Any) -> httpx2.Response:
    with httpx2.Client(transport=httpx2.HTTPTransport(local_address=via), timeout=10) as client:
        return client.get(f"{server.url}{path}", headers=headers)


@pytest.mark.parametrize(
    "path", ["/healthz", "/readyz", "/admin/login/", "/no-such-page", "/t/demo/mcp", "/t/nobody/mcp"]
)
def test_every_response_has_a_request_id_of_its_own(json_server: LiveServer, path: str) -> None:
    first, second = get(json_server, path), get(json_server, path)
    assert MADE_HERE.fullmatch(first.headers["x-request-id"]), first.headers
    assert first.headers["x-request-id"] != second.headers["x-request-id"]
    assert len(first.headers.get_list("x-request-id")) == 1


def test_a_request_id_sent_by_a_client_that_is_no_trusted_proxy_is_replaced(json_server: LiveServer) -> None:
    answer = get(json_server, "/healthz", **{"X-Request-ID": "forged-by-a-client-0001"})
    assert MADE_HERE.fullmatch(answer.headers["x-request-id"]), answer.headers


def test_a_trusted_proxys_request_id_is_returned_and_logged(json_server: LiveServer, cast: Cast) -> None:
    proxy_id = "5f0c6a3e2b7d4f1a9c8e0b6d2a4f7c13"  # nginx's $request_id
    call, headers = modern_tool_call(
        "book_table", {"date": "not-a-date", "party_size": 2}, token=cast.token(json_server), request_id=proxy_id
    )
    json_server.mark_log()
    with httpx2.Client(transport=httpx2.HTTPTransport(local_address=PROXY_ADDRESS), timeout=10) as client:
        answer = client.post(json_server.mcp_url(), json=call, headers=headers)
    assert answer.status_code == 200 and answer.headers["x-request-id"] == proxy_id, answer.text
    [line] = [x for x in json_lines(json_server.wait_for_log("rejected arguments")) if "rejected" in x["message"]]
    assert (line["request_id"], line["tool"]) == (proxy_id, "book_table")


@pytest.mark.parametrize(
    "sent",
    [
        "has spaces in it 123",
        'quote"injection-1234',
        "short",
        "x" * 129,
        "tab\there-12345678",
        "ünïcode-12345678",
    ],
)
def test_a_malformed_request_id_even_from_the_trusted_proxy_is_replaced(json_server: LiveServer, sent: str) -> None:
    answer = get(json_server, "/healthz", via=PROXY_ADDRESS, **{"X-Request-ID": sent.encode()})
    assert MADE_HERE.fullmatch(answer.headers["x-request-id"]), answer.headers
