"""Fixtures for the Tasks extension (SEP-2663, served by `mcp_tasks`): each runs as a durable task
for a client that declared io.modelcontextprotocol/tasks."""

from __future__ import annotations

import asyncio
from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.resolve import Resolve
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, CallToolResult, InputRequiredResult, TextContent
from pydantic import BaseModel, Field

from demo.tools.conformance.shared import accepted, form_question, text_result, toolset
from tools_app.toolsets import Elicit

# The public conformance tenant serves anyone: a sleep a caller sets is bounded (the suite's
# longest is 60 s).
MAX_SLOW_SECONDS = 300


@toolset.tool(description="Sync only: says hello")
def greet(name: str) -> CallToolResult:
    return text_result(f"Hello, {name}!")


@toolset.tool(task="optional", description="Task-supporting: sleeps `seconds`, then answers")
async def slow_compute(
    seconds: Annotated[float, Field(ge=0, le=MAX_SLOW_SECONDS, description="How long to sleep")] = 1.0, label: str = ""
) -> CallToolResult:
    await asyncio.sleep(seconds)
    return text_result(f"Computed {label or 'result'} after {seconds:g}s")


@toolset.tool(task="required", description="Task-required: reports a tool execution error after about a second")
async def failing_job() -> CallToolResult:
    await asyncio.sleep(1)
    return CallToolResult(content=[TextContent(text="failing_job failed, as it always does")], is_error=True)


@toolset.tool(task="optional", description="Task-supporting: fails with a protocol-level error")
async def protocol_error_job() -> CallToolResult:
    raise MCPError(code=INTERNAL_ERROR, message="protocol_error_job broke, as it always does")


@toolset.tool(task="optional", description="Task-supporting: asks to confirm, then deletes (nothing, really)")
def confirm_delete(filename: str, ctx: Context) -> CallToolResult | InputRequiredResult:
    content = accepted((ctx.input_responses or {}).get("confirm"))
    if content is not None:
        return text_result(f"Deleted {filename}" if content.get("confirm") else f"Kept {filename}")
    question = form_question(f"Delete {filename}?", {"confirm": {"type": "boolean"}}, ["confirm"])
    return InputRequiredResult(input_requests={"confirm": question})


@toolset.tool(task="optional", description="Task-supporting: asks two questions at once")
def multi_input(ctx: Context) -> CallToolResult | InputRequiredResult:
    answers = {key: accepted(value) for key, value in (ctx.input_responses or {}).items()}
    if answers.get("first") is not None and answers.get("second") is not None:
        return text_result(f"Both answered: {answers['first']} and {answers['second']}")
    properties = {"name": {"type": "string"}, "confirm": {"type": "boolean"}}
    return InputRequiredResult(
        input_requests={
            "first": form_question("First question", properties, ["name"]),
            "second": form_question("Second question", properties, ["name"]),
        }
    )


class UserName(BaseModel):
    name: str


async def ask_user_name() -> Elicit[UserName]:
    return Elicit("What is your name?", UserName)


@toolset.tool(task="required", ask_before_task=True, description="Asks a name on the call, then runs as a task")
async def test_tool_with_task(user: Annotated[UserName, Resolve(ask_user_name)]) -> CallToolResult:
    await asyncio.sleep(0.5)
    return text_result(f"Task done for {user.name}")
