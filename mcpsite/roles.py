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
from collections.abc import Callable, Mapping
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp_types import CallToolRequestParams, CallToolResult, ListResourcesResult, ListToolsResult, TextContent
from pydantic import BaseModel, ValidationError
from starlette.types import Scope

from mcpsite.auth import MemberToken
from tools_app.mcp_apps import unknown_resource

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
    """A server middleware: the caller's role decides which tools exist for them, and which MCP
    Apps views: a ``ui://`` view that no tool the role allows shows is left out of
    ``resources/list`` and read as an unknown resource (`views`: each view's address and the
    tools that show it, `Toolset.views_shown_by`; a role allowing one of them also allows the
    view's app-only tools, `mcpsite.tenancy.with_their_views_tools`). `on_refused` is told of
    each call it answers as unknown, while the call is in flight (the audit log's hook, handed in
    by the composer)."""

    METHODS = frozenset({"tools/list", "tools/call", "resources/list", "resources/read"})

    def __init__(
        self, *, views: Mapping[str, frozenset[str]] | None = None, on_refused: Callable[[], None] | None = None
    ) -> None:
        self.views = dict(views or {})
        self.on_refused = on_refused

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method not in self.METHODS:
            return await call_next(ctx)
        allowed = tools_allowed(ctx.request.scope if ctx.request is not None else None)
        if allowed is None:
            return await call_next(ctx)
        if ctx.method == "resources/read":
            uri = (ctx.params or {}).get("uri")
            if isinstance(uri, str) and self._hidden(allowed, uri):
                raise unknown_resource(uri)
            return await call_next(ctx)
        if ctx.method == "resources/list":
            return _listed(await call_next(ctx), "resources", "uri", lambda uri: not self._hidden(allowed, uri))
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
        return _listed(await call_next(ctx), "tools", "name", allowed.__contains__)

    def _hidden(self, allowed: frozenset[str], uri: str) -> bool:
        tools = self.views.get(uri)
        return tools is not None and tools.isdisjoint(allowed)


_LISTS: dict[str, type[BaseModel]] = {"tools": ListToolsResult, "resources": ListResourcesResult}


def _listed(listed: HandlerResult, key: str, field: str, keep: Callable[[Any], bool]) -> HandlerResult:
    """A list answer (`key`: ``tools`` or ``resources``) with only the entries whose `field` `keep` keeps."""
    if isinstance(listed, _LISTS[key]):
        return listed.model_copy(update={key: [item for item in getattr(listed, key) if keep(getattr(item, field))]})
    if isinstance(listed, BaseModel):  # another model: the SDK changed its answer's type
        raise TypeError(f"{key}/list answered {type(listed).__name__}, not {_LISTS[key].__name__}")
    answer = dict(listed or {})
    answer[key] = [item for item in answer.get(key, []) if keep(item.get(field))]
    return answer
