"""Long-running tools that run as durable tasks: what a tool author writes to opt in."""

from __future__ import annotations

import asyncio

from pydantic import Field

from tools_app.toolsets import Toolset

toolset = Toolset(description="Long-running reports, run as durable tasks (the MCP Tasks extension)")


@toolset.tool(task="optional")
async def long_report(
    seconds: float = Field(1.0, ge=0, le=3600, description="How long the report takes"), title: str = "report"
) -> str:
    """Build a report that takes `seconds`; a client with the Tasks extension polls for it."""
    await asyncio.sleep(seconds)
    return f"{title}: done after {seconds:g}s"


@toolset.tool(task="required", task_retries=1)
async def resilient_report(
    seconds: float = Field(1.0, ge=0, le=3600, description="How long the report takes"), title: str = "report"
) -> str:
    """Like long_report, but only as a task, and run once more if its worker is lost mid-run."""
    await asyncio.sleep(seconds)
    return f"{title}: done after {seconds:g}s"
