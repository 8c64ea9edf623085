"""2026-07-28 fixtures for the stateless wire: capabilities, logging opt-in, list_changed hooks."""

from __future__ import annotations

from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp_types import MISSING_REQUIRED_CLIENT_CAPABILITY, CallToolResult, InputRequiredResult

from demo.tools.conformance.shared import declared, form_question, text_result, toolset


@toolset.tool(description="Requires the sampling client capability; rejects with -32021 when undeclared")
def test_missing_capability(ctx: Context) -> CallToolResult:
    if not declared(ctx, "sampling"):
        raise MCPError(
            code=MISSING_REQUIRED_CLIENT_CAPABILITY,
            message="Client did not declare the sampling capability",
            data={"requiredCapabilities": {"sampling": {}}},
        )
    return text_result("sampling capability present")


@toolset.tool(description="Asks for input via InputRequiredResult (never an independent request on the stream)")
def test_streaming_elicitation(ctx: Context) -> CallToolResult | InputRequiredResult:
    if "answer" in (ctx.input_responses or {}):
        return text_result("streaming elicitation complete")
    question = form_question("Please answer", {"answer": {"type": "string"}}, ["answer"])
    return InputRequiredResult(input_requests={"answer": question})


@toolset.tool(description="Attempts to log; nothing may be sent unless the request opted in via _meta logLevel")
async def test_logging_tool(ctx: Context) -> CallToolResult:
    await ctx.log("info", "test_logging_tool ran")
    return text_result("logging tool done")


@toolset.tool(description="Diagnostic hook: emits a tools list_changed notification")
async def test_trigger_tool_change(ctx: Context) -> CallToolResult:
    # MCPServer declares listChanged at 2026-07-28, so the suite needs a way to make one happen.
    await ctx.notify_tools_changed()
    return text_result("tools list changed")


@toolset.tool(description="Diagnostic hook: emits a prompts list_changed notification")
async def test_trigger_prompt_change(ctx: Context) -> CallToolResult:
    await ctx.notify_prompts_changed()
    return text_result("prompts list changed")
