"""The 2026-07-28 entry (`mcp_server.endpoint.TenantEndpoint`): the SDK's answers on a shorter path.

In process, every request below goes once through our entry and once through the SDK's own app
for the same tenant server, and both must answer alike (status, content type, body). Then,
against the live server: a quiet call answers JSON, a call that reports progress streams it, a
client that leaves cancels the handler, and a long quiet call is kept alive with pings.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from starlette.types import Scope

from bench.asgi import Exchange, post_scope
from mcp_server import endpoint as endpoint_module
from mcp_server.compose import build_server
from mcp_server.endpoint import TenantEndpoint
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import modern_post, raw_post
from tools_app.tenant import TenantInfo

PATH = "/t/parity/mcp"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def call(name: str, arguments: dict[str, Any] | None = None, meta: dict[str, Any] | None = None) -> bytes:
    params = {"name": name, "arguments": arguments or {}, "_meta": {**META, **(meta or {})}}
    return json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}).encode()


LIST = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": META}}).encode()

# name -> (body, headers to change, headers to add); the base headers make a valid `tools/call`.
CASES: dict[str, tuple[bytes, dict[str, str], list[tuple[str, str]]]] = {
    "quiet call": (call("test_simple_text"), {}, []),
    "tools/list": (LIST, {"mcp-method": "tools/list"}, []),
    "parse error": (b'{"jsonrpc": "2.0", "id": 1, "method": ', {}, []),
    "batch": (b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', {}, []),
    "posted response": (b'{"jsonrpc": "2.0", "id": 1, "result": {}}', {}, []),
    "notification": (b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}', {}, []),
    "no SSE in Accept": (call("test_simple_text"), {"accept": "application/json"}, []),
    "no JSON in Accept": (call("test_simple_text"), {"accept": "text/event-stream"}, []),
    "not JSON": (call("test_simple_text"), {"content-type": "text/plain"}, []),
    "foreign Host": (call("test_simple_text"), {"host": "evil.example"}, []),
    "foreign Origin": (call("test_simple_text"), {}, [("origin", "http://evil.example")]),
    "Mcp-Method disagrees": (call("test_simple_text"), {"mcp-method": "tools/list"}, []),
    "Mcp-Name disagrees": (call("test_simple_text"), {"mcp-name": "test_error_handling"}, []),
    "Mcp-Method twice": (call("test_simple_text"), {}, [("mcp-method", "tools/call")]),
    "unknown version": (call("test_simple_text"), {"mcp-protocol-version": "2099-01-01"}, []),
    "no _meta": (
        json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "test_simple_text"}}
        ).encode(),
        {},
        [],
    ),
    "unknown tool": (call("no_such_tool"), {"mcp-name": "no_such_tool"}, []),
    "wrong argument type": (call("test_custom_header", {"region": 5}), {"mcp-name": "test_custom_header"}, []),
    "declared header missing": (call("test_custom_header", {"region": "eu"}), {"mcp-name": "test_custom_header"}, []),
    "declared header differs": (
        call("test_custom_header", {"region": "eu"}),
        {"mcp-name": "test_custom_header"},
        [("mcp-param-region", "us")],
    ),
    "declared header matches": (
        call("test_custom_header", {"region": "eu"}),
        {"mcp-name": "test_custom_header"},
        [("mcp-param-region", "eu")],
    ),
    "header no tool declares": (call("test_simple_text"), {}, [("mcp-param-region", "eu")]),
    "progress, streamed": (
        call("test_tool_with_progress", meta={"progressToken": "p-1"}),
        {"mcp-name": "test_tool_with_progress"},
        [],
    ),
    "log lines, streamed": (
        call("test_tool_with_logging", meta={"io.modelcontextprotocol/logLevel": "info"}),
        {"mcp-name": "test_tool_with_logging"},
        [],
    ),
    "log lines not asked for": (call("test_tool_with_logging"), {"mcp-name": "test_tool_with_logging"}, []),
}


def scope(body: bytes, change: dict[str, str], add: list[tuple[str, str]]) -> Scope:
    """A valid `tools/call`'s headers, with `change` applied and `add` appended."""
    base = {
        "host": "127.0.0.1:8000",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "test_simple_text",
        "content-length": str(len(body)),
    }
    return post_scope(PATH, [*{**base, **change}.items(), *add])


@pytest.fixture
async def endpoint() -> AsyncIterator[TenantEndpoint]:
    info = TenantInfo(id=1, slug="parity", name="Parity", public=True, toolsets=("conformance",), version="v1")
    server, app = build_server(info)
    assert isinstance(app, TenantEndpoint)
    async with server.session_manager.run():
        yield app


# The logging fixture tool uses `ctx.log`, deprecated at 2026-07-28; its warning is expected here.
pytestmark = pytest.mark.filterwarnings("ignore:The logging capability is deprecated")


@pytest.mark.anyio
@pytest.mark.parametrize("case", list(CASES))
async def test_our_entry_answers_as_the_sdk_does(endpoint: TenantEndpoint, case: str) -> None:
    body, change, add = CASES[case]
    ours, sdks = Exchange(body), Exchange(body)
    await endpoint(scope(body, change, add), ours.receive, ours.send)
    await endpoint.sdk_app(scope(body, change, add), sdks.receive, sdks.send)
    assert ours.status is not None
    assert ours.answer() == sdks.answer()


