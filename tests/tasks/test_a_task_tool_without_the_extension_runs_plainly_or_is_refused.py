"""A client that did not declare the Tasks extension: an ``optional`` task tool answers as a plain
call, a ``required`` one is refused with -32021 naming the extension, and no task exists."""

from __future__ import annotations

from mcp_tasks.models import Task
from tests.conftest import Cast, LiveServer
from tests.tasks.conftest import error, result, rpc


def test_an_optional_task_tool_answers_a_client_without_the_extension_directly(
    live: LiveServer, cast: Cast, reports: str
) -> None:
    alice, rows = cast.token(live, "alice", "reports"), Task.objects.count()
    params = {"name": "long_report", "arguments": {"seconds": 0, "title": "inline"}}

    answer = result(rpc(reports, "tools/call", params, alice, tasks=False))

    assert answer["resultType"] == "complete"
    assert answer["content"] == [{"type": "text", "text": "inline: done after 0s"}]
    assert Task.objects.count() == rows


def test_a_required_task_tool_refuses_a_client_without_the_extension(
    live: LiveServer, cast: Cast, reports: str
) -> None:
    alice, rows = cast.token(live, "alice", "reports"), Task.objects.count()
    params = {"name": "resilient_report", "arguments": {"seconds": 0}}

    refused = error(rpc(reports, "tools/call", params, alice, tasks=False))

    assert refused == {
        "code": -32021,
        "message": "Tool 'resilient_report' runs only as a task: the client must declare the "
        "io.modelcontextprotocol/tasks extension",
        "data": {"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}},
    }
    assert Task.objects.count() == rows


def test_tasks_methods_refuse_a_client_without_the_extension(live: LiveServer, cast: Cast, reports: str) -> None:
    alice = cast.token(live, "alice", "reports")

    refused = error(rpc(reports, "tasks/get", {"taskId": "tsk_whatever"}, alice, tasks=False))

    assert refused["code"] == -32021
    assert refused["data"] == {"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}


def test_a_tenant_without_task_tools_does_not_advertise_the_extension(live: LiveServer, cast: Cast) -> None:
    alice = cast.token(live, "alice", "demo")

    discovered = result(rpc(live.mcp_url("demo"), "server/discover", {}, alice))

    assert "io.modelcontextprotocol/tasks" not in (discovered["capabilities"].get("extensions") or {})
