"""One run of a task: the tool called as the SDK calls it, outside any request.

1. Claim the row (a run enqueued twice runs once) and find the tenant's `MCPServer` (the one
   this process serves, or one built for the worker).
2. Call the tool with the task's arguments, the answers gathered so far and its own state, in a
   2026-07-28 context with the creating client's capabilities: resolvers and tools ask exactly
   as they do on the wire, and an `InputRequiredResult` parks the task as ``input_required``.
3. Meanwhile renew the lease; a renewal refused (the task was cancelled, or the beat declared
   this run lost) cancels the call.
4. Write how it ended, unless the task ended otherwise meanwhile.
"""

from __future__ import annotations

import functools
import logging
import os
import secrets
import socket
from collections.abc import Callable
from typing import Any

import anyio
from channels.db import database_sync_to_async
from django.utils.module_loading import import_string
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, CallToolRequestParams, ClientCapabilities
from mcp_types.methods import is_input_required

from audit.layer import AuditToolCalls
from mcp_tasks import services
from mcp_tasks.conf import tasks_settings
from mcp_tasks.models import Task
from tools_app.rounds import RoundMiddleware
from tools_app.roundstate import wire_result
from tools_app.tenant import TenantInfo

# The audit layer too: a task's run is a tool call, recorded with the task's principal and id.
TOOL_LAYERS = (AuditToolCalls, RoundMiddleware)

logger = logging.getLogger(__name__)

ServerFor = Callable[[str], tuple[TenantInfo | None, MCPServer[TenantInfo] | None]]

PROTOCOL_VERSION = "2026-07-28"  # tasks exist only on this wire; a run asks as it does


def _db(fn: Any) -> Any:
    # Not asgiref's one thread-sensitive thread: the MCP hot path queues its ORM calls there.
    return database_sync_to_async(fn, thread_sensitive=False)


async def task_execute(*, task_id: str) -> None:
    worker = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
    task: Task | None = await _db(services.task_claim)(task_id=task_id, worker=worker)
    if task is None:
        return
    outcome: services.Outcome | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(_keep_lease, task.pk, worker, tg.cancel_scope)
        try:
            outcome = await _run(task)
        finally:
            tg.cancel_scope.cancel()
    if outcome is None:
        logger.info("task %s: run stopped (cancelled, or taken over)", task.pk)
        return
    written = await _db(services.task_finish)(task_id=task.pk, worker=worker, outcome=outcome)
    logger.info("task %s: %s%s", task.pk, outcome.status, "" if written else " (not written: it ended meanwhile)")


async def _keep_lease(task_id: str, worker: str, scope: anyio.CancelScope) -> None:
    interval = max(0.2, tasks_settings()["LEASE_SECONDS"] / 3)
    while True:
        await anyio.sleep(interval)
        if not await _db(services.task_renew)(task_id=task_id, worker=worker):
            scope.cancel()
            return


class TaskSession:
    """What a tool reaches as ``ctx.session`` inside a task: the creating client's capabilities,
    and no channel back (the client polls; progress and logs have nowhere to go)."""

    can_send_request = False

    def __init__(self, capabilities: ClientCapabilities) -> None:
        self.client_capabilities = capabilities

    async def report_progress(self, *args: Any, **kwargs: Any) -> None:
        return None

    async def send_log_message(self, *args: Any, **kwargs: Any) -> None:
        return None


async def _run(task: Task) -> services.Outcome:
    info, server = await _db(_server_for)(task.tenant.slug)
    if server is None:
        return _failed(INTERNAL_ERROR, "The tenant no longer serves this tool")
    params: dict[str, Any] = {"name": task.tool, "arguments": task.arguments}
    if task.input_responses:
        params["inputResponses"] = task.input_responses
    if task.request_state:
        params["requestState"] = task.request_state
    request = ServerRequestContext(
        session=TaskSession(ClientCapabilities.model_validate(task.client_capabilities)),  # type: ignore[arg-type]
        lifespan_context=info,
        protocol_version=PROTOCOL_VERSION,
        method="tools/call",
        params=params,
        request_id=task.pk,
    )

    async def call_tool(ctx: ServerRequestContext[Any, Any]) -> HandlerResult:
        typed = CallToolRequestParams.model_validate(ctx.params)
        context: Context[Any, Any] = Context(request_context=ctx, mcp_server=server, input_params=typed)
        return await server.call_tool(task.tool, dict(typed.arguments or {}), context)

    token = auth_context_var.set(_as_principal(task))
    try:
        result = await _through_tool_layers(server, call_tool)(request)
    except MCPError as exc:
        return services.Outcome(
            status=Task.Status.FAILED, error=exc.error.model_dump(mode="json", by_alias=True, exclude_none=True)
        )
    except ToolError as exc:
        if isinstance(exc, UnexpectedToolError):
            logger.error("task %s: tool %r crashed", task.pk, task.tool, exc_info=exc.__cause__ or exc)
            return _failed(INTERNAL_ERROR, "The tool failed unexpectedly")
        # A tool error is the tool's answer (completed, isError), as on a plain call.
        text = {"type": "text", "text": str(exc)}
        return services.Outcome(status=Task.Status.COMPLETED, result={"content": [text], "isError": True})
    finally:
        auth_context_var.reset(token)
    wire = wire_result(result)
    if is_input_required(result):
        return services.Outcome(
            status=Task.Status.INPUT_REQUIRED,
            input_requests=dict(wire.get("inputRequests") or {}),
            request_state=str(wire.get("requestState") or ""),
        )
    wire.pop("resultType", None)
    return services.Outcome(status=Task.Status.COMPLETED, result=wire)


def _through_tool_layers(server: MCPServer[Any], call_tool: CallNext) -> CallNext:
    """`call_tool` wrapped in the server's layers that work on a tool call: the audit (outside the
    requestState boundary on a request; here it records the run with the task's principal and id),
    then the one that works on a tool call's questions (public question names, URL-mode steps:
    `tools_app.rounds.RoundMiddleware`), the one a request passes inside the boundary. The task's
    state is kept server-side, so nothing here is sealed."""
    chain = call_tool
    for middleware in reversed([m for m in server.middleware if isinstance(m, TOOL_LAYERS)]):
        chain = functools.partial(middleware, call_next=chain)
    return chain


def _failed(code: int, message: str) -> services.Outcome:
    return services.Outcome(status=Task.Status.FAILED, error={"code": code, "message": message})


def _as_principal(task: Task) -> AuthenticatedUser | None:
    """The task's principal as the auth context a request would carry, so what a tool derives
    from it (the rows a URL-mode step opens) is bound to the same principal."""
    if not task.client_id:
        return None
    claims = {"iss": task.issuer} if task.issuer else None
    token = AccessToken(token="", client_id=task.client_id, scopes=["mcp"], subject=task.subject or None, claims=claims)
    return AuthenticatedUser(token)


def _server_for(slug: str) -> tuple[TenantInfo | None, MCPServer[TenantInfo] | None]:
    """The tenant's server at its current version, from the composition root, named by
    ``settings.TASKS["SERVER_FOR"]`` (a Celery worker serves no tenant of its own, and this app
    sits below the root, so it is handed the lookup as Django is handed ``ASGI_APPLICATION``)."""
    server_for: ServerFor = import_string(tasks_settings()["SERVER_FOR"])
    return server_for(slug)
