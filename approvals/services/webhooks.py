"""Payment-provider deliveries: verified, recorded once, and applied to the payment they pay."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from django.db import IntegrityError, transaction

from approvals import signals
from approvals.exceptions import ApprovalsError
from approvals.models import Elicitation, Payment, WebhookDelivery
from approvals.outcomes import ProviderReceipt
from approvals.providers import PaymentEvent, UnknownProvider, WebhookRejected, get_provider
from approvals.services.ending import elicitation_end
from mcpsite import metrics
from mcpsite.actors import Actor, Via

logger = logging.getLogger(__name__)


class DuplicateDelivery(ApprovalsError):
    """This provider event was already received; it changes nothing a second time."""

    def __init__(self, *, provider: str, event_id: str) -> None:
        super().__init__(f"{provider} event {event_id} was already received")
        self.provider = provider
        self.event_id = event_id


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
            elicitation_end(
                row.pk,
                status=Elicitation.Status.COMPLETED,
                outcome=receipt,
                event=delivery,
                actor=Actor(Via.WEBHOOK),
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
