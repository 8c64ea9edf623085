"""A 2026-07-28 success answer is written from the runner's wire dict, not dumped a second time.

The runner already shapes the result for the wire; the SDK's `_write` dumped the `JSONRPCResponse`
around it again in JSON mode. Ours writes the same bytes with `json.dumps`, and anything that is
not plain JSON still goes to the SDK's `_write` (the reference each case is compared with).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp_types import ErrorData, JSONRPCError, JSONRPCResponse

from bench.asgi import Exchange, post_scope
from mcp_server.compose import build_server
from mcp_server.endpoint import TenantEndpoint, _write_answer
from tools_app.sdk import _write
from tools_app.tenant import TenantInfo

PATH = "/t/dumped-once/mcp"
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "test_simple_text", "arguments": {}, "_meta": META},
    }
).encode()
HEADERS = [
    ("host", "127.0.0.1:8000"),
    ("content-type", "application/json"),
    ("accept", "application/json, text/event-stream"),
    ("mcp-protocol-version", "2026-07-28"),
    ("mcp-method", "tools/call"),
    ("mcp-name", "test_simple_text"),
    ("content-length", str(len(BODY))),
]


@pytest.fixture
async def endpoint() -> AsyncIterator[TenantEndpoint]:
    info = TenantInfo(
        id=1, slug="dumped-once", name="Dumped once", public=True, toolsets=("conformance",), version="v1"
    )
    server, app = build_server(info)
    assert isinstance(app, TenantEndpoint)
    async with server.session_manager.run():
        yield app


@pytest.mark.anyio
async def test_a_success_answer_is_not_dumped_again_and_is_the_sdks_bytes(
    endpoint: TenantEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    sdks = await Exchange(BODY).play(endpoint.sdk_app, post_scope(PATH, HEADERS))
    dumps: list[Any] = []
    real_dump = JSONRPCResponse.model_dump

    def counting_dump(self: JSONRPCResponse, **kwargs: Any) -> dict[str, Any]:
        dumps.append(self)
        return real_dump(self, **kwargs)

    # Counts calls into the SDK's (third-party) model; nothing of ours is replaced.
    monkeypatch.setattr(JSONRPCResponse, "model_dump", counting_dump)
    ours = await Exchange(BODY).play(endpoint, post_scope(PATH, HEADERS))
    assert dumps == []
    assert (ours.status, ours.headers["content-type"], ours.text) == (200, "application/json", sdks.text)
    assert ours.headers["content-length"] == str(len(sdks.text.encode()))
    answer = json.loads(ours.text)
    assert (answer["jsonrpc"], answer["id"], answer["result"]["isError"]) == ("2.0", 7, False)
    assert answer["result"]["content"] == [{"type": "text", "text": "This is a simple text response for testing."}]


async def written(writer: Any, msg: JSONRPCResponse | JSONRPCError) -> tuple[int | None, dict[str, str], str]:
    exchange = Exchange(b"")
    await writer(msg, post_scope(PATH, []), exchange.receive, exchange.send)
    return exchange.status, exchange.headers, exchange.text


RESULTS: dict[str, dict[str, Any]] = {
    "nested nulls are kept": {"content": [{"type": "text", "text": "hi", "annotations": None}], "x": {"a": None}},
    "non-ASCII is escaped alike": {"content": [{"type": "text", "text": "héllo ☃ \u2028"}]},
    "numbers and booleans": {"n": 1, "f": 1.5, "big": 10**20, "t": True, "l": [1, "2", None]},
    "not JSON: a datetime": {"when": datetime.datetime(2026, 12, 3, 18, 40)},
    "not JSON: bytes": {"raw": b"abc"},
    "not JSON: NaN": {"v": float("nan"), "inf": float("inf")},
    "a tuple": {"k": (1, 2)},
}


@pytest.mark.anyio
@pytest.mark.parametrize("case", list(RESULTS))
async def test_every_success_is_written_as_the_sdk_writes_it(case: str) -> None:
    msg = JSONRPCResponse(jsonrpc="2.0", id="r-1", result=RESULTS[case])
    assert await written(_write_answer, msg) == await written(_write, msg)


@pytest.mark.anyio
@pytest.mark.parametrize("request_id", [4, None])
async def test_an_error_is_written_by_the_sdk_unchanged(request_id: int | None) -> None:
    msg = JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=-32602, message="Invalid params"))
    status, headers, text = await written(_write_answer, msg)
    assert (status, headers, text) == await written(_write, msg)
    assert status == 400
    assert json.loads(text) == {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": -32602, "message": "Invalid params"},
    }
