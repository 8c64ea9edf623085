"""Staff read how a step ended as a sentence (the admin's "How it ended"), one for every stored
shape, never the raw JSON; a shape this version does not know says so."""

from __future__ import annotations

import pytest

from approvals.outcomes import outcome_from_json, sentence_of

L, R = "\N{LEFT DOUBLE QUOTATION MARK}", "\N{RIGHT DOUBLE QUOTATION MARK}"
PAID = {"provider": "sandbox", "provider_reference": "cs_1", "event_id": "evt_1", "amount": "20.00", "currency": "EUR"}
BY_HAND = {"by": "staff", "reason": "bank transfer 991", "provider": "staff", "provider_reference": "staff:staff"}


@pytest.mark.parametrize(
    ("stored", "sentence"),
    [
        ({"receipt": PAID}, "Paid 20.00 EUR through sandbox, receipt cs_1 (event evt_1)."),
        (
            {"receipt": {**BY_HAND, "amount": "20.00", "currency": "EUR"}},
            "Completed by hand by staff: no money was received through a provider; the client was told "
            f"20.00 EUR was paid. Reason: {L}bank transfer 991{R}.",
        ),
        (
            {"receipt": {"by": "ops", "reason": "asked in person", "provider": "staff"}},
            f"Completed by hand by ops. Reason: {L}asked in person{R}.",
        ),
        ({"decision": "denied", "note": "no receipt", "by": "staff"}, f"Denied by staff with note {L}no receipt{R}."),
        ({"decision": "approved", "note": "", "by": "staff"}, "Approved by staff, without a note."),
        ({"consent": "given"}, "Consent given by the user."),
        ({"consent": "refused"}, "Consent refused by the user."),
        ({"cancelled_by": "checkout page"}, "Cancelled by the payer on the checkout page."),
        ({"cancelled_by": "user"}, "Cancelled by the payer on the checkout page."),
        ({"cancelled_by": "client"}, "Cancelled by the client."),
        (
            {"cancelled_by": "staff", "by": "staff", "reason": "duplicate"},
            f"Cancelled by staff (staff). Reason: {L}duplicate{R}.",
        ),
        ({"declined_by": "client"}, "Declined by the client: the URL was not opened."),
        ({"expired": True}, "Expired: nobody finished it in time."),
        ({"expired": True, "by": "staff"}, "Expired by staff (staff)."),
        ({"something": "else"}, "Ended with an outcome this version does not know; see the stored record below."),
    ],
)
def test_each_outcome_reads_as_a_sentence(stored: dict[str, object], sentence: str) -> None:
    assert sentence_of(outcome_from_json(stored)) == sentence
