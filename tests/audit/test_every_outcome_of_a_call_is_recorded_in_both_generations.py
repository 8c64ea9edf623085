"""Every ``tools/call`` leaves one audit row saying how it ended, in both protocol generations: a
result, a tool error, a protocol error with its JSON-RPC code, and (2026-07-28) input required,
each retry round a row of its own. A member's row names the tenant, the user and the OAuth
client; an anonymous caller's names nobody."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from audit.models import ToolCall
from mcpsite import services
from tests.audit.conftest import last_id, rows_after
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import MODES, accept, connect, text

GENERATION = {"2026-07-28": "2026-07-28", "legacy": "2025-11-25"}


def call(url: str, mode: str, tool: str, arguments: dict[str, Any], token: str | None = None, **kw: Any) -> Any:
    """The call's result, or the `MCPError` it was refused with."""

    async def run() -> Any:
        async with connect(url, token, mode=mode, **kw) as client:
            try:
                return await client.call_tool(tool, arguments)
            except MCPError as refused:
                return refused

    return anyio.run(run)


@pytest.mark.parametrize("mode", MODES)
def test_a_result_a_tool_error_and_a_protocol_error_are_each_recorded(conformance: str, mode: str) -> None:
    mark = last_id()

    assert text(call(conformance, mode, "test_simple_text", {})) != ""
    assert call(conformance, mode, "test_error_handling", {}).is_error
    refused = call(conformance, mode, "test_missing_capability", {})
    assert isinstance(refused, MCPError) and refused.error.code == -32021

    rows = rows_after(mark, 3, tenant__slug="conformance")
    assert [(r.tool, r.outcome, r.error_code) for r in rows] == [
        ("test_simple_text", "result", None),
        ("test_error_handling", "tool_error", None),
        ("test_missing_capability", "protocol_error", -32021),
    ]
    assert {(r.generation, r.user_id, r.client_id, r.subject, r.task_id) for r in rows} == {
        (GENERATION[mode], None, "", "", "")
    }
    assert all(r.duration_ms >= 0 and r.request_id and len(r.arguments_digest) == 64 for r in rows)


def test_each_round_of_a_2026_07_28_call_with_a_question_is_a_row(audited: LiveServer, cast: Cast) -> None:
    issued = services.token_issue(tenant=cast.tenant("demo"), user=cast.user("alice"), site_root=audited.url)
    mark = last_id()

    answer = call(
        audited.mcp_url(),
        "2026-07-28",
        "provision",
        {"name": "orders"},
        issued.token,
        answer=accept(region="eu-west-1"),
    )
    assert text(answer) == "Provisioned 'orders' in eu-west-1."

    first, retry = rows_after(mark, 2, tenant__slug="demo")
    assert [(r.tool, r.outcome) for r in (first, retry)] == [("provision", "input_required"), ("provision", "result")]
    for row in (first, retry):
        assert (row.user, row.client_id, row.issuer, row.subject) == (
            cast.user("alice"),
            issued.application.client_id,
            audited.url,
            str(cast.user("alice").pk),
        )
    assert first.arguments_digest == retry.arguments_digest  # one call, answered over two rounds
    assert first.request_id != retry.request_id  # two requests, each with its own id


def test_a_2025_11_25_call_asks_in_call_and_is_one_row(audited: LiveServer, cast: Cast) -> None:
    token = cast.token(audited, "bob")
    mark = last_id()

    answer = call(
        audited.mcp_url(), "legacy", "provision", {"name": "orders"}, token, answer=accept(region="eu-west-1")
    )
    assert text(answer) == "Provisioned 'orders' in eu-west-1."

    [row] = rows_after(mark, 1, tenant__slug="demo")
    assert (row.tool, row.outcome, row.user, row.generation) == (
        "provision",
        ToolCall.Outcome.RESULT,
        cast.user("bob"),
        "2025-11-25",
    )
