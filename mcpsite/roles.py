"""Member roles at the wire: a tool outside the caller's role does not exist for them.

A member's role (`mcpsite.models.Role`) names the tools they may call at a tenant; a member with
none may call every tool, and so may anyone on a public tenant (no token, no role). The tools a
role allows ride the verified token (`mcpsite.auth.MemberToken.tools`, from the token cache), so
asking costs an attribute read per message, no query.

`OnlyTheRolesTools`, one of the tenant server's layers (`mcp_server.compose.layers`), leaves such a
tool out of ``tools/list`` and answers a ``tools/call`` of it exactly as the SDK answers a tool it
does not have, in both generations and whether or not the call asks for a task. Every check made
before that layer sees the call treats it as unknown too (`outside_role`): the scope check asks
nothing of it (`mcpsite.scopes.scopes_missing`), nor does the 2026-07-28 entry's ``Mcp-Param-*``
check (`mcp_server.endpoint`), so no answer tells a hidden tool from a name nobody serves.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp_types import CallToolRequestParams, CallToolResult, ListToolsResult, TextContent
from pydantic import BaseModel, ValidationError
from starlette.types import Scope

from mcpsite.auth import MemberToken

logger = logging.getLogger(__name__)


def tools_allowed(scope: Scope | None) -> frozenset[str] | None:
    """The tools the request's caller may call at this tenant; None: every tool."""
    user = scope.get("user") if scope is not None else None
    token = getattr(user, "access_token", None)
    return token.tools if isinstance(token, MemberToken) else None


def outside_role(allowed: frozenset[str] | None, name: object) -> bool:
    """Whether a call of tool `name` is to be answered as an unknown tool (a name that is no
    string is the SDK's to refuse, as it refuses it for anyone)."""
    return allowed is not None and isinstance(name, str) and name not in allowed


def unknown_tool(name: str) -> CallToolResult:
    """What the SDK answers a call of a tool it does not have (`MCPServer._handle_call_tool` on the
    tool manager's ``ToolError``); `tests/mcp/test_a_tool_outside_the_members_role_is_unlisted_and_unknown.py`
    compares the two on the wire."""
    return CallToolResult(content=[TextContent(type="text", text=f"Unknown tool: {name}")], is_error=True)


class OnlyTheRolesTools:
    """A server middleware: the caller's role decides which tools exist for them. `on_refused` is
    told of each call it answers as unknown, while the call is in flight (the audit log's hook,
    handed in by the composer)."""

    def __init__(self, *, on_refused: Callable[[], None] | None = None) -> None:
        self.on_refused = on_refused

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method not in ("tools/list", "tools/call"):
            return await call_next(ctx)
        allowed = tools_allowed(ctx.request.scope if ctx.request is not None else None)
        if allowed is None:
            return await call_next(ctx)
        if ctx.method == "tools/call":
            name = (ctx.params or {}).get("name")
            if not outside_role(allowed, name):
                return await call_next(ctx)
            try:
                CallToolRequestParams.model_validate(ctx.params)
            except ValidationError:
                return await call_next(ctx)  # malformed: the SDK refuses it as it would anyone's
            # Said to the operator only (the caller is told nothing more than of an unknown name).
            logger.info("tool %r is outside the caller's role; answered as an unknown tool", name)
            if self.on_refused is not None:
                self.on_refused()
            return unknown_tool(str(name))
        return _only(allowed, await call_next(ctx))


def _only(allowed: frozenset[str], listed: HandlerResult) -> HandlerResult:
    if isinstance(listed, ListToolsResult):
        return listed.model_copy(update={"tools": [tool for tool in listed.tools if tool.name in allowed]})
    if isinstance(listed, BaseModel):  # another model: the SDK changed its answer's type
        raise TypeError(f"tools/list answered {type(listed).__name__}, not ListToolsResult")
    answer = dict(listed or {})
    answer["tools"] = [tool for tool in answer.get("tools", []) if tool.get("name") in allowed]
    return answer
