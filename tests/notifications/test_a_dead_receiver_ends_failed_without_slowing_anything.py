"""A receiver that never answers: each attempt gives up after the timeout, the event ends failed
after the last attempt, and meanwhile an MCP call and a provider webhook are answered at once
(delivery runs on the beat's senders, never on a request's thread)."""

from __future__ import annotations

import time
from collections.abc import Callable
from decimal import Decimal

from approvals.providers.sandbox import checkout_completed_event
from notifications.models import Delivery, Endpoint, EventType
from tests.approvals.conftest import deliver
from tests.conftest import Cast, LiveServer
from tests.notifications.conftest import (
    HANG,
    MAX_ATTEMPTS,
    TIMEOUT_SECONDS,
    Receiver,
    ask_refund,
    settle,
    wait_for_status,
)


def test_a_dead_receiver_ends_failed_after_max_attempts_and_slows_no_call_or_webhook(
    server: LiveServer,
    cast: Cast,
    receiver_factory: Callable[..., Receiver],
    endpoint_factory: Callable[..., Endpoint],
) -> None:
    receiver = receiver_factory(default=HANG)
    tenant = endpoint_factory(receiver, [EventType.APPROVAL_PENDING], slug="demo")
    site = endpoint_factory(receiver, [EventType.PAYMENT_FLAGGED], slug=None)

    refund = ask_refund(server, cast, "H-1")  # its event goes to the hanging receiver
    try:
        receiver.wait_for(1)  # the receiver now holds a post open
        again = ask_refund(server, cast, "H-2")
        started = time.monotonic()
        event = checkout_completed_event(
            elicitation_id="el_nothing_here", provider_reference="cs_test_hang", amount=Decimal("5.00"), currency="EUR"
        )
        response = deliver(server, event)
        webhook_answered_in = time.monotonic() - started
        hanging = [r for r in receiver.received if time.monotonic() - r.at < TIMEOUT_SECONDS]

        assert again.asked_in < 3.0, f"the MCP call waited {again.asked_in:.1f}s"
        assert (response.status_code, response.json()["flagged"]) == (200, True)
        assert webhook_answered_in < 1.0, f"the webhook waited {webhook_answered_in:.1f}s"
        assert hanging, "no post was in flight while the call and the webhook were answered"

        deliveries = list(Delivery.objects.filter(endpoint__in=[tenant, site]))
        assert sorted(d.event_type for d in deliveries) == ["approval.pending", "approval.pending", "payment.flagged"]
        for delivery in deliveries:
            delivery = wait_for_status(delivery, Delivery.Status.FAILED, timeout=30)
            attempts = list(delivery.attempt_rows.all())
            assert (delivery.attempts, delivery.next_attempt_at) == (MAX_ATTEMPTS, None)
            assert [(a.status_code, a.error) for a in attempts] == [(None, "no answer within 1 s")] * MAX_ATTEMPTS
            assert all(TIMEOUT_SECONDS <= a.duration_seconds < TIMEOUT_SECONDS + 1 for a in attempts)
        settle(again, cast)
    finally:
        settle(refund, cast)
