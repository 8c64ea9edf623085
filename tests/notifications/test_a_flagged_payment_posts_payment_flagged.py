"""Money for no elicitation (a signed provider webhook) is flagged for staff, and the site-wide
endpoint receives a signed ``payment.flagged``; a tenant's endpoint does not (no tenant's event)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from approvals.models import WebhookDelivery
from approvals.providers.sandbox import checkout_completed_event
from notifications.models import Delivery, Endpoint, EventType
from tests.approvals.conftest import deliver
from tests.conftest import Cast, LiveServer
from tests.notifications.conftest import Receiver, verify, wait_for_status


def test_a_flagged_payment_posts_payment_flagged_to_the_site_wide_endpoint(
    server: LiveServer,
    cast: Cast,
    receiver_factory: Callable[..., Receiver],
    endpoint_factory: Callable[..., Endpoint],
) -> None:
    site_receiver, tenant_receiver = receiver_factory(), receiver_factory()
    site = endpoint_factory(site_receiver, [EventType.PAYMENT_FLAGGED], slug=None)
    tenant = endpoint_factory(tenant_receiver, [EventType.PAYMENT_FLAGGED], slug="demo")
    event = checkout_completed_event(
        elicitation_id="el_nothing_like_it", provider_reference="cs_test_flag", amount=Decimal("20.00"), currency="EUR"
    )

    response = deliver(server, event)

    assert (response.status_code, response.json()) == (
        200,
        {"received": True, "outcome": "unknown_elicitation", "flagged": True},
    )
    flagged = WebhookDelivery.objects.get(event_id=event["id"])
    [received] = site_receiver.wait_for(1)
    assert verify(site.secret, received) == {
        "type": "payment.flagged",
        "timestamp": Delivery.objects.get(endpoint=site).payload["timestamp"],
        "data": {
            "tenant": None,
            "provider": "sandbox",
            "provider_event": event["id"],
            "outcome": "unknown_elicitation",
            "elicitation": None,
            "amount": "20.00",
            "currency": "EUR",
            "admin_url": f"{server.url}/admin/approvals/webhookdelivery/{flagged.pk}/change/",
        },
    }
    wait_for_status(Delivery.objects.get(endpoint=site), Delivery.Status.DELIVERED)
    assert not Delivery.objects.filter(endpoint=tenant).exists()
    assert tenant_receiver.received == []
