"""The MCP Apps view of a task (`tools_app.mcp_apps`): its status, progress and result, with a
Cancel button.

A task-augmented ``tools/call`` answers a `CreateTaskResult`, which carries no view; so a toolset
offers `show_task` (a tool with the view, which a client without Apps reads as text) and the view
reads and cancels through app-only tools the host calls for it: `task_view_status` and
`task_view_cancel`. Cancel goes through a tool because the host bridge of the MCP Apps SDK
(`@modelcontextprotocol/ext-apps` 2.0.4, ``AppBridge``) forwards ``tools/call`` and
``resources/*`` for a view but no ``tasks/*`` method; it ends the task with the same service as
``tasks/cancel`` (`services.task_cancel`).

Each reads the task as ``tasks/get`` does (`services.task_get`): only the principal that
created it, at this tenant; another user's, another tenant's and an unknown id answer the same.
A token that names no user (or no token, on a public tenant) is refused: anyone could hold the id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from channels.db import database_sync_to_async
from django.utils import timezone
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from mcp_tasks import services
from mcp_tasks.models import Task
from tools_app.mcp_apps import View
from tools_app.principal import Principal
from tools_app.toolsets import tenant_of

TaskId = Annotated[str, Field(max_length=64)]

NOT_YOURS = "A task can be shown only to the person who started it: call with a token that names your user."


class TaskCard(BaseModel):
    task_id: str
    tool: str
    status: str
    created_at: str
    updated_at: str
    seconds: float
    attempt: int
    max_attempts: int
    waiting_for: list[str] = []
    result: str = ""
    error: str = ""


def _text(result: dict[str, Any] | None) -> str:
    return "\n".join(str(c.get("text", "")) for c in (result or {}).get("content", []) if c.get("type") == "text")


def card_of(task: Task) -> TaskCard:
    return TaskCard(
        task_id=task.pk,
        tool=task.tool,
        status=task.status,
        created_at=task.created_at.isoformat(),
        updated_at=task.updated_at.isoformat(),
        seconds=round(((task.updated_at if task.is_terminal else timezone.now()) - task.created_at).total_seconds(), 1),
        attempt=task.attempts,
        max_attempts=task.max_attempts,
        waiting_for=sorted(task.input_requests) if task.status == Task.Status.INPUT_REQUIRED else [],
        result=_text(task.result) if task.status == Task.Status.COMPLETED else "",
        error=str((task.error or {}).get("message", "")) if task.status == Task.Status.FAILED else "",
    )


async def _own(ctx: Context, task_id: str, service: Any) -> TaskCard:
    principal = Principal.current()
    if not principal.subject:
        raise ToolError(NOT_YOURS)
    try:
        task: Task = await database_sync_to_async(service)(
            task_id=task_id, tenant_id=tenant_of(ctx).id, principal=principal
        )
    except services.TaskRefused as exc:
        raise ToolError(exc.message) from None
    return card_of(task)


async def task_view_status(task_id: TaskId, ctx: Context) -> TaskCard:
    """How your task stands (for its MCP Apps view)."""
    return await _own(ctx, task_id, services.task_get)


async def task_view_cancel(task_id: TaskId, ctx: Context) -> TaskCard:
    """Cancel your task (the view's Cancel button); an ended task stays as it ended."""
    return await _own(ctx, task_id, services.task_cancel)


async def show_task(task_id: TaskId, ctx: Context) -> str:
    """Show one of your tasks: its status, progress and result (a live card where the client
    renders MCP Apps)."""
    card = await _own(ctx, task_id, services.task_get)
    line = f"Task {card.task_id} ({card.tool}): {card.status}, {card.seconds:g}s"
    if card.result:
        line += f". Result: {card.result}"
    if card.error:
        line += f". Error: {card.error}"
    if card.waiting_for:
        line += f". Waiting for: {', '.join(card.waiting_for)}"
    return line + "."


TASK_VIEW = View(
    "task",
    "Task",
    Path(__file__).resolve().parent / "ui",
    app_tools=(task_view_status, task_view_cancel),
    description="A task's status, progress and result, with a Cancel button",
)
