"""The MCP Tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663) on the SDK's seams.

A tenant whose toolsets declare task tools gets this `Extension`: it is advertised under
``capabilities.extensions``, serves ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` (2026-07-28
only; ``tasks/result`` and ``tasks/list`` stay unknown, -32601), and intercepts ``tools/call``:

- a tool without a task declaration passes straight through (one dict lookup; tenants with no
  task tools do not get the extension at all);
- a task tool called by a client that declared the extension (for the session or in this
  request's ``_meta``) answers a `CreateTaskResult` once the row is committed; without the
  extension it runs as a plain call (``optional``) or is refused with -32021 (``required``).

Every ``tasks/*`` reads the caller's own rows at this tenant only: an unknown id, another
principal's and another tenant's all answer the same -32602.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from channels.db import database_sync_to_async
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer, require_client_extension
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_NAME_HEADER, decode_header_value
from mcp_types import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    CallToolRequestParams,
    ClientCapabilities,
    MissingRequiredClientCapabilityErrorData,
    RequestParams,
)
from mcp_types.version import is_version_at_least
from pydantic import ValidationError

from mcp_tasks import services
from mcp_tasks.models import Task
from tools_app.principal import Principal
from tools_app.sdk import sdk_tool
from tools_app.tasking import Handover, TaskSupport, handover
from tools_app.tenant import TenantInfo
from tools_app.toolsets import Toolset

IDENTIFIER = "io.modelcontextprotocol/tasks"
MODERN = "2026-07-28"  # a CreateTaskResult cannot be carried on the 2025-11-25 wire


class TaskRef(RequestParams):
    taskId: str  # the wire's names, as pydantic fields


class TaskAnswers(TaskRef):
    inputResponses: dict[str, Any] = {}  # pydantic copies a mutable default per instance


def _client_address(ctx: ServerRequestContext[Any, Any]) -> str:
    """The caller's address (uvicorn's, which believes X-Forwarded-For from a trusted proxy only):
    what an anonymous caller's tasks are counted against."""
    client = getattr(ctx.request, "client", None)
    return str(getattr(client, "host", "") or "")


def _tenant_id(ctx: ServerRequestContext[Any, Any]) -> int:
    info = ctx.lifespan_context
    if not isinstance(info, TenantInfo):
        raise RuntimeError("tasks are served inside a tenant's MCP server only")
    return info.id


def _declared(ctx: ServerRequestContext[Any, Any]) -> bool:
    if not is_version_at_least(ctx.protocol_version, MODERN):
        return False
    capabilities = ctx.session.client_capabilities
    return capabilities is not None and IDENTIFIER in (capabilities.extensions or {})


def _refusal(exc: services.TaskRefused) -> MCPError:
    """The one place a task refusal becomes a JSON-RPC error."""
    if exc.reason == "too_many_tasks":
        return MCPError(code=INVALID_REQUEST, message=exc.message, data={"reason": exc.reason, "limit": exc.limit})
    return MCPError(code=INVALID_PARAMS, message=exc.message)


def _missing_extension(tool: str) -> MCPError:
    data = MissingRequiredClientCapabilityErrorData(
        required_capabilities=ClientCapabilities(extensions={IDENTIFIER: {}})
    )
    return MCPError(
        code=MISSING_REQUIRED_CLIENT_CAPABILITY,
        message=f"Tool {tool!r} runs only as a task: the client must declare the {IDENTIFIER} extension",
        data=data.model_dump(by_alias=True, mode="json", exclude_none=True),
    )


def _check_name_header(ctx: ServerRequestContext[Any, Any], task_id: str) -> None:
    """``Mcp-Name`` mirrors ``params.taskId`` on ``tasks/*`` (SEP-2243): when sent, it must agree."""
    headers: Mapping[str, str] | None = getattr(ctx.request, "headers", None)
    sent = headers.get(MCP_NAME_HEADER) if headers is not None else None
    if sent is not None and decode_header_value(sent) != task_id:
        raise MCPError(code=HEADER_MISMATCH, message=f"{MCP_NAME_HEADER} header does not match the request's taskId")


_db = database_sync_to_async


