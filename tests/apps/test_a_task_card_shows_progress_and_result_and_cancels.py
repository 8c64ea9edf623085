"""The task card (show_task): status, progress and result of a task, live; its Cancel button ends
the task through the host (an app-only tool: the MCP Apps SDK's bridge forwards no tasks/*)."""

from __future__ import annotations

from typing import Any

from mcp_tasks.models import Task
from tests.apps.conftest import screenshot
from tests.apps.host import AppsHost
from tests.conftest import LiveServer
from tests.tasks.conftest import start, wait_for


def test_a_finished_task_shows_its_result(server: LiveServer, alice: str, page: Any) -> None:
    url = server.mcp_url("apps")
    task_id = start(url, alice, seconds=0.5, title="sales")
    with AppsHost(url, alice) as host:
        view = host.show(page, "show_task", {"task_id": task_id})
        view.locator("body[data-status=completed]").wait_for(timeout=15_000)
        assert view.locator("#badge").inner_text() == "Completed"
        assert view.locator("#title").inner_text() == "Task: long_report"
        assert view.locator("#result").inner_text() == "sales: done after 0.5s"
        assert view.locator("#progress").inner_text().startswith("Ended after ")
        assert view.locator("#cancel").is_hidden()
        screenshot(page, "task-completed")
    assert page.errors == []


def test_a_working_task_is_cancelled_from_its_card(server: LiveServer, alice: str, page: Any) -> None:
    url = server.mcp_url("apps")
    task_id = start(url, alice, seconds=120, title="yearly")
    with AppsHost(url, alice) as host:
        view = host.show(page, "show_task", {"task_id": task_id})
        text = host.call_in_background("show_task", {"task_id": task_id}).result(timeout=20)
        assert text.content[0].text.startswith(f"Task {task_id} (long_report): working")  # what a plain client reads
        host.hand_result(page, text)
        view.locator("body[data-status=working]").wait_for(timeout=10_000)
        assert view.locator("#badge").inner_text() == "Working"
        assert view.locator("#progress").inner_text().startswith("Running for ")
        screenshot(page, "task-working")

        view.locator("#cancel").click()
        view.locator("body[data-status=cancelled]").wait_for(timeout=10_000)
        assert view.locator("#badge").inner_text() == "Cancelled"
        assert view.locator("#cancel").is_hidden()
        screenshot(page, "task-cancelled")
    assert Task.objects.get(pk=task_id).status == Task.Status.CANCELLED
    assert wait_for(url, alice, task_id, "cancelled")["status"] == "cancelled"  # what tasks/get says
    assert page.errors == []
