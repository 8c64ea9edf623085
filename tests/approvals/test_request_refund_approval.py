"""request_refund waits for a staff decision: approved in the admin (with a note) while the user's
status page updates by itself, or denied through the same service; the waiting call answers."""

from __future__ import annotations

from typing import Any

import pytest

from approvals.models import Elicitation
from approvals.services.staff import elicitation_end_by_staff
from mcpsite.actors import Actor, Via
from tests.approvals.conftest import CallInThread, admin_path, elicitation_id_of, sign_in_page
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import MODES


def refund_call(server: LiveServer, cast: Cast, mode: str, order_id: str) -> tuple[CallInThread, Elicitation]:
    call = CallInThread(
        server.mcp_url(), cast.token(server), mode, "request_refund", {"order_id": order_id, "amount": "12.5"}
    ).start()
    question = call.next_question()
    assert question.message == (
        f"This needs a staff approval: refund 12.50 EUR for order {order_id}. Follow its status at the link."
    )
    return call, Elicitation.objects.get(pk=elicitation_id_of(question.url))


@pytest.mark.parametrize("mode", MODES)
def test_staff_approval_in_the_admin_lets_the_refund_through(
    server: LiveServer, cast: Cast, page: Any, mode: str
) -> None:
    order_id = f"A-{mode}"
    call, row = refund_call(server, cast, mode, order_id)
    sign_in_page(page, server, "alice", "alice-password-1")  # the status page is the row's user's only
    page.goto(row.url)
    assert page.get_attribute("#status", "data-status") == "pending"

    admin = page.context.browser.new_context().new_page()  # staff's own session, not alice's
    admin.goto(f"{server.url}/admin/login/?next={admin_path(row)}")
    admin.fill("#id_username", "staff")
    admin.fill("#id_password", "staff-password-1")
    admin.click("input[type=submit]")
    admin.fill("#decision-note", "goodwill")
    admin.click("input[name=_approve]")
    admin.wait_for_selector("ul.messagelist")
    assert admin.inner_text("ul.messagelist") == f"Approved {row.pk}; the waiting client is told."

    page.wait_for_selector("#status[data-status=completed]", timeout=10_000)  # no reload by the test
    call.join()
    assert call.text == f"Refund of 12.50 EUR for order {order_id} approved by staff (goodwill)."
    row.refresh_from_db()
    assert (row.status, row.completed_by_user, row.outcome["note"]) == ("completed", cast.user("staff"), "goodwill")


@pytest.mark.parametrize("mode", MODES)
def test_staff_denial_refuses_the_refund(server: LiveServer, cast: Cast, mode: str) -> None:
    order_id = f"D-{mode}"
    call, row = refund_call(server, cast, mode, order_id)

    elicitation_end_by_staff(
        elicitation=row, action="deny", actor=Actor(Via.STAFF, cast.user("staff")), note="outside the window"
    )

    call.join()
    assert call.text == f"Refund for order {order_id} denied: outside the window."
    row.refresh_from_db()
    assert row.status == Elicitation.Status.DECLINED
