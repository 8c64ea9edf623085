"""Long-running tools that run as durable tasks: what a tool author writes to opt in."""

from __future__ import annotations

import asyncio
from typing import Annotated

from mcp.server.mcpserver.resolve import Resolve
from pydantic import Field

from mcp_tasks.ui_views import TASK_VIEW, show_task
from tools_app.urlmode import Approval, Completed, Declined, UrlModeToolset, UrlOutcome, url_step

# Every duration a caller sets is bounded: a report that may wait an hour is an hour of a tenant's
# running places (and of a person's), whatever the limits on how many run at once.
MAX_REPORT_SECONDS = 600

toolset = UrlModeToolset(description="Long-running reports, run as durable tasks (the MCP Tasks extension)")


@toolset.tool(task="optional")
async def long_report(
    seconds: float = Field(1.0, ge=0, le=MAX_REPORT_SECONDS, description="How long the report takes"),
    title: str = "report",
) -> str:
    """Build a report that takes `seconds`; a client with the Tasks extension polls for it."""
    await asyncio.sleep(seconds)
    return f"{title}: done after {seconds:g}s"


@toolset.tool(task="required", task_retries=1)
async def resilient_report(
    seconds: float = Field(1.0, ge=0, le=MAX_REPORT_SECONDS, description="How long the report takes"),
    title: str = "report",
) -> str:
    """Like long_report, but only as a task, and run once more if its worker is lost mid-run."""
    await asyncio.sleep(seconds)
    return f"{title}: done after {seconds:g}s"


@url_step
def staff_sign_off(title: str) -> Approval:
    return Approval(f"export-{title}", reason=f"export the {title} report")


@toolset.tool(task="optional")
async def approved_export(title: str, decision: Annotated[UrlOutcome, Resolve(staff_sign_off)]) -> str:
    """Export a report once staff approve it; the task waits (input_required) for the decision."""
    match decision:
        case Completed():
            return f"{title}: exported"
        case Declined(note=note):
            return f"{title}: not exported ({note or 'denied'})"
        case _:
            return f"{title}: not exported (the approval ended unanswered)"


# A task's live card for hosts that render MCP Apps (text for the rest): `show_task(task_id)`.
toolset.tool(ui=TASK_VIEW)(show_task)
