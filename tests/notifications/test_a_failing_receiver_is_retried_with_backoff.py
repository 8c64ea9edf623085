"""A receiver that answers 500 twice and then 200 gets three attempts, each later than the last
by the exponential backoff, all with the same message id; the event ends delivered. A redirect
is not followed: it is a failed attempt, retried to the URL that was checked."""

from __future__ import annotations

from collections.abc import Callable

from notifications import services
from notifications.models import Delivery, Endpoint
from tests.conftest import Cast, LiveServer
from tests.notifications.conftest import BACKOFF_BASE_SECONDS, Receiver, verify, wait_for_status
from tests.operate.scrape import moved, scrape


def test_a_receiver_answering_500_twice_then_200_gets_three_attempts_with_backoff(
    server: LiveServer,
    cast: Cast,
    receiver_factory: Callable[..., Receiver],
    endpoint_factory: Callable[..., Endpoint],
) -> None:
    receiver = receiver_factory(answers=[500, 500])
    endpoint = endpoint_factory(receiver, [], slug="demo")
    before = scrape(server.url)

    delivery = wait_for_status(services.endpoint_send_test(endpoint=endpoint), Delivery.Status.DELIVERED)

    attempts = list(delivery.attempt_rows.order_by("started_at"))
    assert [a.status_code for a in attempts] == [500, 500, 200]
    assert delivery.attempts == 3
    after = scrape(server.url)  # the server's beat sent them: its counters say so
    assert moved(before, after, "mcpsite_notification_attempts_total", result="refused") == 2
    assert moved(before, after, "mcpsite_notification_attempts_total", result="delivered") == 1
    first, second, third = (a.started_at for a in attempts)
    # Retry n waits BASE * 2**(n-1), jittered to 50-100 %: at least 0.5 s, then at least 1 s.
    assert (second - first).total_seconds() >= 0.5 * BACKOFF_BASE_SECONDS
    assert (third - second).total_seconds() >= 1.0 * BACKOFF_BASE_SECONDS
    received = receiver.wait_for(3)
    assert {r.headers["webhook-id"] for r in received} == {delivery.pk}
    assert all(verify(endpoint.secret, r)["data"]["endpoint"] == endpoint.pk for r in received)


def test_a_redirect_is_not_followed(
    server: LiveServer,
    cast: Cast,
    receiver_factory: Callable[..., Receiver],
    endpoint_factory: Callable[..., Endpoint],
) -> None:
    elsewhere = receiver_factory()
    receiver = receiver_factory(answers=[302], redirect_to=elsewhere.url)
    endpoint = endpoint_factory(receiver, [], slug="demo")

    delivery = wait_for_status(services.endpoint_send_test(endpoint=endpoint), Delivery.Status.DELIVERED)

    assert [a.status_code for a in delivery.attempt_rows.order_by("started_at")] == [302, 200]
    assert len(receiver.received) == 2
    assert elsewhere.received == []
