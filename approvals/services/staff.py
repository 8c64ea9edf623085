"""What staff do to a pending row, from the admin or the operator API: one table (`STAFF_ACTIONS`)
says what each action ends the row with, and one service (`elicitation_end_by_staff`) applies any
of them, audited with who did it (and the API client it came through)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from django.db import transaction

from approvals.models import Elicitation, Payment
from approvals.outcomes import Cancellation, Decision, Expiry, Outcome, PaidOutOfBand, StaffReceipt
from approvals.services.ending import elicitation_end
from mcpsite.actors import Actor

# (the row, who did it, what they wrote) -> the outcome stored, the audit line
Record = Callable[[Elicitation, str, str], tuple[Outcome, str]]


@dataclass(frozen=True)
class StaffAction:
    done: str  # the past tense staff read in the admin's message ("approved")
    status: Elicitation.Status
    record: Record
    kind: str | None = None  # only a row of this kind; any other raises `WrongKind`


def _decision(decision: Literal["approved", "denied"]) -> Record:
    def record(row: Elicitation, by: str, note: str) -> tuple[Outcome, str]:
        return Decision(decision=decision, note=note, by=by), f"{decision}: {note}" if note else decision

    return record


def _receipt(row: Elicitation, by: str, reason: str) -> tuple[Outcome, str]:
    """Completing by hand claims what nobody confirmed, so it must say why."""
    if not reason.strip():
        raise ValueError("Say why you mark it completed: the reason is kept in the audit trail.")
    payment = Payment.objects.filter(elicitation_id=row.pk).first()
    if payment is None:
        return StaffReceipt(by=by, reason=reason, payment=None), reason
    # The same receipt fields a provider event gives, so tools need no special case.
    paid = PaidOutOfBand(provider_reference=f"staff:{by}", amount=str(payment.amount), currency=payment.currency)
    # The audit line says what the receipt does not: no provider confirmed any money.
    return (
        StaffReceipt(by=by, reason=reason, payment=paid),
        f"completed by hand, no money received through {payment.provider}: {reason}",
    )


def _cancellation(row: Elicitation, by: str, reason: str) -> tuple[Outcome, str]:
    return Cancellation(cancelled_by="staff", by=by, reason=reason), reason


def _expiry(row: Elicitation, by: str, reason: str) -> tuple[Outcome, str]:
    return Expiry(by=by), reason


STAFF_ACTIONS: dict[str, StaffAction] = {
    "approve": StaffAction("approved", Elicitation.Status.COMPLETED, _decision("approved"), Elicitation.Kind.APPROVAL),
    "deny": StaffAction("denied", Elicitation.Status.DECLINED, _decision("denied"), Elicitation.Kind.APPROVAL),
    "complete": StaffAction("completed", Elicitation.Status.COMPLETED, _receipt),
    "cancel": StaffAction("cancelled", Elicitation.Status.CANCELLED, _cancellation),
    "expire": StaffAction("expired", Elicitation.Status.EXPIRED, _expiry),
}


@transaction.atomic
def elicitation_end_by_staff(*, elicitation: Elicitation, action: str, actor: Actor, note: str = "") -> Elicitation:
    """End a pending row as staff (`action`: a key of `STAFF_ACTIONS`; `actor`: the staff member, in
    the admin or through the operator API); `note` is what they wrote (a decision's note, a reason:
    required to complete by hand). Raises `ElicitationNotPending`, `WrongKind` or `ValueError`."""
    act = STAFF_ACTIONS[action]
    by = getattr(actor.user, "get_username", lambda: "")()
    outcome, audit = act.record(elicitation, by, note)
    return elicitation_end(
        elicitation.pk,
        status=act.status,
        outcome=outcome,
        actor=actor,
        kind=act.kind,
        note=audit,
    )
