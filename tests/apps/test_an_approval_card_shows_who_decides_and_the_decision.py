"""The approval card (request_refund, any staff approval): who must decide and the status while
pending, then the decision, who took it and the note, as staff decide."""

from __future__ import annotations

from typing import Any

import pytest

from approvals.models import Elicitation
from approvals.services.staff import elicitation_end_by_staff
from mcpsite.actors import Actor, Via
from tests.approvals.conftest import elicitation_id_of
from tests.apps.conftest import screenshot
from tests.apps.host import AppsHost
from tests.conftest import Cast, LiveServer


def test_a_pending_refund_names_who_decides(server: LiveServer, alice: str, page: Any) -> None:
    arguments = {"order_id": "A-100", "amount": "12.50"}
    with AppsHost(server.mcp_url("apps"), alice) as host:
        view = host.show(page, "request_refund", arguments)
        host.call_in_background("request_refund", arguments)
        status_page = host.asked.get(timeout=20).url
        view.locator("body[data-status=pending]").wait_for(timeout=10_000)
        assert view.locator("#url").inner_text() == status_page
        assert view.locator("#badge").inner_text() == "Waiting for a decision"
        assert view.locator("#decider").inner_text() == "Staff of Apps"
        assert view.locator("#amount").inner_text() == "12.50 EUR"
        assert view.locator("#description").inner_text() == (
            "This needs a staff approval: refund 12.50 EUR for order A-100. Follow its status at the link."
        )
        assert view.locator("#decision").is_hidden()
        screenshot(page, "approval-pending")
    assert page.errors == []


@pytest.mark.parametrize(
    ("approve", "status", "badge", "note"),
    [(True, "completed", "Approved", "refunded to the card"), (False, "declined", "Denied", "outside the window")],
)
def test_a_staff_decision_shows_on_the_card_with_its_note(
    server: LiveServer, alice: str, cast: Cast, page: Any, approve: bool, status: str, badge: str, note: str
) -> None:
    arguments = {"order_id": f"B-{status}", "amount": "40.00"}
    with AppsHost(server.mcp_url("apps"), alice) as host:
        view = host.show(page, "request_refund", arguments)
        call = host.call_in_background("request_refund", arguments)
        row = Elicitation.objects.get(pk=elicitation_id_of(host.asked.get(timeout=20).url))
        view.locator("body[data-status=pending]").wait_for(timeout=10_000)

        elicitation_end_by_staff(
            elicitation=row,
            action="approve" if approve else "deny",
            actor=Actor(Via.STAFF, cast.user("staff")),
            note=note,
        )
        view.locator(f"body[data-status={status}]").wait_for(timeout=10_000)
        assert view.locator("#badge").inner_text() == badge
        assert view.locator("#decision").inner_text() == ("approved" if approve else "denied")
        assert view.locator("#decided-by").inner_text() == "staff"
        assert view.locator("#note").inner_text() == f"“{note}”"
        assert view.locator("#url").is_hidden()

        host.hand_result(page, call.result(timeout=20))
        view.locator("#result").wait_for(state="visible")
        assert note in view.locator("#result").inner_text()
        screenshot(page, f"approval-{'approved' if approve else 'denied'}")
    assert page.errors == []
