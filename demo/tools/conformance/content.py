"""Content fixtures, the same in both protocol generations."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated

from mcp.server.mcpserver import Context
from mcp_types import AudioContent, CallToolResult, EmbeddedResource, ImageContent, TextContent, TextResourceContents
from pydantic import Field

from demo.tools.conformance.shared import PNG_B64, WAV_B64, text_result, toolset


@toolset.tool(description="Returns simple text content")
def test_simple_text() -> CallToolResult:
    return text_result("This is a simple text response for testing.")


@toolset.tool(description="Returns image content (1x1 red PNG)")
def test_image_content() -> CallToolResult:
    return CallToolResult(content=[ImageContent(data=PNG_B64, mime_type="image/png")])


@toolset.tool(description="Returns audio content (audio/wav)")
def test_audio_content() -> CallToolResult:
    return CallToolResult(content=[AudioContent(data=WAV_B64, mime_type="audio/wav")])


@toolset.tool(description="Returns an embedded text resource")
def test_embedded_resource() -> CallToolResult:
    resource = TextResourceContents(
        uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."
    )
    return CallToolResult(content=[EmbeddedResource(resource=resource)])


@toolset.tool(description="Returns text, image and embedded resource content")
def test_multiple_content_types() -> CallToolResult:
    resource = TextResourceContents(
        uri="test://mixed-content-resource",
        mime_type="application/json",
        text=json.dumps({"test": "data", "value": 123}, separators=(",", ":")),
    )
    return CallToolResult(
        content=[
            TextContent(text="Multiple content types test:"),
            ImageContent(data=PNG_B64, mime_type="image/png"),
            EmbeddedResource(resource=resource),
        ]
    )


@toolset.tool(description="Always returns an error result (isError: true)")
def test_error_handling() -> CallToolResult:
    return CallToolResult(
        content=[TextContent(text="This tool intentionally returns an error for testing")], is_error=True
    )


@toolset.tool(description="Reports progress 0/100, 50/100, 100/100")
async def test_tool_with_progress(ctx: Context) -> CallToolResult:
    for step, progress in enumerate((0, 50, 100)):
        if step:
            await asyncio.sleep(0.05)  # the suite checks the notifications arrive one by one, in order
        await ctx.report_progress(progress, 100)
    return text_result("Progress tool completed")


@toolset.tool(description="Sends three info log notifications while running (2025-11-25)")
async def test_tool_with_logging(ctx: Context) -> CallToolResult:
    # `ctx.log` is deprecated at 2026-07-28 (SEP-2577) and warns; this fixture exists to exercise it.
    for step, message in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
        if step:
            await asyncio.sleep(0.05)
        await ctx.log("info", message)
    return text_result("Logging tool completed")


@toolset.tool(description="Closes the POST SSE stream mid-call; the result arrives after the client reconnects")
async def test_reconnection(ctx: Context) -> CallToolResult:
    await asyncio.sleep(0.1)
    await ctx.close_sse_stream()  # a no-op unless the transport has an event store to resume from
    await asyncio.sleep(0.2)
    return text_result("Reconnection test completed")


@toolset.tool(description="Echoes a parameter that is mirrored into the Mcp-Param-Region HTTP header")
def test_custom_header(
    region: Annotated[
        str, Field(description="Region (mirrored as Mcp-Param-Region)", json_schema_extra={"x-mcp-header": "Region"})
    ],
) -> CallToolResult:
    return text_result(f"region={region}")
