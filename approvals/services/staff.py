"""What staff do to a pending row, from the admin or the operator API; each is audited with who
did it (and the API client it came through)."""

from __future__ import annotations

from typing import Literal

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction

from approvals.models import Elicitation, ElicitationEvent, Payment
from approvals.outcomes import Cancellation, Decision, Expiry, PaidOutOfBand, StaffReceipt
from approvals.services.ending import elicitation_end


@transaction.atomic
def approval_decide(
    *, elicitation: Elicitation, user: AbstractBaseUser, approve: bool, note: str = "", oauth_client: str = ""
) -> Elicitation:
    """A staff decision on an approval: approved completes it, denied declines it.
    `oauth_client`: the API client it came through (each staff action below takes it too)."""
    decision: Literal["approved", "denied"] = "approved" if approve else "denied"
    by = getattr(user, "get_username", lambda: "")()
    return elicitation_end(
        elicitation.pk,
        status=Elicitation.Status.COMPLETED if approve else Elicitation.Status.DECLINED,
        outcome=Decision(decision=decision, note=note, by=by),
        user=user,
        kind=Elicitation.Kind.APPROVAL,
        source=ElicitationEvent.Source.STAFF,
        note=f"{decision}: {note}" if note else decision,
        oauth_client=oauth_client,
    )


@transaction.atomic
def elicitation_complete_by_staff(
    *, elicitation: Elicitation, user: AbstractBaseUser, reason: str, oauth_client: str = ""
) -> Elicitation:
    """Staff mark a step done (e.g. a payment confirmed out of band); the reason is required and audited."""
    if not reason.strip():
        raise ValueError("Say why you mark it completed: the reason is kept in the audit trail.")
    by = getattr(user, "get_username", lambda: "")()
    payment = Payment.objects.filter(elicitation_id=elicitation.pk).first()
    # The same receipt fields a provider event gives, so tools need no special case.
    paid = (
        PaidOutOfBand(provider_reference=f"staff:{by}", amount=str(payment.amount), currency=payment.currency)
        if payment is not None
        else None
    )
    return elicitation_end(
        elicitation.pk,
        status=Elicitation.Status.COMPLETED,
        outcome=StaffReceipt(by=by, reason=reason, payment=paid),
        user=user,
        source=ElicitationEvent.Source.STAFF,
        # The audit line says what the receipt does not: no provider confirmed any money.
        note=f"completed by hand, no money received through {payment.provider}: {reason}" if payment else reason,
        oauth_client=oauth_client,
    )


@transaction.atomic
def elicitation_cancel_by_staff(
    *, elicitation: Elicitation, user: AbstractBaseUser, reason: str = "", oauth_client: str = ""
) -> Elicitation:
    by = getattr(user, "get_username", lambda: "")()
    outcome = Cancellation(cancelled_by="staff", by=by, reason=reason)
    return elicitation_end(
        elicitation.pk,
        status=Elicitation.Status.CANCELLED,
        outcome=outcome,
        user=user,
        source=ElicitationEvent.Source.STAFF,
        note=reason,
        oauth_client=oauth_client,
    )


@transaction.atomic
def elicitation_expire_by_staff(
    *, elicitation: Elicitation, user: AbstractBaseUser, reason: str = "", oauth_client: str = ""
) -> Elicitation:
    outcome = Expiry(by=getattr(user, "get_username", lambda: "")())
    return elicitation_end(
        elicitation.pk,
        status=Elicitation.Status.EXPIRED,
        outcome=outcome,
        user=user,
        source=ElicitationEvent.Source.STAFF,
        note=reason,
        oauth_client=oauth_client,
    )
