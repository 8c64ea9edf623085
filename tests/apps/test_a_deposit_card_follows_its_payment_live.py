"""The payment card (pay_deposit, book_table_with_deposit) in a host page built on the MCP Apps
SDK: the amount, what it is for and the checkout link while pending, then paid, declined or
expired as it happens, without a reload."""

from __future__ import annotations

from typing import Any

from approvals.models import Elicitation
from approvals.services.staff import elicitation_end_by_staff
from mcpsite.actors import Actor, Via
from tests.approvals.conftest import deliver, elicitation_id_of, payment_event
from tests.apps.conftest import screenshot
from tests.apps.host import AppsHost
from tests.conftest import Cast, LiveServer


def pending_card(host: AppsHost, page: Any, tool: str, arguments: dict[str, Any]) -> tuple[Any, Any, Elicitation]:
    view = host.show(page, tool, arguments)
    call = host.call_in_background(tool, arguments)
    question = host.asked.get(timeout=20)
    view.locator("body[data-status=pending]").wait_for(timeout=10_000)
    return view, call, Elicitation.objects.select_related("payment").get(pk=elicitation_id_of(question.url))


def test_a_deposit_card_shows_the_amount_and_checkout_link_then_paid(
    server: LiveServer, alice: str, page: Any, booking: int
) -> None:
    with AppsHost(server.mcp_url("apps"), alice) as host:
        view, call, row = pending_card(host, page, "pay_deposit", {"booking_id": booking})
        assert view.locator("#badge").inner_text() == "Waiting for payment"
        assert view.locator("#amount").inner_text() == "20.00 EUR"
        assert view.locator("#description").inner_text() == f"the deposit for booking {booking} (4 on 2026-03-14)"
        assert view.locator("#url").inner_text() == row.url
        screenshot(page, "payment-pending")

        view.locator("#url").click()  # the host opens it (ui/open-link), the sandbox cannot
        page.wait_for_function("() => window.host.links.length === 1")
        assert page.evaluate("() => window.host.links") == [row.url]

        assert deliver(server, payment_event(row)).status_code == 200
        view.locator("body[data-status=completed]").wait_for(timeout=10_000)
        assert view.locator("#badge").inner_text() == "Paid"
        assert view.locator("#url").is_hidden()  # nothing left to open

        result = call.result(timeout=20)
        host.hand_result(page, result)
        view.locator("#result").wait_for(state="visible")
        assert view.locator("#result").inner_text().startswith(f"Booking {booking} confirmed: deposit of 20.00 EUR")
        screenshot(page, "payment-paid")
    assert page.errors == []


def test_a_declined_checkout_shows_declined(server: LiveServer, alice: str, page: Any, booking: int) -> None:
    with AppsHost(server.mcp_url("apps"), alice, answer="decline") as host:
        view = host.show(page, "pay_deposit", {"booking_id": booking})
        call = host.call_in_background("pay_deposit", {"booking_id": booking})
        view.locator("body[data-status=declined]").wait_for(timeout=20_000)
        assert view.locator("#badge").inner_text() == "Declined"
        host.hand_result(page, call.result(timeout=20))
        view.locator("#result").wait_for(state="visible")
        assert "not confirmed" in view.locator("#result").inner_text()
        screenshot(page, "payment-declined")
    assert page.errors == []


def test_an_expired_checkout_shows_expired(server: LiveServer, alice: str, cast: Cast, page: Any) -> None:
    arguments = {"date": "2026-05-02", "party_size": 3}
    with AppsHost(server.mcp_url("apps"), alice) as host:
        view, call, row = pending_card(host, page, "book_table_with_deposit", arguments)
        assert view.locator("#description").inner_text() == "the deposit for a table for 3 on 2026-05-02"
        elicitation_end_by_staff(elicitation=row, action="expire", actor=Actor(Via.STAFF, cast.user("staff")))
        view.locator("body[data-status=expired]").wait_for(timeout=10_000)
        assert view.locator("#badge").inner_text() == "Expired"
        host.hand_result(page, call.result(timeout=20))
        view.locator("#result").wait_for(state="visible")
        assert view.locator("#result").inner_text() == "No booking made."
        screenshot(page, "payment-expired")
    assert page.errors == []


def test_a_host_that_does_not_say_which_tool_still_shows_the_card(
    server: LiveServer, alice: str, page: Any, booking: int
) -> None:
    arguments = {"booking_id": booking}
    with AppsHost(server.mcp_url("apps"), alice) as host:
        view = host.show(page, "pay_deposit", arguments, say_which_tool=False)
        host.call_in_background("pay_deposit", arguments)
        url = host.asked.get(timeout=20).url
        view.locator("body[data-status=pending]").wait_for(timeout=10_000)
        assert view.locator("#url").inner_text() == url
    assert page.errors == []
