"""Workflows over elicitation rows. Resolvers, views, admin actions and Celery tasks call these.

Every way a row ends (webhook, staff decision, the end user on a page, expiry) goes through
`_end`, which locks the row, lets the model guard the transition, and publishes one
``approvals.resolved`` event after commit. That event wakes a waiting 2026-07-28 round and makes
the process holding a 2025-11-25 session send ``notifications/elicitation/complete``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Literal

from asgiref.sync import async_to_sync
from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from approvals import signals
from approvals.conf import approvals_settings
from approvals.exceptions import ApprovalsError
from approvals.models import (
    Elicitation,
    ElicitationEvent,
    Payment,
    WebhookDelivery,
    new_elicitation_id,
)
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
)
from approvals.providers import DEFAULT_PROVIDER, PaymentEvent, UnknownProvider, WebhookRejected, get_provider
from mcpsite import broadcast, metrics
from mcpsite.models import Tenant
from mcpsite.net import address_bucket
from tools_app.principal import Principal

logger = logging.getLogger(__name__)

RESOLVED_EVENT = "approvals.resolved"


class DuplicateDelivery(ApprovalsError):
    """This provider event was already received; it changes nothing a second time."""

    def __init__(self, *, provider: str, event_id: str) -> None:
        super().__init__(f"{provider} event {event_id} was already received")
        self.provider = provider
        self.event_id = event_id


class TooManyPending(ApprovalsError):
    """The person already has `limit` unfinished steps at this tenant (through any of their
    OAuth clients); no new row is opened."""

    def __init__(self, *, limit: int) -> None:
        super().__init__(
            f"You have {limit} unfinished payments, approvals or consents here, the most allowed at once. "
            "Finish or cancel one, or wait for one to expire, then call again."
        )
        self.limit = limit


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


@dataclass(frozen=True)
class PaymentTerms:
    amount: Decimal
    currency: str
    description: str = ""
    provider: str = DEFAULT_PROVIDER


# --- opening ------------------------------------------------------------------------------


def _page_url(kind: str, elicitation_id: str, provider: str) -> str:
    if kind == Elicitation.Kind.PAYMENT:
        return get_provider(provider).checkout_url(elicitation_id=elicitation_id)
    name = "approvals:consent" if kind == Elicitation.Kind.CONSENT else "approvals:status"
    return f"{settings.SITE_ROOT}{reverse(name, args=[elicitation_id])}"


def elicitation_open(
    *,
    tenant_id: int,
    principal: Principal,
    tool: str,
    args_digest: str,
    kind: str,
    reference: str,
    message: str,
    payment: PaymentTerms | None = None,
    amount: Decimal | None = None,
    currency: str = "",
    expires_in: float | None = None,
    known_ids: Iterable[str] = (),
    client_address: str = "",
) -> Elicitation:
    """The row for this step of this call: the one the client was already shown (`known_ids`,
    from its requestState), else the live one for the same call, else a new one. A payment is
    the same step for every client of the same user (`for_charge`: tenant, user, reference), so
    a booking paid, or waiting to be paid, through one client is not charged again through another.

    Idempotent under concurrency: openings at one tenant take its lock (`_lock_openings`) and
    look again under it; without row locks (SQLite) two rounds racing to create the row meet at
    the ``one_live_elicitation_per_call`` / ``one_pending_payment_per_user`` constraints and
    both return the winner's row.
    A new row needs room under ``APPROVALS["MAX_PENDING_PER_PRINCIPAL"]``, else `TooManyPending`:
    counted per person, and for a caller without a token (a public tenant) per ``client_address``
    (an IPv6 client by its /64), kept on the row for that.
    A new row's audit trail starts with its opening (source "client": the call that asked).
    `amount`/`currency`: the sum an approval is about (a refund); a payment's is in its terms.
    """
    if (kind == Elicitation.Kind.PAYMENT) != (payment is not None):
        raise ValueError("a payment elicitation needs payment terms, and only a payment has them")
    same = (
        Elicitation.objects.for_charge(tenant_id=tenant_id, principal=principal, reference=reference)
        if kind == Elicitation.Kind.PAYMENT
        else Elicitation.objects.for_call(
            tenant_id=tenant_id, principal=principal, tool=tool, args_digest=args_digest, reference=reference
        )
    )
    known = list(known_ids)
    if known:
        row = same.filter(pk__in=known).order_by("-created_at").first()
        if row is not None:
            return row
    row = same.live().first()
    if row is not None:
        return row
    now = timezone.now()
    elicitation_id = new_elicitation_id()
    client_id, issuer, subject = principal
    client_address = address_bucket(client_address) if principal == ("", "", "") else ""
    try:
        with transaction.atomic():
            _lock_openings(tenant_id=tenant_id)
            # Another round (another client of the same user, for a payment) may have opened
            # the row, or had it paid, since the look above; under the lock nothing else opens one.
            row = same.live().first()
            if row is not None:
                return row
            _make_room(tenant_id=tenant_id, principal=principal, client_address=client_address, now=now)
            row = Elicitation.objects.create(
                id=elicitation_id,
                tenant_id=tenant_id,
                client_id=client_id,
                issuer=issuer,
                subject=subject,
                client_address=client_address,
                tool=tool,
                args_digest=args_digest,
                reference=reference,
                kind=kind,
                message=message,
                url=_page_url(kind, elicitation_id, payment.provider if payment else DEFAULT_PROVIDER),
                created_at=now,
                expires_at=now + timedelta(seconds=expires_in or approvals_settings()["EXPIRES_SECONDS"]),
                amount=amount,
                currency=currency,
            )
            ElicitationEvent.objects.create(
                elicitation=row,
                at=now,
                source=ElicitationEvent.Source.CLIENT,
                status=row.status,
                note=f"opened by {tool} ({reference})",
            )
            if payment is not None:
                Payment.objects.create(
                    elicitation=row,
                    amount=payment.amount,
                    currency=payment.currency,
                    description=payment.description,
                    provider=payment.provider,
                )
            if kind == Elicitation.Kind.APPROVAL:
                signals.approval_pending.send(sender=Elicitation, elicitation=row)
    except IntegrityError:
        return same.live().get()
    logger.info("elicitation %s opened: %s %s for %s", row.pk, kind, reference, tool)
    return row


def _lock_openings(*, tenant_id: int) -> None:
    """Serialize opening rows at one tenant on the tenant row (FOR NO KEY UPDATE: it does not
    block inserts that merely reference the tenant), so concurrent calls cannot both take the
    last place under the cap, nor both open the same step. Only a new row pays for this; a
    repeat reuses its row before getting here."""
    list(Tenant.objects.select_for_update(no_key=True).filter(pk=tenant_id).values_list("pk", flat=True))


def _make_room(*, tenant_id: int, principal: Principal, client_address: str, now: datetime) -> None:
    """Refuse a new row beyond the person's cap (junk arguments must not open rows without end),
    counted across their OAuth clients (`open_for`). Called under `_lock_openings`."""
    limit = approvals_settings()["MAX_PENDING_PER_PRINCIPAL"]
    open_rows = Elicitation.objects.open_for(tenant_id=tenant_id, principal=principal, now=now)
    if principal == ("", "", ""):  # callers without a token are one principal: count each by address
        open_rows = open_rows.filter(client_address=client_address)
    if open_rows.count() >= limit:
        raise TooManyPending(limit=limit)


# --- ending -------------------------------------------------------------------------------


def publish_resolved(elicitation_id: str) -> bool:
    """Send the ``approvals.resolved`` event now; True once it left. A failure is retried by
    `elicitations_republish` (beat), because the row stays unpublished."""
    row = Elicitation.objects.filter(pk=elicitation_id).values("status").first()
    if row is None:
        return False
    return _publish_ended({elicitation_id: row["status"]}) == 1


def _publish_ended(statuses: Mapping[str, str]) -> int:
    """Send one ``approvals.resolved`` event per row (id -> status), then mark the ones that left
    as published in one UPDATE. Stops at the first failure: the rest stay unpublished for
    `elicitations_republish` (receivers deduplicate). Returns how many left."""
    sent: list[str] = []

    async def send_all() -> None:
        for elicitation_id, status in statuses.items():
            await broadcast.apublish({"type": RESOLVED_EVENT, "elicitation": elicitation_id, "status": status})
            sent.append(elicitation_id)

    try:
        async_to_sync(send_all)()
    except Exception:
        unsent = len(statuses) - len(sent)
        logger.exception("could not publish the end of %d elicitation(s); the beat task retries", unsent)
    if sent:
        Elicitation.objects.filter(pk__in=sent, published_at__isnull=True).update(published_at=timezone.now())
    return len(sent)


def _end(
    elicitation_id: str,
    *,
    status: Elicitation.Status,
    outcome: Outcome,
    event: WebhookDelivery | None = None,
    user: AbstractBaseUser | None = None,
    kind: str | None = None,
    source: ElicitationEvent.Source,
    note: str = "",
    oauth_client: str = "",
) -> Elicitation:
    """Lock, end, audit and save one row; publish after commit. Raises `ElicitationNotPending`.

    `oauth_client`: the client id a staff action came through the operator API with (source "api").
    """
    row = Elicitation.objects.select_for_update().get(pk=elicitation_id)
    if kind is not None and row.kind != kind:
        raise WrongKind(elicitation=row, expected=kind)
    row.resolve(status=status, outcome=outcome.to_json(), event=event, user=user)
    row.save(update_fields=["status", "outcome", "completed_at", "completed_by_event", "completed_by_user"])
    actor_id = user.pk if user is not None and getattr(user, "is_authenticated", False) else None
    ElicitationEvent.objects.create(
        elicitation=row,
        actor_id=actor_id,
        source=ElicitationEvent.Source.API if oauth_client else source,
        oauth_client=oauth_client,
        status=status,
        note=note,
    )
    transaction.on_commit(lambda: publish_resolved(row.pk))
    signals.elicitations_ended.send(sender=Elicitation, elicitation_ids=[row.pk])
    logger.info("elicitation %s %s", row.pk, status)
    return row


@transaction.atomic
def approval_decide(
    *, elicitation: Elicitation, user: AbstractBaseUser, approve: bool, note: str = "", oauth_client: str = ""
) -> Elicitation:
    """A staff decision on an approval: approved completes it, denied declines it.
    `oauth_client`: the API client it came through (each staff action below takes it too)."""
    decision: Literal["approved", "denied"] = "approved" if approve else "denied"
    by = getattr(user, "get_username", lambda: "")()
    return _end(
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
def consent_give(*, elicitation: Elicitation, user: AbstractBaseUser | AnonymousUser, agree: bool) -> Elicitation:
    """The end user's answer on the consent page; only the row's own principal may give it, and
    who answered is recorded (`completed_by_user`, the audit event's actor).

    Raises `NotYours` (nothing changes) or `ElicitationNotPending`.
    """
    # The principal columns never change after the row is opened, so checking the caller's copy
    # before `_end` locks the row is as good as checking the locked one.
    # (An anonymous user is nobody's principal: `belongs_to` says so; the isinstance tells mypy.)
    if isinstance(user, AnonymousUser) or not elicitation.belongs_to(user):
        raise NotYours(elicitation=elicitation, user=user)
    return _end(
        elicitation.pk,
        status=Elicitation.Status.COMPLETED if agree else Elicitation.Status.DECLINED,
        outcome=ConsentAnswer(given=agree),
        user=user,
        kind=Elicitation.Kind.CONSENT,
        source=ElicitationEvent.Source.USER,
    )


@transaction.atomic
def elicitation_cancel(*, elicitation: Elicitation, source: ElicitationEvent.Source) -> Elicitation:
    """The user cancelled (checkout page) or the client declined to open the URL."""
    return _end(
        elicitation.pk, status=Elicitation.Status.CANCELLED, outcome=Cancellation(cancelled_by=source), source=source
    )


@transaction.atomic
def elicitation_decline(*, elicitation: Elicitation, source: ElicitationEvent.Source) -> Elicitation:
    return _end(
        elicitation.pk, status=Elicitation.Status.DECLINED, outcome=Declination(declined_by=source), source=source
    )


# --- staff actions (admin) ------------------------------------------------------------------


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
    return _end(
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
    return _end(
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
    return _end(
        elicitation.pk,
        status=Elicitation.Status.EXPIRED,
        outcome=outcome,
        user=user,
        source=ElicitationEvent.Source.STAFF,
        note=reason,
        oauth_client=oauth_client,
    )


def elicitations_expire(*, now: datetime | None = None) -> int:
    """Expire pending rows past their expiry, a batch per transaction, for at most
    ``APPROVALS["EXPIRE_TICK_SECONDS"]`` (what is left waits for the next tick). Returns how many."""
    conf = approvals_settings()
    size, deadline = conf["EXPIRE_BATCH_SIZE"], time.monotonic() + conf["EXPIRE_TICK_SECONDS"]
    expired = 0
    while True:
        ended = _expire_batch(now=now or timezone.now(), size=size)
        expired += ended
        if ended < size or time.monotonic() >= deadline:
            return expired


@transaction.atomic
def _expire_batch(*, now: datetime, size: int) -> int:
    """Expire up to `size` stale rows as `_end` would end each: status, audit row, and the
    ``approvals.resolved`` event after commit; in a bounded number of queries.

    1. Lock the oldest stale rows, skipping rows another transaction holds (a webhook completing
       one: it wins, and a skipped row that is still stale is taken by a later batch).
    2. One UPDATE ends those still pending (`ElicitationQuerySet.expire`; never a completed row).
    3. Without row locks (SQLite), a row may have ended between 1 and 2: read back which rows
       this UPDATE ended (their `completed_at` is this batch's timestamp).
    4. One INSERT of the audit rows; the events leave after commit.
    """
    ids = list(
        Elicitation.objects.stale(now)
        .select_for_update(skip_locked=True)
        .order_by("expires_at")
        .values_list("pk", flat=True)[:size]
    )
    if not ids:
        return 0
    stamp = timezone.now()
    if Elicitation.objects.filter(pk__in=ids).expire(now=stamp) != len(ids):
        ids = list(
            Elicitation.objects.filter(pk__in=ids, status=Elicitation.Status.EXPIRED, completed_at=stamp).values_list(
                "pk", flat=True
            )
        )
    ElicitationEvent.objects.bulk_create(
        ElicitationEvent(
            elicitation_id=pk, at=stamp, source=ElicitationEvent.Source.BEAT, status=Elicitation.Status.EXPIRED
        )
        for pk in ids
    )
    statuses = dict.fromkeys(ids, str(Elicitation.Status.EXPIRED))
    transaction.on_commit(lambda: _publish_ended(statuses))
    signals.elicitations_ended.send(sender=Elicitation, elicitation_ids=ids)
    logger.info("%d elicitation(s) expired", len(ids))
    return len(ids)


def elicitations_republish(*, older_than_seconds: float = 10.0) -> int:
    """Re-send the events a crash or a broker outage kept from leaving (receivers deduplicate)."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    rows = Elicitation.objects.unpublished(cutoff).values_list("pk", "status")[:500]
    return _publish_ended(dict(rows))


# --- webhooks -----------------------------------------------------------------------------


def _matches(payment: Payment, event: PaymentEvent) -> bool:
    return event.amount == payment.amount and event.currency == payment.currency


@transaction.atomic
def payment_webhook_apply(*, event: PaymentEvent) -> WebhookDelivery:
    """Record a verified provider event once and, if it pays a pending payment, complete it.

    1. Claim the event id (a unique row): a duplicate delivery raises `DuplicateDelivery`
       and changes nothing; concurrent duplicates wait on the first and then fail the claim.
    2. Lock the elicitation. Unknown, already ended, or a different amount: the delivery is
       recorded and flagged for staff (money arrived for nothing), the row is left alone.
    3. Otherwise complete the row; its event leaves after commit.
    """
    try:
        with transaction.atomic():
            delivery = WebhookDelivery.objects.create(
                provider=event.provider,
                event_id=event.event_id,
                event_type=event.type,
                payload=event.payload,
                outcome=WebhookDelivery.Outcome.IGNORED,
            )
    except IntegrityError:
        raise DuplicateDelivery(provider=event.provider, event_id=event.event_id) from None
    if event.type != "checkout.session.completed" or not event.paid:
        return delivery
    row = (
        Elicitation.objects.select_for_update().filter(pk=event.elicitation_id, kind=Elicitation.Kind.PAYMENT).first()
        if event.elicitation_id
        else None
    )
    if row is None:
        delivery.outcome, delivery.flagged = WebhookDelivery.Outcome.UNKNOWN_ELICITATION, True
    elif not row.is_pending:
        delivery.outcome, delivery.flagged, delivery.elicitation = WebhookDelivery.Outcome.NOT_PENDING, True, row
    else:
        payment = Payment.objects.get(elicitation=row)
        delivery.elicitation = row
        if not _matches(payment, event):
            delivery.outcome, delivery.flagged = WebhookDelivery.Outcome.MISMATCH, True
        else:
            receipt = ProviderReceipt(
                provider=event.provider,
                provider_reference=event.provider_reference,
                event_id=event.event_id,
                amount=str(payment.amount),
                currency=payment.currency,
            )
            payment.provider_reference = event.provider_reference
            payment.save(update_fields=["provider_reference"])
            _end(
                row.pk,
                status=Elicitation.Status.COMPLETED,
                outcome=receipt,
                event=delivery,
                source=ElicitationEvent.Source.WEBHOOK,
                note=f"{delivery.provider} event {delivery.event_id}",
            )
            delivery.outcome = WebhookDelivery.Outcome.COMPLETED
    delivery.save(update_fields=["outcome", "flagged", "elicitation"])
    if delivery.flagged:
        signals.payment_flagged.send(
            sender=WebhookDelivery, delivery=delivery, amount=event.amount, currency=event.currency
        )
        logger.warning("webhook %s %s flagged for staff: %s", event.provider, event.event_id, delivery.outcome)
    return delivery


def webhook_receive(*, provider: str, body: bytes, headers: Mapping[str, str]) -> WebhookDelivery:
    """The receiver every delivery goes through (a provider's POST, or the sandbox's Pay button).

    Raises `UnknownProvider`, `WebhookRejected` (nothing changed) or `DuplicateDelivery`. Each
    delivery is counted by provider and result (`mcpsite.metrics`).
    """
    try:
        event = get_provider(provider).parse_webhook(body=body, headers=headers)
    except UnknownProvider:
        metrics.count_webhook(provider=provider, known=False, result="unknown_provider")
        raise
    except WebhookRejected:
        metrics.count_webhook(provider=provider, known=True, result="rejected")
        raise
    try:
        delivery = payment_webhook_apply(event=event)
    except DuplicateDelivery:
        metrics.count_webhook(provider=provider, known=True, result="duplicate")
        raise
    metrics.count_webhook(provider=provider, known=True, result=delivery.outcome)
    return delivery
