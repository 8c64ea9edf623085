"""The same provider event delivered five times at once, to two processes: one completion,
one notification, four duplicates answered 200."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from approvals.models import Elicitation, WebhookDelivery
from tests.approvals.conftest import CallInThread, deliver, payment_event
from tests.conftest import Cast, LiveServer


def test_five_concurrent_deliveries_complete_once_and_notify_once(
    server: LiveServer, server_factory: Callable[..., LiveServer], cast: Cast, booking: int
) -> None:
    other = server_factory(MCPSITE_SITE_ROOT=server.url)
    try:
        call = CallInThread(
            server.mcp_url(), cast.token(server), "legacy", "pay_deposit", {"booking_id": booking}, linger=1.5
        )
        row = Elicitation.objects.get(pk=call.start().next_question().elicitation_id)
        event = payment_event(row)

        with ThreadPoolExecutor(5) as pool:
            replies = list(pool.map(lambda i: deliver((server, other)[i % 2], event).json(), range(5)))

        assert sorted(r.get("outcome", "duplicate") for r in replies) == ["completed"] + ["duplicate"] * 4
        assert WebhookDelivery.objects.filter(event_id=event["id"]).count() == 1
        call.join()
        assert call.text.startswith(f"Booking {booking} confirmed")
        assert call.completed == [row.pk]
    finally:
        other.stop()
