"""One tool asks a form question (the date is full: another date?) and then for a payment; the
form answer survives the URL-mode rounds, each is asked once, and the booking is made once paid."""

from __future__ import annotations

import pytest

from approvals.models import Elicitation
from demo.models import Booking
from tests.approvals.conftest import CallInThread, deliver, elicitation_id_of, payment_event
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import MODES


@pytest.mark.parametrize("mode", MODES)
def test_full_date_asks_for_another_then_takes_the_deposit(server: LiveServer, cast: Cast, mode: str) -> None:
    party_size = 11 if mode == "legacy" else 12  # a reference of its own per generation
    call = CallInThread(
        server.mcp_url(),
        cast.token(server),
        mode,
        "book_table_with_deposit",
        {"date": "2025-12-25", "party_size": party_size},
        form_answer={"accept_alternative": True, "date": "2025-12-28"},
    ).start()
    question = call.next_question()
    assert question.message == f"Please pay 20.00 EUR for the deposit for a table for {party_size} on 2025-12-28."
    row = Elicitation.objects.get(pk=elicitation_id_of(question.url))

    deliver(server, payment_event(row))

    call.join()
    booking = Booking.objects.filter(date="2025-12-28", party_size=party_size).latest("pk")
    assert call.text == (
        f"Booked a table for {party_size} on 2025-12-28 (booking {booking.pk}); deposit of 20.00 EUR paid."
    )
    assert call.forms == [f"No tables for {party_size} on 2025-12-25. Would you like to try another date?"]
    assert call.asked.empty()  # the URL was asked once
