"""What a tool author declares to run a tool as a durable task (``@toolset.tool(task=...)``).

The framework only records the declaration; the Tasks extension (`mcp_tasks`) reads it from the
toolsets a tenant enables and does the rest. With ``ask_before_task=True`` the tool's resolvers
ask on the call itself (2026-07-28 ``InputRequiredResult`` rounds) and only the body runs as a
task: the tool is registered through `handing_over`, which stops at the body on a call that is to
become a task and records that it got there.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

from mcp_types import CallToolResult

TaskMode = Literal["optional", "required"]


@dataclass(frozen=True)
class TaskSupport:
    """``optional``: a task when the client declared the extension, else a plain call;
    ``required``: a client without the extension is refused (-32021). ``retries``: runs again
    after a worker was lost mid-run (else the task fails)."""

    mode: TaskMode
    retries: int = 0
    ask_before_task: bool = False

    def __post_init__(self) -> None:
        if self.mode not in ("optional", "required"):
            raise ValueError(f"task must be 'optional' or 'required', not {self.mode!r}")
        if self.retries < 0:
            raise ValueError("task_retries must be 0 or more")

    @property
    def required(self) -> bool:
        return self.mode == "required"


@dataclass
class Handover:
    """Set by the extension around a call that becomes a task once its resolvers are done."""

    reached_body: bool = False


handover: ContextVar[Handover | None] = ContextVar("mcpsite_task_handover", default=None)


def handing_over(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` as registered for ``ask_before_task``: same signature (the SDK plans its resolvers
    from it); on a call being handed over it records the body was reached instead of running it."""
    from tools_app.toolsets import present_as, resolved_parameters

    async def body(**kwargs: Any) -> Any:
        slot = handover.get()
        if slot is not None:
            slot.reached_body = True
            return CallToolResult(content=[])  # never reaches the wire: a task is created instead
        result = fn(**kwargs)
        return await result if inspect.isawaitable(result) else result

    return present_as(body, fn, resolved_parameters(fn))