class TasksExtension(Extension):
    identifier = IDENTIFIER

    def __init__(self, tools: dict[str, TaskSupport]) -> None:
        self.task_tools = tools
        self.server: MCPServer[Any] | None = None  # set once built: its tools validate arguments

    @classmethod
    def for_toolsets(cls, toolsets: Sequence[Toolset]) -> TasksExtension | None:
        tools = {name: support for toolset in toolsets for name, support in toolset.task_tools().items()}
        return cls(tools) if tools else None

    def methods(self) -> Sequence[MethodBinding]:
        versions = frozenset({MODERN})
        return (
            MethodBinding("tasks/get", TaskRef, self._get, protocol_versions=versions),
            MethodBinding("tasks/update", TaskAnswers, self._update, protocol_versions=versions),
            MethodBinding("tasks/cancel", TaskRef, self._cancel, protocol_versions=versions),
        )

    async def intercept_tool_call(
        self, params: CallToolRequestParams, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        support = self.task_tools.get(params.name)
        if support is None:
            return await call_next(ctx)
        if not _declared(ctx):
            if support.required:
                raise _missing_extension(params.name)
            return await call_next(ctx)
        raw = dict(ctx.params or {})
        if support.ask_before_task:
            slot = Handover()
            token = handover.set(slot)
            try:
                result = await call_next(ctx)  # resolver rounds answer here; the body is not run
            finally:
                handover.reset(token)
            if not slot.reached_body:
                return result
        elif not self._valid(params):
            return await call_next(ctx)  # the SDK answers invalid arguments as on a plain call
        capabilities = ctx.session.client_capabilities
        try:
            task = await _db(services.task_create)(
                tenant_id=_tenant_id(ctx),
                principal=Principal.current(),
                tool=params.name,
                arguments=dict(params.arguments or {}),
                client_capabilities=capabilities.model_dump(mode="json", by_alias=True, exclude_none=True)
                if capabilities is not None
                else {},
                input_responses=dict(raw.get("inputResponses") or {}) if support.ask_before_task else None,
                request_state=str(raw.get("requestState") or "") if support.ask_before_task else "",
                max_attempts=1 + support.retries,
                client_address=_client_address(ctx),
            )
        except services.TaskRefused as exc:
            raise _refusal(exc) from None
        return {"resultType": "task", **task.wire(detailed=False)}

    def _valid(self, params: CallToolRequestParams) -> bool:
        tool = sdk_tool(self.server, params.name) if self.server is not None else None
        if tool is None:
            return False
        meta = tool.fn_metadata
        try:
            meta.arg_model.model_validate(meta.pre_parse_json(dict(params.arguments or {})))
        except ValidationError:
            return False
        return True

    async def _get(self, ctx: ServerRequestContext[Any, Any], params: TaskRef) -> HandlerResult:
        task = await self._own(ctx, params, services.task_get)
        return {"resultType": "complete", **task.wire(detailed=True)}

    async def _update(self, ctx: ServerRequestContext[Any, Any], params: TaskAnswers) -> HandlerResult:
        require_client_extension(ctx, IDENTIFIER)
        _check_name_header(ctx, params.taskId)
        try:
            await _db(services.task_answer)(
                task_id=params.taskId,
                tenant_id=_tenant_id(ctx),
                principal=Principal.current(),
                responses=dict(params.inputResponses),
            )
        except services.TaskRefused as exc:
            raise _refusal(exc) from None
        return {"resultType": "complete"}

    async def _cancel(self, ctx: ServerRequestContext[Any, Any], params: TaskRef) -> HandlerResult:
        await self._own(ctx, params, services.task_cancel)
        return {"resultType": "complete"}

    async def _own(self, ctx: ServerRequestContext[Any, Any], params: TaskRef, service: Any) -> Task:
        require_client_extension(ctx, IDENTIFIER)
        _check_name_header(ctx, params.taskId)
        try:
            task: Task = await _db(service)(
                task_id=params.taskId, tenant_id=_tenant_id(ctx), principal=Principal.current()
            )
        except services.TaskRefused as exc:
            raise _refusal(exc) from None
        return task
