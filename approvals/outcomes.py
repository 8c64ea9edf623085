"""How an elicitation ended, as `Elicitation.outcome` stores it: one frozen dataclass per JSON shape,
each with one `to_json` and one `from_json`, so the services that write an end and the code that
reads it (the URL-step store, what a tool receives) agree in one place.

The stored JSON is exactly what it was (no migration). `outcome_from_json` tells the shapes apart
by their one distinguishing key; `from_json` reads the way the readers always did (a missing key
reads as empty), so a row written by hand or by an older version still reads. A shape it does
not know is kept as `Unrecognised`, read as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

STAFF_PROVIDER = "staff"


@dataclass(frozen=True)
class ProviderReceipt:
    """Paid: a verified provider event completed the payment (`payment_webhook_apply`)."""

    provider: str
    provider_reference: str
    event_id: str
    amount: str
    currency: str

    def to_json(self) -> dict[str, Any]:
        return {"receipt": self.receipt()}

    def receipt(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "provider_reference": self.provider_reference,
            "event_id": self.event_id,
            "amount": self.amount,
            "currency": self.currency,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ProviderReceipt:
        receipt = data.get("receipt", {})
        return cls(
            provider=str(receipt.get("provider", "")),
            provider_reference=str(receipt.get("provider_reference", "")),
            event_id=str(receipt.get("event_id", "")),
            amount=str(receipt.get("amount", "")),
            currency=str(receipt.get("currency", "")),
        )


@dataclass(frozen=True)
class PaidOutOfBand:
    """What a payment marked done by staff paid: the same fields a provider's receipt has, so a
    tool needs no special case."""

    provider_reference: str
    amount: str
    currency: str


@dataclass(frozen=True)
class StaffReceipt:
    """Staff marked the step done, saying why (staff action "complete"); for a payment, also
    what it paid."""

    by: str
    reason: str
    payment: PaidOutOfBand | None = None

    def to_json(self) -> dict[str, Any]:
        return {"receipt": self.receipt()}

    def receipt(self) -> dict[str, Any]:
        receipt: dict[str, Any] = {"by": self.by, "reason": self.reason, "provider": STAFF_PROVIDER}
        if self.payment is not None:
            receipt |= {
                "provider_reference": self.payment.provider_reference,
                "amount": self.payment.amount,
                "currency": self.payment.currency,
            }
        return receipt

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StaffReceipt:
        receipt = data.get("receipt", {})
        payment = (
            PaidOutOfBand(
                provider_reference=str(receipt["provider_reference"]),
                amount=str(receipt.get("amount", "")),
                currency=str(receipt.get("currency", "")),
            )
            if "provider_reference" in receipt
            else None
        )
        return cls(by=str(receipt.get("by", "")), reason=str(receipt.get("reason", "")), payment=payment)


@dataclass(frozen=True)
class Decision:
    """A staff decision on an approval (staff action "approve" or "deny"): approved completes it, denied declines it."""

    decision: Literal["approved", "denied"]
    note: str
    by: str

    def to_json(self) -> dict[str, Any]:
        return {"decision": self.decision, "note": self.note, "by": self.by}

    def receipt(self) -> dict[str, Any]:
        return self.to_json()

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Decision:
        decision: Literal["approved", "denied"] = "approved" if data.get("decision") == "approved" else "denied"
        return cls(decision=decision, note=str(data.get("note", "")), by=str(data.get("by", "")))


@dataclass(frozen=True)
class ConsentAnswer:
    """The user's answer on the consent page (`consent_give`)."""

    given: bool

    def to_json(self) -> dict[str, Any]:
        return {"consent": "given" if self.given else "refused"}

    def receipt(self) -> dict[str, Any]:
        return self.to_json()

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ConsentAnswer:
        return cls(given=data.get("consent") == "given")


@dataclass(frozen=True)
class Cancellation:
    """Cancelled: by the user or client (`source`), or by staff, who also say who and why."""

    cancelled_by: str
    by: str | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"cancelled_by": self.cancelled_by}
        if self.by is not None:
            data["by"] = self.by
        if self.reason is not None:
            data["reason"] = self.reason
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Cancellation:
        by, reason = data.get("by"), data.get("reason")
        return cls(
            cancelled_by=str(data.get("cancelled_by", "")),
            by=None if by is None else str(by),
            reason=None if reason is None else str(reason),
        )


@dataclass(frozen=True)
class Declination:
    """The client declined to open the URL (`elicitation_decline`)."""

    declined_by: str

    def to_json(self) -> dict[str, Any]:
        return {"declined_by": self.declined_by}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Declination:
        return cls(declined_by=str(data.get("declined_by", "")))


