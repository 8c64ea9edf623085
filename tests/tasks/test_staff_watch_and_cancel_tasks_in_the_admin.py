"""Staff find a task in the admin, read it (arguments, status, attempts; nothing editable) and
cancel it with an action, in headless Chromium; the client then reads it cancelled. A member who
is not staff, and an anonymous visitor, get none of the pages."""

from __future__ import annotations

from typing import Any

import httpx2
from django.contrib.admin.utils import quote

from tests.approvals.conftest import sign_in_page
from tests.conftest import Cast, LiveServer, sign_in_to_admin
from tests.tasks.conftest import result, rpc, start

STAFF_ONLY = (
    "Please enter the correct username and password for a staff account. Note that both fields may be case-sensitive."
)


def test_staff_read_a_task_and_cancel_it_from_the_list(live: LiveServer, cast: Cast, page: Any, reports: str) -> None:
    alice = cast.token(live, "alice", "reports")
    task_id = start(reports, alice, seconds=30, title="from-the-admin")

    sign_in_to_admin(page, live, f"/admin/mcp_tasks/task/{quote(task_id)}/change/")

    assert page.locator(".field-status .readonly").inner_text() == "working"
    assert page.locator(".field-tool .readonly").inner_text() == "long_report"
    assert '"title": "from-the-admin"' in page.locator(".field-shown_arguments .readonly").inner_text()
    assert page.locator("input[name=_save]").count() == 0  # read-only

    page.goto(f"{live.url}/admin/mcp_tasks/task/?q={task_id}")
    page.check("#result_list tbody input[name=_selected_action]")
    page.select_option("select[name=action]", "cancel_tasks")
    page.click("button[name=index]")

    assert page.locator(".messagelist .success").inner_text() == (
        "Cancelled 1 task(s); ended ones were left as they ended."
    )
    assert result(rpc(reports, "tasks/get", {"taskId": task_id}, alice))["status"] == "cancelled"


def test_a_member_who_is_not_staff_and_an_anonymous_visitor_get_no_task_pages(
    live: LiveServer, cast: Cast, page: Any, reports: str
) -> None:
    alice = cast.token(live, "alice", "reports")
    task_id = start(reports, alice, seconds=0)
    path = f"/admin/mcp_tasks/task/{quote(task_id)}/change/"

    anonymous = httpx2.get(f"{live.url}{path}", follow_redirects=False, timeout=10)
    assert (anonymous.status_code, anonymous.headers["location"]) == (302, f"/admin/login/?next={path}")

    page.goto(f"{live.url}/admin/login/?next={path}")
    page.fill("#id_username", "alice")
    page.fill("#id_password", "alice-password-1")
    page.click("input[type=submit]")
    assert page.locator(".errornote").inner_text() == STAFF_ONLY

    sign_in_page(page, live, "alice", "alice-password-1")  # signed in on the site, still not staff
    for refused in (path, "/admin/mcp_tasks/task/"):
        page.goto(f"{live.url}{refused}")
        assert page.url.startswith(f"{live.url}/admin/login/?next="), page.url
        assert task_id not in page.content()
