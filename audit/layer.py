"""The audit layer: every ``tools/call`` a tenant's server handles is recorded (`audit.writer`).

`AuditToolCalls` stands first in the tenant server's layers (`mcp_server.compose.layers`), in
the log context layer's place: it sets the call's log context, so its row carries the request id
the call's log lines carry, and it sees every outcome: a result, a tool error, a protocol error
(an `MCPError` from any layer or the tool, with its code; anything else as the internal error it is
answered with), input required, a task created. Each retry round is a call of its own, so a row
of its own. A task's run passes the same layer outside any request (`mcp_tasks.execution`: its
tool layers), recorded with the task's principal and its id, in a log context of its own.

Two refusals happen before the SDK sees the call, and are recorded through this layer too:

- by scope: both entries (`mcp_server.endpoint`, `mcp_server.sessions`) answer 403 before the
  SDK and call `AuditToolCalls.refused` with ``REFUSED_SCOPE``;
- by role: the roles layer inside the boundary (`mcpsite.roles.OnlyTheRolesTools`) answers a tool
  outside the member's role as unknown; the composer hands it `refused_by_role`, which it calls
  while the call is in flight, and this layer records ``REFUSED_ROLE`` instead of what was answered.

Argument values never leave the request here: the writer keeps a digest, and in full only the
arguments the tool names in ``audit_args``.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Iterable, Mapping
from time import perf_counter, time
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR
from starlette.types import Scope

from audit.conf import audit_settings
from audit.models import ToolCall
from audit.writer import AuditWriter, Call, writer
from mcpsite import logs
from mcpsite.toolcall_metrics import tool_outcome
from tools_app.principal import Principal
from tools_app.toolsets import Toolset

Outcome = ToolCall.Outcome
_new_call = tuple.__new__
# An enum member read off its class is a descriptor lookup each time (~0.06 µs); read once.
_PROTOCOL_ERROR: str = Outcome.PROTOCOL_ERROR

_OUTCOMES = {
    "ok": Outcome.RESULT,
    "tool_error": Outcome.TOOL_ERROR,
    "input_required": Outcome.INPUT_REQUIRED,
    "task": Outcome.TASK,
}

# Set by an inner layer while a call is in flight to say how it was really refused (see the
# module docstring); None for every call nobody marks.
_noted: contextvars.ContextVar[str | None] = contextvars.ContextVar("mcpsite_audit_noted", default=None)


def refused_by_role() -> None:
    """The hook for the roles layer: the call in flight was refused because of the member's role
    (answered as an unknown tool); its audit row says ``refused_role``."""
    _noted.set(Outcome.REFUSED_ROLE)


class AuditToolCalls(logs.LogContextLayer):
    """Server middleware recording each ``tools/call`` of one tenant's server (module docstring).

    It stands first, in the log context layer's place, and is one: it sets the call's log context
    and records the call in one frame, from the one principal, tool name and request id (a layer
    of its own cost a plain call 1 % of its rate per CPU-second, bench/audit.py)."""

    def __init__(self, *, tenant_id: int, safe_args: Mapping[str, tuple[str, ...]], writer: AuditWriter) -> None:
        self.tenant_id = tenant_id
        self.safe_args = dict(safe_args)
        self.writer = writer

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != "tools/call":
            return await super().__call__(ctx, call_next)
        principal = logs.principal_of(ctx)
        context = logs.call_context(ctx, principal)
        entered = logs.enter(context)
        at, started = time(), perf_counter()
        outcome: str = _PROTOCOL_ERROR
        code: int | None = INTERNAL_ERROR  # what anything but an MCPError is answered with
        try:
            result = await call_next(ctx)
            outcome, code = _OUTCOMES[tool_outcome(result)], None
            return result
        except MCPError as exc:
            code = exc.error.code
            raise
        except ToolError as exc:
            # Raised only where the SDK's handler does not answer it (a task's run): the tool's own
            # error, answered as a tool error; anything unexpected stays an internal error.
            if not isinstance(exc, UnexpectedToolError):
                outcome, code = Outcome.TOOL_ERROR, None
            raise
        except BaseException as exc:
            if not isinstance(exc, Exception):  # cancelled (the client left): nothing was answered
                code = None
            raise
        finally:
            logs.leave(entered)
            noted = _noted.get()
            if noted is not None:  # an inner layer said how it refused this call; the next is unmarked
                outcome = noted
                _noted.set(None)
            # What the row needs, as it is (`Call`: the writer thread works out the rest).
            params = ctx.params or {}
            tool = context.tool if context.tool is not None else _tool_name(params)
            request = ctx.request
            self.writer.record(
                # A Call as `tuple.__new__` builds it: the NamedTuple's own constructor is a Python
                # function call (0.66 µs against 0.17 here).
                _new_call(
                    Call,
                    (
                        at,
                        self.tenant_id,
                        principal,
                        tool,
                        params.get("arguments"),
                        self.safe_args.get(tool, ()),
                        outcome,
                        code,
                        perf_counter() - started,
                        # A task's run has no request: its row names the task instead.
                        (context.request_id or "") if request is not None else "",
                        ctx.protocol_version,
                        "" if request is not None else str(ctx.request_id or ""),
                    ),
                )
            )

    def refused_scope(self, scope: Scope, body: Any, protocol_version: str | None) -> None:
        """Record the ``tools/call`` requests in `body` that an entry refused for the token's scopes."""
        self.refused(scope, body, outcome=Outcome.REFUSED_SCOPE, protocol_version=protocol_version)

    def refused(self, scope: Scope, body: Any, *, outcome: str, protocol_version: str | None) -> None:
        """Record the ``tools/call`` requests in `body` (one JSON-RPC message or a batch) that an
        entry refused before the SDK saw them."""
        user = scope.get("user")
        principal = Principal.of_token(getattr(user, "access_token", None))
        request_id = scope.get(logs.REQUEST_ID) or logs.current().request_id or ""
        at = time()
        for message in body if isinstance(body, list) else [body]:
            if not isinstance(message, dict) or message.get("method") != "tools/call":
                continue
            sent = message.get("params")
            params: dict[str, Any] = sent if isinstance(sent, dict) else {}
            tool = _tool_name(params)
            self.writer.record(
                Call(
                    at=at,
                    tenant_id=self.tenant_id,
                    principal=principal,
                    tool=tool,
                    arguments=params.get("arguments"),
                    safe=self.safe_args.get(tool, ()),
                    outcome=outcome,
                    error_code=None,
                    seconds=0.0,
                    request_id=request_id,
                    protocol_version=protocol_version,
                )
            )


def _tool_name(params: Mapping[str, Any]) -> str:
    name = params.get("name")
    return name[:128] if isinstance(name, str) else json.dumps(name)[:128]


def for_server(*, tenant_id: int, toolsets: Iterable[Toolset]) -> AuditToolCalls | None:
    """The layer recording this tenant server's calls (placed by `mcp_server.compose.layers`), with
    the arguments each of its tools marks safe; None when ``MCPSITE_AUDIT`` is off."""
    if not audit_settings()["ENABLED"]:
        return None
    safe = {tool: names for toolset in toolsets for tool, names in toolset.tool_audit_args().items()}
    return AuditToolCalls(tenant_id=tenant_id, safe_args=safe, writer=writer)
