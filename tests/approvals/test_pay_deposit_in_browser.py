"""The whole payment, in both generations: the client is asked to open the checkout URL, headless
Chromium opens it and clicks Pay, the sandbox's signed webhook completes the row, and the
waiting call answers with the confirmed booking."""

from __future__ import annotations

from typing import Any

import pytest

from approvals.models import Elicitation, WebhookDelivery
from tests.approvals.conftest import CallInThread, elicitation_id_of
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import MODES


@pytest.mark.parametrize("mode", MODES)
def test_paying_in_the_browser_confirms_the_booking(
    server: LiveServer, cast: Cast, page: Any, booking: int, mode: str
) -> None:
    call = CallInThread(server.mcp_url(), cast.token(server), mode, "pay_deposit", {"booking_id": booking}).start()
    question = call.next_question()
    assert question.mode == "url"
    assert question.message == f"Please pay 20.00 EUR for the deposit for booking {booking} (4 on 2026-03-14)."

    # The checkout page needs no sign-in (it stands in for a provider's), nor does what follows Pay.
    page.goto(question.url)
    assert page.text_content("#amount") == "20.00 EUR"
    page.click("text=Pay")
    page.wait_for_selector("#status[data-status=completed]")
    assert page.text_content("#status").strip() == "Payment received. Thank you."

    call.join()
    row = Elicitation.objects.select_related("payment").get(pk=elicitation_id_of(question.url))
    assert row.status == Elicitation.Status.COMPLETED
    receipt = row.outcome["receipt"]
    assert call.text == (
        f"Booking {booking} confirmed: deposit of 20.00 EUR paid (receipt {receipt['provider_reference']})."
    )
    assert row.reference == f"deposit-{booking}"
    assert row.payment.provider_reference == receipt["provider_reference"]
    assert row.completed_by_event == WebhookDelivery.objects.get(event_id=receipt["event_id"])
    if mode == "legacy":
        assert question.elicitation_id == row.pk