@dataclass(frozen=True)
class Expiry:
    """Nobody finished it in time: the beat (in bulk, `ElicitationQuerySet.expire`) or staff (`by`)."""

    by: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"expired": True} if self.by is None else {"expired": True, "by": self.by}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Expiry:
        by = data.get("by")
        return cls(by=None if by is None else str(by))


@dataclass(frozen=True)
class Unrecognised:
    """A stored shape none of the above (a row written by hand); read the way readers always did."""

    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return dict(self.data)

    def receipt(self) -> dict[str, Any]:
        return dict(self.data.get("receipt", self.data))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Unrecognised:
        return cls(data=dict(data))


Outcome = ProviderReceipt | StaffReceipt | Decision | ConsentAnswer | Cancellation | Declination | Expiry | Unrecognised


def outcome_from_json(data: Mapping[str, Any]) -> Outcome:
    """The typed outcome of a stored ``Elicitation.outcome``, told apart by its distinguishing key."""
    if isinstance(data.get("receipt"), Mapping):
        if data["receipt"].get("provider") == STAFF_PROVIDER:
            return StaffReceipt.from_json(data)
        return ProviderReceipt.from_json(data)
    if "decision" in data:
        return Decision.from_json(data)
    if "consent" in data:
        return ConsentAnswer.from_json(data)
    if "cancelled_by" in data:
        return Cancellation.from_json(data)
    if "declined_by" in data:
        return Declination.from_json(data)
    if "expired" in data:
        return Expiry.from_json(data)
    return Unrecognised.from_json(data)


def receipt_of(outcome: Outcome) -> dict[str, Any]:
    """What a tool receives for a completed step (`Completed.receipt`): the receipt of a payment or
    a staff completion, else the decision or consent itself."""
    if isinstance(outcome, ProviderReceipt | StaffReceipt | Decision | ConsentAnswer | Unrecognised):
        return outcome.receipt()
    return outcome.to_json()


def note_of(outcome: Outcome) -> str:
    """The note a declined step carries to the tool (`Declined.note`): a staff denial's."""
    if isinstance(outcome, Decision):
        return outcome.note
    if isinstance(outcome, Unrecognised):
        return str(outcome.data.get("note", ""))
    return ""


def cancelled_by_of(outcome: Outcome) -> str:
    """Who cancelled (`Cancelled.reason`)."""
    if isinstance(outcome, Cancellation):
        return outcome.cancelled_by
    if isinstance(outcome, Unrecognised):
        return str(outcome.data.get("cancelled_by", ""))
    return ""


def _quoted(text: str) -> str:
    return f"\N{LEFT DOUBLE QUOTATION MARK}{text}\N{RIGHT DOUBLE QUOTATION MARK}"


def sentence_of(outcome: Outcome) -> str:
    """How a step ended, as staff read it on its admin page (the stored JSON is kept beside it)."""
    if isinstance(outcome, ProviderReceipt):
        return (
            f"Paid {outcome.amount} {outcome.currency} through {outcome.provider}, "
            f"receipt {outcome.provider_reference} (event {outcome.event_id})."
        )
    if isinstance(outcome, StaffReceipt):
        if outcome.payment is not None:
            return (
                f"Completed by hand by {outcome.by or 'staff'}: no money was received through a provider; "
                f"the client was told {outcome.payment.amount} {outcome.payment.currency} was paid. "
                f"Reason: {_quoted(outcome.reason)}."
            )
        return f"Completed by hand by {outcome.by or 'staff'}. Reason: {_quoted(outcome.reason)}."
    if isinstance(outcome, Decision):
        with_note = f" with note {_quoted(outcome.note)}" if outcome.note else ", without a note"
        return f"{outcome.decision.capitalize()} by {outcome.by or 'staff'}{with_note}."
    if isinstance(outcome, ConsentAnswer):
        return "Consent given by the user." if outcome.given else "Consent refused by the user."
    if isinstance(outcome, Cancellation):
        # "checkout page": how rows cancelled there before the sources had names say it
        sources = {
            "user": "the payer on the checkout page",
            "checkout page": "the payer on the checkout page",
            "client": "the client",
        }
        who = f"{outcome.by} (staff)" if outcome.by else sources.get(outcome.cancelled_by, outcome.cancelled_by)
        reason = f" Reason: {_quoted(outcome.reason)}." if outcome.reason else ""
        return f"Cancelled by {who}.{reason}"
    if isinstance(outcome, Declination):
        return f"Declined by the {outcome.declined_by or 'client'}: the URL was not opened."
    if isinstance(outcome, Expiry):
        if outcome.by:
            return f"Expired by {outcome.by} (staff)."
        return "Expired: nobody finished it in time."
    return "Ended with an outcome this version does not know; see the stored record below."
