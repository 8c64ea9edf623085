"""Turn the source apps' signals into recorded events (connected in `NotificationsConfig.ready`).

Each runs inside the transaction of the change (see `approvals.signals`), so the delivery rows
commit or roll back with it. Payloads carry ids and what an operator acts on, never a secret,
a token or a requestState.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib.admin.utils import quote
from django.dispatch import receiver
from django.urls import reverse

from approvals.models import Elicitation, WebhookDelivery
from approvals.signals import approval_pending, payment_flagged
from mcpsite.models import KeyRingEvent, Tenant
from mcpsite.signals import keyring_changed
from notifications import services
from notifications.models import Endpoint, EventType


def _admin_url(name: str, pk: int | str) -> str:
    return f"{settings.SITE_ROOT}{reverse(name, args=[quote(pk)])}"


def _money(amount: Decimal | None) -> str | None:
    return None if amount is None else f"{amount:.2f}"  # as stored (2 places), whatever the caller held


@receiver(approval_pending)
def on_approval_pending(elicitation: Elicitation, **_: Any) -> None:
    endpoints = Endpoint.objects.subscribed(event_type=EventType.APPROVAL_PENDING, tenant_id=elicitation.tenant_id)
    if not endpoints:
        return  # the common case: nobody listens, so no payload is built
    data = {
        "tenant": Tenant.objects.values_list("slug", flat=True).get(pk=elicitation.tenant_id),
        "elicitation": elicitation.pk,
        "kind": elicitation.kind,
        "tool": elicitation.tool,
        "reference": elicitation.reference,
        "amount": _money(elicitation.amount),
        "currency": elicitation.currency or None,
        "expires_at": elicitation.expires_at.isoformat(),
        "admin_url": _admin_url("admin:approvals_elicitation_change", elicitation.pk),
    }
    services.event_record(
        event_type=EventType.APPROVAL_PENDING, tenant_id=elicitation.tenant_id, data=data, endpoints=endpoints
    )


@receiver(payment_flagged)
def on_payment_flagged(
    delivery: WebhookDelivery, amount: Decimal | None = None, currency: str | None = None, **_: Any
) -> None:
    row = delivery.elicitation
    tenant_id = row.tenant_id if row is not None else None
    endpoints = Endpoint.objects.subscribed(event_type=EventType.PAYMENT_FLAGGED, tenant_id=tenant_id)
    if not endpoints:
        return
    data = {
        "tenant": Tenant.objects.values_list("slug", flat=True).get(pk=tenant_id) if tenant_id else None,
        "provider": delivery.provider,
        "provider_event": delivery.event_id,
        "outcome": delivery.outcome,
        "elicitation": row.pk if row is not None else None,
        "amount": _money(amount),
        "currency": currency,
        "admin_url": _admin_url("admin:approvals_webhookdelivery_change", delivery.pk),
    }
    services.event_record(event_type=EventType.PAYMENT_FLAGGED, tenant_id=tenant_id, data=data, endpoints=endpoints)


@receiver(keyring_changed)
def on_keyring_changed(event: KeyRingEvent, **_: Any) -> None:
    data = {
        "action": event.action,
        "kid": event.kid,
        "note": event.note,
        "admin_url": f"{settings.SITE_ROOT}{reverse('admin:mcpsite_requeststatekey_changelist')}",
    }
    services.event_record(event_type=EventType.KEYRING_CHANGED, tenant_id=None, data=data)
