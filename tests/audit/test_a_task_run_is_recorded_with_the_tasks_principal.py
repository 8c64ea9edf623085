"""A call that creates a task is recorded ``task``; the task's run, outside any request, is a row
of its own: the task's tool, its principal (the member who created it), how the run ended, and the
task's id instead of a request id."""

from __future__ import annotations

from audit.models import ToolCall
from mcpsite import services
from tests.audit.conftest import last_id, rows_after
from tests.conftest import Cast, LiveServer
from tests.tasks.conftest import start, wait_for


def test_a_task_and_its_run_are_each_recorded(audited: LiveServer, reports: str, cast: Cast) -> None:
    issued = services.token_issue(tenant=cast.tenant("reports"), user=cast.user("alice"), site_root=audited.url)
    mark = last_id()

    task_id = start(reports, issued.token, seconds=0.1, title="quarterly")
    wait_for(reports, issued.token, task_id, "completed")

    created, run = rows_after(mark, 2, tenant__slug="reports", tool="long_report")
    assert (created.outcome, created.task_id) == (ToolCall.Outcome.TASK, "")
    assert created.request_id != ""
    assert (run.outcome, run.task_id, run.request_id, run.generation) == (
        ToolCall.Outcome.RESULT,
        task_id,
        "",
        "2026-07-28",
    )
    for row in (created, run):
        assert (row.user, row.client_id) == (cast.user("alice"), issued.application.client_id)
    assert created.arguments_digest == run.arguments_digest
    assert run.duration_ms >= 100
