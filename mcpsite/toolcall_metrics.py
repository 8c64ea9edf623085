"""Counting what the SDK handles: requests by generation and outcome, tool calls by tool and
outcome with their duration, input-required rounds, and requestState refusals by reason.

`install(server)` puts `CountToolCalls` first in the server's middleware list (outermost, ahead of
the SDK's built-ins and `remember_wire_state`), so it sees every request the tenant's server
handles, a refused requestState included, and times the whole of it. It is one of our request
layers; the composition root places it (issue 29: a hook in `mcp_server.registry.build_server`).

The SDK tells why it refused a requestState only in its log record (``_reject``: "requestState
rejected on %s: %s", the method and the reason; the wire error is frozen on purpose), so the
refusals are counted by a logging filter on its logger that reads the record's arguments, not its
text. It counts while that logger logs at WARNING (the default INFO does). Our own refusal (a
replayed state, `mcpsite.keyring.replay`) is counted where it is made.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp_types.methods import is_input_required
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from mcpsite import metrics
from tools_app import sdk

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
SDK_REFUSAL_LOGGER = "mcp.server.request_state"
SDK_REFUSAL_MESSAGE = "requestState rejected on %s: %s"


def generation(version: str | None) -> str:
    """The protocol generation a request belongs to: a handshake version (or none yet: before
    ``initialize``) is the 2025-11-25 generation, anything else the 2026-07-28 one."""
    return LEGACY if version is None or version in HANDSHAKE_PROTOCOL_VERSIONS else MODERN


def tool_outcome(result: HandlerResult) -> str:
    """How a tool call the SDK answered ended: input_required, task, tool_error or ok (also read
    by the audit log, `audit.layer`)."""
    # The wire shape every call path answers with (a dict: checked first, as `isinstance` against
    # the Mapping ABC costs several times the lookups): one lookup each.
    if type(result) is dict or isinstance(result, Mapping):
        kind, failed = result.get("resultType"), result.get("isError") is True
        if kind == "input_required":
            return "input_required"
    elif is_input_required(result):  # a typed InputRequiredResult
        return "input_required"
    else:
        kind, failed = getattr(result, "result_type", None), getattr(result, "is_error", False) is True
    if kind == "task":
        return "task"
    return "tool_error" if failed else "ok"


class CountToolCalls:
    """Server middleware counting every request of one tenant's server (see the module docstring).

    A tool's name is a label only when this server has that tool: a client may send any name.
    The counters' children are kept per label tuple, so a call costs a dict lookup per metric
    rather than prometheus-client's locked ``labels()``.
    """

    def __init__(self, server: MCPServer[Any]) -> None:
        self.server = server
        self.per_tenant = metrics.per_tenant()
        self._children: dict[tuple[Any, ...], Any] = {}

    def _child(self, metric: Any, *labels: str) -> Any:
        key = (metric, *labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*labels)
        return child

    def _tool(self, params: Mapping[str, Any] | None) -> str:
        name = params.get("name") if params else None
        if isinstance(name, str) and sdk.sdk_tool(self.server, name) is not None:
            return name
        return "unknown"

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.request_id is None:  # a notification: nothing is answered
            return await call_next(ctx)
        tenant = (ctx.lifespan_context.slug,) if self.per_tenant and ctx.lifespan_context is not None else ()
        is_call = ctx.method == "tools/call"
        started = time.perf_counter()
        outcome = called = "error"
        try:
            result = await call_next(ctx)
            called = tool_outcome(result)  # any method's result: "input_required" or "ok" but for a call
            if called == "input_required":
                outcome = called
                self._child(metrics.INPUT_REQUIRED_ROUNDS, ctx.method, *tenant).inc()
            else:
                outcome = "ok"
            return result
        finally:
            self._child(metrics.MCP_REQUESTS, generation(ctx.protocol_version), outcome, *tenant).inc()
            if is_call:
                tool = self._tool(ctx.params)
                self._child(metrics.TOOL_CALL_SECONDS, tool, *tenant).observe(time.perf_counter() - started)
                self._child(metrics.TOOL_CALLS, tool, called, *tenant).inc()


class CountSdkRefusals(logging.Filter):
    """Counts the SDK's requestState refusals from its log record's arguments (method, reason)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg == SDK_REFUSAL_MESSAGE and isinstance(record.args, tuple) and len(record.args) == 2:
            metrics.count_refusal(str(record.args[1]))
        return True


def _count_sdk_refusals() -> None:
    refusals = logging.getLogger(SDK_REFUSAL_LOGGER)
    if not any(isinstance(f, CountSdkRefusals) for f in refusals.filters):
        refusals.addFilter(CountSdkRefusals())


def for_server(server: MCPServer[Any]) -> CountToolCalls | None:
    """The layer counting this server's requests (placed outermost by `mcp_server.compose.layers`);
    None when ``MCPSITE_METRICS`` is off."""
    if not metrics.enabled():
        return None
    _count_sdk_refusals()
    return CountToolCalls(server)
