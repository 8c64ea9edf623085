"""Spec methods every tenant server answers that no toolset can provide.

`MCPServer` (SDK 2.3.0) serves tools, prompts and resources from what toolsets register, but a
few protocol methods belong to the server as a whole:

- ``completion/complete`` (both generations): one handler per server. No toolset offers
  completions yet, so every argument completes to no suggestions, which the spec allows; the
  capability is what clients (and the conformance suite) look for.
- ``resources/subscribe``, ``resources/unsubscribe`` and ``logging/setLevel`` (2025-11-25
  sessions only; the SDK answers -32601/404 for them on the 2026-07-28 wire by itself).
  Resources served here never change, so a subscription has nothing to announce; and the SDK
  delivers every log level on a 2025-11-25 session (`mcp/server/connection.py`), with no
  outbound seam to filter on, so the requested level is accepted and not applied.
"""

from __future__ import annotations

from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp_types import (
    CompletionArgument,
    CompletionContext,
    EmptyResult,
    PromptReference,
    ResourceTemplateReference,
    SetLevelRequestParams,
    SubscribeRequestParams,
    UnsubscribeRequestParams,
)

from tools_app import sdk


async def _no_completions(
    ref: PromptReference | ResourceTemplateReference, argument: CompletionArgument, context: CompletionContext | None
) -> None:
    return None  # the SDK answers an empty `values` list


async def _accept(ctx: ServerRequestContext[Any, Any], params: Any) -> EmptyResult:
    return EmptyResult()


def install(server: MCPServer[Any]) -> None:
    server.completion()(_no_completions)
    # MCPServer has no public API for these legacy methods; the SDK's own docs (MethodBinding in
    # `mcp/server/extension.py`) point at the low-level `Server.add_request_handler`, which is
    # public but reachable only through a private attribute (see `tools_app.sdk.lowlevel_server`).
    lowlevel = sdk.lowlevel_server(server)
    lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, _accept)
    lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, _accept)
    lowlevel.add_request_handler("logging/setLevel", SetLevelRequestParams, _accept)
