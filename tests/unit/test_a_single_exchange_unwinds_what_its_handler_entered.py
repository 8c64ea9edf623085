"""Our single-exchange `serve_one` (`tools_app.sdk.serve_one`, used by the 2026-07-28 entry) skips
the SDK's shielded unwind of the request's connection only when nothing entered its exit stack
(~15 µs of CPU per request otherwise): whatever a handler does enter is still unwound before the
exchange answers, and every answer is the SDK's `serve_one`'s."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest
from mcp.server.connection import Connection
from mcp.server.mcpserver import MCPServer
from mcp.server.runner import ServerRunner
from mcp.server.runner import serve_one as sdk_serve_one
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext

from tools_app import sdk

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def server(unwound: list[str], connection: Connection) -> MCPServer[Any]:
    app: MCPServer[Any] = MCPServer("unwind")

    @app.tool()
    async def enters() -> str:
        """Enters a clean-up into its request's connection's exit stack (the tool's `Context` does
        not expose the connection, so the test hands it the one it serves the exchange with)."""
        connection.exit_stack.callback(unwound.append, "closed")
        return "entered"

    @app.tool()
    async def plain() -> str:
        """Enters nothing."""
        return "plain"

    return app


def connection() -> Connection:
    return Connection.from_envelope("2026-07-28", None, {})


async def call(serve: Any, app: MCPServer[Any], name: str, connection: Connection) -> dict[str, Any]:
    dctx = sdk._SingleExchangeDispatchContext(
        transport=TransportContext(kind="streamable-http", can_send_request=False, headers={}),
        request_id=1,
        message_metadata=ServerMessageMetadata(),
    )
    result: dict[str, Any] = await serve(
        sdk.lowlevel_server(app),
        dctx,
        "tools/call",
        {"name": name, "arguments": {}, "_meta": META},
        connection=connection,
        lifespan_state=None,
    )
    return result


@pytest.mark.anyio
async def test_a_single_exchange_unwinds_what_its_handler_entered() -> None:
    unwound: list[str] = []
    exchange = connection()
    result = await call(sdk.serve_one, server(unwound, exchange), "enters", exchange)
    assert result["content"] == [{"type": "text", "text": "entered"}]
    assert unwound == ["closed"]


@pytest.mark.anyio
@pytest.mark.parametrize("tool", ["enters", "plain", "missing"])
async def test_a_single_exchange_answers_as_the_sdks_does(tool: str) -> None:
    answers = []
    for serve in (sdk.serve_one, sdk_serve_one):
        unwound: list[str] = []
        exchange = connection()
        answers.append((await call(serve, server(unwound, exchange), tool, exchange), unwound))
    assert answers[0] == answers[1]


def garbage_runners_after(serve: Any, tool: str) -> list[ServerRunner[Any]]:
    """The `ServerRunner`s the garbage collector finds unreachable after one exchange: what
    reference counting alone did not free."""
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        exchange = connection()
        asyncio.run(call(serve, server([], exchange), tool, exchange))
        del exchange
        gc.collect()
        return [found for found in gc.garbage if isinstance(found, ServerRunner)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


@pytest.mark.parametrize("tool", ["plain", "missing"])
def test_a_single_exchange_leaves_nothing_for_the_garbage_collector(tool: str) -> None:
    """Our `serve_one` frees its runner, and the request's connection with it, as soon as the
    exchange answers. The SDK's (pinned, so an SDK that stops doing it says so) caches the runner's
    own bound method on it, a cycle only the collector frees."""
    assert garbage_runners_after(sdk.serve_one, tool) == []
    assert len(garbage_runners_after(sdk_serve_one, tool)) == 1
