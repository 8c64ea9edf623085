"""A real client's request_refund opens a staff approval; the tenant's endpoint receives a signed
``approval.pending`` event that a receiver verifies with the endpoint's secret."""

from __future__ import annotations

from collections.abc import Callable

from notifications.models import Delivery, Endpoint, EventType
from tests.conftest import Cast, LiveServer
from tests.notifications.conftest import Receiver, ask_refund, settle, verify, wait_for_status


def test_opening_an_approval_posts_a_signed_approval_pending_to_the_tenants_endpoint(
    server: LiveServer,
    cast: Cast,
    receiver_factory: Callable[..., Receiver],
    endpoint_factory: Callable[..., Endpoint],
) -> None:
    receiver = receiver_factory()
    endpoint = endpoint_factory(receiver, [EventType.APPROVAL_PENDING], slug="demo")

    refund = ask_refund(server, cast, "N-1")
    try:
        [received] = receiver.wait_for(1)
        event = verify(endpoint.secret, received)

        delivery = Delivery.objects.get(endpoint=endpoint)
        assert received.headers["webhook-id"] == delivery.pk
        assert delivery.pk.startswith("msg_") and len(delivery.pk) == 28
        assert received.headers["webhook-signature"].startswith("v1,")
        assert event["type"] == "approval.pending"
        assert event["data"] == {
            "tenant": "demo",
            "elicitation": refund.row.pk,
            "kind": "approval",
            "tool": "request_refund",
            "reference": refund.row.reference,
            "amount": "12.50",
            "currency": "EUR",
            "expires_at": refund.row.expires_at.isoformat(),
            "admin_url": f"{server.url}/admin/approvals/elicitation/{refund.row.pk.replace('_', '_5F')}/change/",
        }
        delivery = wait_for_status(delivery, Delivery.Status.DELIVERED)
        assert delivery.attempts == 1
        [attempt] = delivery.attempt_rows.all()
        assert (attempt.status_code, attempt.response_excerpt, attempt.error) == (200, "ok", "")
    finally:
        settle(refund, cast)
