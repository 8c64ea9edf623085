"""Recording never waits: when a process's buffer is full, a call's row is dropped and counted
(``mcpsite_audit_dropped_total{reason="buffer_full"}``), the call answered as ever. What the buffer
holds is written when the server shuts down."""

from __future__ import annotations

from collections.abc import Callable

from audit.models import ToolCall
from tests.audit.conftest import last_id
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import modern_post
from tests.operate.scrape import scrape, value

DROPPED = "mcpsite_audit_dropped_total"


def test_calls_beyond_the_buffer_are_answered_dropped_and_counted_and_the_rest_written_at_shutdown(
    server_factory: Callable[..., LiveServer], cast: Cast
) -> None:
    # A buffer of two that the writer never drains while the server runs (its interval is an hour,
    # and a batch's worth never gathers): only shutdown writes it.
    server = server_factory(
        MCPSITE_AUDIT_BUFFER="2", MCPSITE_AUDIT_FLUSH_SECONDS="3600", MCPSITE_AUDIT_BATCH_SIZE="100"
    )
    mark = last_id()
    params = {"name": "book_table", "arguments": {"date": "2026-02-30", "party_size": 2}}

    answers = [
        modern_post(server.mcp_url("open"), "tools/call", params, **{"Mcp-Name": "book_table"}) for _ in range(5)
    ]

    assert [a.json()["result"]["isError"] for a in answers] == [True] * 5
    assert value(scrape(server.url), DROPPED, reason="buffer_full") == 3
    assert ToolCall.objects.filter(id__gt=mark, tenant__slug="open").count() == 0
    server.stop()
    written = ToolCall.objects.filter(id__gt=mark, tenant__slug="open")
    assert [(r.request_id, r.outcome) for r in written.order_by("id")] == [
        (a.headers["x-request-id"], "tool_error") for a in answers[:2]
    ]
