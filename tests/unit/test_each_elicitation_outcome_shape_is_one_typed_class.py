"""Every JSON shape `Elicitation.outcome` stores is one typed class with one `to_json`/`from_json`;
the stored JSON is what it always was, and what a tool receives from it is unchanged."""

from __future__ import annotations

from typing import Any

import pytest

from approvals.outcomes import (
    Cancellation,
    ConsentAnswer,
    Decision,
    Declination,
    Expiry,
    Outcome,
    PaidOutOfBand,
    ProviderReceipt,
    StaffReceipt,
    Unrecognised,
    cancelled_by_of,
    note_of,
    outcome_from_json,
    receipt_of,
)

WEBHOOK_RECEIPT = {
    "provider": "sandbox",
    "provider_reference": "cs_1",
    "event_id": "evt_1",
    "amount": "20.00",
    "currency": "EUR",
}
STORED: list[tuple[Outcome, dict[str, Any]]] = [
    (
        ProviderReceipt(
            provider="sandbox", provider_reference="cs_1", event_id="evt_1", amount="20.00", currency="EUR"
        ),
        {"receipt": WEBHOOK_RECEIPT},
    ),
    (
        StaffReceipt(by="staff", reason="paid by phone"),
        {"receipt": {"by": "staff", "reason": "paid by phone", "provider": "staff"}},
    ),
    (
        StaffReceipt(
            by="staff",
            reason="bank transfer",
            payment=PaidOutOfBand(provider_reference="staff:staff", amount="20.00", currency="EUR"),
        ),
        {
            "receipt": {
                "by": "staff",
                "reason": "bank transfer",
                "provider": "staff",
                "provider_reference": "staff:staff",
                "amount": "20.00",
                "currency": "EUR",
            }
        },
    ),
    (
        Decision(decision="approved", note="goodwill", by="staff"),
        {"decision": "approved", "note": "goodwill", "by": "staff"},
    ),
    (Decision(decision="denied", note="", by="staff"), {"decision": "denied", "note": "", "by": "staff"}),
    (ConsentAnswer(given=True), {"consent": "given"}),
    (ConsentAnswer(given=False), {"consent": "refused"}),
    (Cancellation(cancelled_by="client"), {"cancelled_by": "client"}),
    (Cancellation(cancelled_by="staff", by="staff", reason=""), {"cancelled_by": "staff", "by": "staff", "reason": ""}),
    (Declination(declined_by="client"), {"declined_by": "client"}),
    (Expiry(), {"expired": True}),
    (Expiry(by="staff"), {"expired": True, "by": "staff"}),
]


@pytest.mark.parametrize(("outcome", "stored"), STORED)
def test_each_elicitation_outcome_shape_is_one_typed_class(outcome: Outcome, stored: dict[str, Any]) -> None:
    assert outcome.to_json() == stored
    assert outcome_from_json(stored) == outcome


@pytest.mark.parametrize(("outcome", "stored"), STORED)
def test_what_a_tool_receives_from_an_outcome_is_unchanged(outcome: Outcome, stored: dict[str, Any]) -> None:
    # How the framework read the stored JSON before the shapes were typed.
    assert receipt_of(outcome) == dict(stored.get("receipt", stored))
    assert note_of(outcome) == str(stored.get("note", ""))
    assert cancelled_by_of(outcome) == str(stored.get("cancelled_by", ""))


def test_a_shape_written_by_hand_reads_as_before() -> None:
    by_hand = {"decision": "denied", "note": "lost event"}
    assert note_of(outcome_from_json(by_hand)) == "lost event"
    assert outcome_from_json({}) == Unrecognised(data={})
    assert receipt_of(outcome_from_json({"paid": "yes"})) == {"paid": "yes"}
