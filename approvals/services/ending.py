"""The one gate where every elicitation ends (`elicitation_end`), and the end user's own answers.

Every way a row ends (webhook, staff decision, the end user on a page, expiry in bulk) goes through
`elicitation_end`, which locks the row, lets the model guard the transition, audits it, and
publishes one ``approvals.resolved`` event after commit (`approvals.services.publishing`).
"""

from __future__ import annotations

import logging

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import transaction

from approvals import signals
from approvals.exceptions import ApprovalsError
from approvals.models import Elicitation, ElicitationEvent, WebhookDelivery
from approvals.outcomes import Cancellation, ConsentAnswer, Declination, Outcome
from approvals.services.publishing import publish_resolved
from mcpsite.actors import Actor, Via

logger = logging.getLogger(__name__)


class WrongKind(ApprovalsError, ValueError):
    def __init__(self, *, elicitation: Elicitation, expected: str) -> None:
        super().__init__(f"elicitation {elicitation.pk} is a {elicitation.kind}, not a {expected}")
        self.elicitation = elicitation


class NotYours(ApprovalsError, PermissionError):
    """Someone other than the row's principal tried to answer it (another member, another
    tenant's user, or anyone at all for a row that names no principal)."""

    def __init__(self, *, elicitation: Elicitation, user: AbstractBaseUser | AnonymousUser) -> None:
        super().__init__(f"elicitation {elicitation.pk} is not {getattr(user, 'pk', None)!r}'s to answer")
        self.elicitation = elicitation
        self.user = user


def elicitation_end(
    elicitation_id: str,
    *,
    status: Elicitation.Status,
    outcome: Outcome,
    event: WebhookDelivery | None = None,
    actor: Actor,
    kind: str | None = None,
    note: str = "",
) -> Elicitation:
    """Lock, end, audit and save one row as `actor` ended it; publish after commit. Raises
    `ElicitationNotPending`."""
    row = Elicitation.objects.select_for_update().get(pk=elicitation_id)
    if kind is not None and row.kind != kind:
        raise WrongKind(elicitation=row, expected=kind)
    row.resolve(status=status, outcome=outcome.to_json(), event=event, user=actor.person)
    row.save(update_fields=["status", "outcome", "completed_at", "completed_by_event", "completed_by_user"])
    ElicitationEvent.objects.create(elicitation=row, status=status, note=note, **actor.audit_fields())
    transaction.on_commit(lambda: publish_resolved(row.pk))
    signals.elicitations_ended.send(sender=Elicitation, elicitation_ids=[row.pk])
    logger.info("elicitation %s %s", row.pk, status)
    return row


@transaction.atomic
def consent_give(*, elicitation: Elicitation, user: AbstractBaseUser | AnonymousUser, agree: bool) -> Elicitation:
    """The end user's answer on the consent page; only the row's own principal may give it, and
    who answered is recorded (`completed_by_user`, the audit event's actor).

    Raises `NotYours` (nothing changes) or `ElicitationNotPending`.
    """
    # The principal columns never change after the row is opened, so checking the caller's copy
    # before `elicitation_end` locks the row is as good as checking the locked one.
    # (An anonymous user is nobody's principal: `belongs_to` says so; the isinstance tells mypy.)
    if isinstance(user, AnonymousUser) or not elicitation.belongs_to(user):
        raise NotYours(elicitation=elicitation, user=user)
    return elicitation_end(
        elicitation.pk,
        status=Elicitation.Status.COMPLETED if agree else Elicitation.Status.DECLINED,
        outcome=ConsentAnswer(given=agree),
        actor=Actor(Via.USER, user),
        kind=Elicitation.Kind.CONSENT,
    )


@transaction.atomic
def elicitation_cancel(*, elicitation: Elicitation, actor: Actor) -> Elicitation:
    """The user cancelled (checkout page) or the client declined to open the URL."""
    return elicitation_end(
        elicitation.pk, status=Elicitation.Status.CANCELLED, outcome=Cancellation(cancelled_by=actor.via), actor=actor
    )


@transaction.atomic
def elicitation_decline(*, elicitation: Elicitation, actor: Actor) -> Elicitation:
    return elicitation_end(
        elicitation.pk, status=Elicitation.Status.DECLINED, outcome=Declination(declined_by=actor.via), actor=actor
    )
