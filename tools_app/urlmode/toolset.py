"""The toolset whose tools may use URL-mode steps (`UrlModeToolset`)."""

from __future__ import annotations

from typing import Any, cast

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from pydantic import ConfigDict

from tools_app.rounds import RoundMiddleware
from tools_app.sdk import sdk_tool
from tools_app.toolsets import Toolset


class UrlModeToolset(Toolset):
    """A `Toolset` whose tools may use `url_step` resolvers: the server's round layer
    (`tools_app.rounds.RoundMiddleware`) carries their steps at the 2026-07-28 wire, and they
    refuse arguments they do not declare (see `_forbid_extra_arguments`)."""

    def install(self, server: MCPServer[Any], rounds: RoundMiddleware) -> None:
        super().install(server, rounds)
        for name in self.tool_names():
            rounds.allow_url_steps(name)
            tool = sdk_tool(server, name)
            if tool is not None:
                _forbid_extra_arguments(tool)


def _forbid_extra_arguments(tool: Tool) -> None:
    """An undeclared argument is refused, and the input schema says so (``additionalProperties:
    false``). The SDK's argument model ignores extra keys, which made ``{"booking_id": 1, "x": 1}``
    a different call from ``{"booking_id": 1}`` to nothing but our digest: a second charge.
    The SDK reads `fn_metadata.arg_model` on every call, so swapping it here takes effect. Once
    per record: a record is shared by every tenant server serving the toolset (`Toolset.tools`)."""
    loose = tool.fn_metadata.arg_model
    if loose.model_config.get("extra") == "forbid":
        return
    namespace = {"__module__": loose.__module__, "model_config": ConfigDict(extra="forbid")}
    strict = cast("type[ArgModelBase]", type(loose.__name__, (loose,), namespace))
    tool.fn_metadata.arg_model = strict
    tool.parameters = strict.model_json_schema(by_alias=True)