@pytest.mark.anyio
async def test_the_cases_cover_success_and_every_kind_of_refusal(endpoint: TenantEndpoint) -> None:
    """The parity table is worth something only if it reaches each branch: check what it got."""
    statuses, kinds = {}, {}
    for case, (body, change, add) in CASES.items():
        exchange = Exchange(body)
        await endpoint(scope(body, change, add), exchange.receive, exchange.send)
        statuses[case] = exchange.status
        kinds[case] = exchange.answer()[1]
    assert statuses["quiet call"] == statuses["declared header matches"] == statuses["header no tool declares"] == 200
    assert statuses["notification"] == 202
    assert statuses["no SSE in Accept"] == statuses["no JSON in Accept"] == 406
    assert statuses["foreign Host"] == 421
    assert statuses["foreign Origin"] == 403
    for refused in ("parse error", "batch", "Mcp-Method disagrees", "Mcp-Method twice", "declared header missing"):
        assert statuses[refused] == 400, refused
    assert statuses["declared header differs"] == 400
    assert kinds["progress, streamed"] == kinds["log lines, streamed"] == "text/event-stream"
    assert kinds["quiet call"] == kinds["log lines not asked for"] == "application/json"


@pytest.mark.anyio
async def test_a_client_that_leaves_cancels_the_call(endpoint: TenantEndpoint) -> None:
    # `test_reconnection` takes 0.3 s; the client leaves at once, seen when the watch starts.
    body = call("test_reconnection")
    exchange = Exchange(body, leave_after=0.0)
    started = time.monotonic()
    await endpoint(scope(body, {"mcp-name": "test_reconnection"}, []), exchange.receive, exchange.send)
    assert time.monotonic() - started < 0.25
    assert exchange.status is None and exchange.chunks == []  # nothing was answered to nobody


@pytest.mark.anyio
async def test_a_long_quiet_call_turns_to_sse_and_pings(endpoint: TenantEndpoint, monkeypatch: Any) -> None:
    monkeypatch.setattr(endpoint_module, "_SSE_PING_INTERVAL", 0.12)  # the SDK's is 15 s
    body = call("test_reconnection")
    exchange = Exchange(body)
    await endpoint(scope(body, {"mcp-name": "test_reconnection"}, []), exchange.receive, exchange.send)
    assert exchange.status == 200
    assert exchange.headers["content-type"] == "text/event-stream"
    assert exchange.chunks[0] == b": ping\r\n\r\n"
    final = json.loads(exchange.text.rsplit("data: ", 1)[1])
    assert final["id"] == 7
    assert final["result"]["content"][0]["text"] == "Reconnection test completed"


# ---------------------------------------------------------------- against the live server


def test_a_quiet_call_answers_json(conformance_url: str) -> None:
    response = modern_post(
        conformance_url, "tools/call", {"name": "test_simple_text"}, **{"Mcp-Name": "test_simple_text"}
    )
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json()["result"]["content"][0]["text"] == "This is a simple text response for testing."


def test_a_call_that_reports_progress_streams_it_then_answers(conformance_url: str) -> None:
    meta = {**META, "progressToken": "p-1"}
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "tools/call",
            "params": {"name": "test_tool_with_progress", "_meta": meta},
        }
    ).encode()
    with httpx2.stream(
        "POST",
        conformance_url,
        content=body,
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call",
            "Mcp-Name": "test_tool_with_progress",
        },
        timeout=10,
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        events = [json.loads(line[len("data: ") :]) for line in response.iter_lines() if line.startswith("data: ")]
    progress = [e["params"] for e in events if e.get("method") == "notifications/progress"]
    assert [(p["progressToken"], p["progress"]) for p in progress] == [("p-1", 0), ("p-1", 50), ("p-1", 100)]
    assert events[-1]["id"] == 9
    assert events[-1]["result"]["content"][0]["text"] == "Progress tool completed"


def test_no_token_is_401_with_where_to_get_one(live: LiveServer, cast: Cast) -> None:
    response = modern_post(live.mcp_url(), "tools/list")
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="{live.url}/.well-known/oauth-protected-resource/t/demo/mcp"' in challenge
    wrong = raw_post(live.mcp_url(), LIST, "not-a-token", **{"Mcp-Method": "tools/list"})
    assert wrong.status_code == 401
    assert 'error="invalid_token"' in wrong.headers["www-authenticate"]


# Where our entry deliberately differs from the SDK's app: an absent routing header is "missing"
# in ours (the SDK's says "does not match"); same status and code.
MISSING = {
    "mcp-method": "mcp-method header is missing (it repeats the request body's method)",
    "mcp-name": "mcp-name header is missing (it repeats the request body's name)",
}


@pytest.mark.anyio
@pytest.mark.parametrize("header", list(MISSING))
async def test_a_missing_routing_header_is_called_missing_not_mismatched(endpoint: TenantEndpoint, header: str) -> None:
    body = call("test_simple_text")
    full = scope(body, {}, [])
    without = {**full, "headers": [(k, v) for k, v in full["headers"] if k.decode() != header]}
    ours, sdks = Exchange(body), Exchange(body)
    await endpoint(without, ours.receive, ours.send)
    await endpoint.sdk_app(dict(without), sdks.receive, sdks.send)
    assert ours.answer() == (
        400,
        "application/json",
        {"jsonrpc": "2.0", "id": 7, "error": {"code": -32020, "message": MISSING[header]}},
    )
    assert sdks.answer()[2]["error"]["message"] == MISSING[header].split(" is missing")[0] + (
        " does not match the request body's method"
        if header == "mcp-method"
        else " does not match the request body's 'name' parameter"
    )
