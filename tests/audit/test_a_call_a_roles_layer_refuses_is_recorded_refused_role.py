"""The hook the members' roles layer calls (issue 28, built on its own branch): a call it answers as
an unknown tool because of the member's role is recorded ``refused_role``, not as the tool error
the caller sees; the next call is recorded as it ended again."""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.context import HandlerResult, ServerRequestContext
from mcp_types import ClientCapabilities

from audit.layer import AuditToolCalls, refused_by_role
from audit.writer import AuditWriter
from mcp_tasks.execution import TaskSession


def test_a_refusal_by_role_is_recorded_as_such_and_only_for_its_call() -> None:
    writer = AuditWriter(capacity=10, batch_size=100, interval=3600)  # holds what it is given
    layer = AuditToolCalls(tenant_id=1, safe_args={}, writer=writer)
    ctx: ServerRequestContext[Any, Any] = ServerRequestContext(
        session=TaskSession(ClientCapabilities()),  # type: ignore[arg-type]
        lifespan_context=None,
        protocol_version="2026-07-28",
        method="tools/call",
        params={"name": "payroll", "arguments": {}},
        request_id="call-1",
    )

    async def roles_layer_refuses(_: ServerRequestContext[Any, Any]) -> HandlerResult:
        refused_by_role()
        return {"content": [{"type": "text", "text": "Unknown tool: payroll"}], "isError": True}

    async def answers(_: ServerRequestContext[Any, Any]) -> HandlerResult:
        return {"content": [], "isError": False}

    async def calls() -> None:
        await layer(ctx, roles_layer_refuses)
        await layer(ctx, answers)

    anyio.run(calls)
    assert [(call.tool, call.outcome) for call in writer._pending] == [
        ("payroll", "refused_role"),
        ("payroll", "result"),
    ]
