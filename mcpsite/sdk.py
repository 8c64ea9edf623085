"""The one door to the `mcp` SDK's insides: every private name we use is imported or read here.

Each entry says why we need it and which public API would replace it; an SDK upgrade that renames
one changes this file only (the SDK is pinned in ``requirements.lock``). Everything else imports
the SDK's public modules, or these names from here.

Subclasses that override private methods stay beside the behaviour they add, and are listed here:

- `mcpsite.serving.sessions.CappedSessionManager` (a `StreamableHTTPSessionManager`) overrides
  ``_handle_stateful_request`` (to answer a refused admission with 429), ``_admit_session`` (the
  per-principal session cap, counted under the SDK's session-creation lock) and
  ``_discard_session`` (releasing the count). A public admission hook would replace all three.

Covered by a public parameter instead (no private touch): the replay guard is passed as
``MCPServer(middleware=[...])``. Not covered: `remember_wire_state` must run outside the SDK's
built-ins, which ``middleware=`` cannot place, so it is inserted into the public ``server.middleware``
list; and the 2026-07-28 entry reads the lifespan's state from the manager (see `lifespan_state`).
"""

from __future__ import annotations

from typing import Any

from mcp.server._otel import OpenTelemetryMiddleware

# The 2026-07-28 entry (`mcpsite.serving.endpoint`) runs the SDK's own inbound ladder, answers and SSE framing
# without the SDK's per-request task group; the SDK has no public seam for them, so they come from
# its private module. A public "serve one stateless exchange into this response" API would replace
# them; `tests/mcp/test_modern_entry.py` requires both entries to answer alike.
from mcp.server._streamable_http_modern import (
    _INVALID_BODY,
    _SSE_HEADERS,
    _SSE_PING_INTERVAL,
    _acknowledge_notification,
    _is_notification_shaped,
    _mcp_param_rejection,
    _SingleExchangeDispatchContext,
    _sse_event,
    _to_jsonrpc_response,
    _write,
    _write_rejection,
)
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool

# `CappedSessionManager` answers a refused admission the way the SDK answers its own refusals
# (same JSON-RPC error body and headers); the SDK does not export its helper.
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.streamable_http_manager import _error_response as error_response

__all__ = [
    "_INVALID_BODY",
    "_SSE_HEADERS",
    "_SSE_PING_INTERVAL",
    "OpenTelemetryMiddleware",
    "_SingleExchangeDispatchContext",
    "_acknowledge_notification",
    "_is_notification_shaped",
    "_mcp_param_rejection",
    "_sse_event",
    "_to_jsonrpc_response",
    "_write",
    "_write_rejection",
    "drop_otel_spans",
    "error_response",
    "lifespan_state",
    "lowlevel_server",
    "sdk_tool",
]


def drop_otel_spans(server: MCPServer[Any]) -> None:
    """Remove the SDK's OpenTelemetry middleware (a span per message, a no-op without an exporter
    that still costs every request). The SDK documents dropping it from ``server.middleware`` as the
    opt-out but does not re-export the class (it lives in ``mcp.server._otel``); a public
    ``MCPServer(telemetry=False)`` would replace this."""
    server.middleware[:] = [m for m in server.middleware if not isinstance(m, OpenTelemetryMiddleware)]


def lowlevel_server(server: MCPServer[Any]) -> Server[Any]:
    """The low-level `Server` under an `MCPServer`: its public ``add_request_handler`` is how the SDK's
    docs (MethodBinding in ``mcp/server/extension.py``) say to serve methods `MCPServer` has no API for
    (``resources/subscribe``, ``logging/setLevel``), yet it is reachable only as ``_lowlevel_server``.
    A public ``MCPServer.add_request_handler`` would replace this."""
    return server._lowlevel_server


def sdk_tool(server: MCPServer[Any], name: str) -> Tool | None:
    """The SDK's `Tool` record (argument model, input schema) for a registered tool: the URL-mode
    steps validate answers with it. `MCPServer` keeps them in ``_tool_manager`` with no public
    accessor; a public ``MCPServer.get_tool(name)`` would replace this."""
    return server._tool_manager.get_tool(name)


def lifespan_state(manager: StreamableHTTPSessionManager) -> Any:
    """What the server's lifespan yielded (the tenant's `TenantInfo`), ``None`` while the manager is not
    running: the 2026-07-28 entry hands it to each handler as the SDK's own app does. The manager keeps
    it as ``_lifespan_state``; a public read-only property would replace this. (Passing the
    `TenantInfo` to the entry directly would differ while the manager is not running, so it stays.)"""
    return manager._lifespan_state
