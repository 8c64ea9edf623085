"""A backlog of due deliveries to a receiver that answers at once is sent batch after batch
within one beat tick, not one batch (four posts: the endpoint's in-flight cap) a tick: 100 due
deliveries arrive within a few 5-second intervals of the embedded beat (the first tick may be one
interval away, and a loaded machine may miss one), where one batch a tick took 25 ticks (two
minutes)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator

import pytest

from notifications.models import Delivery, Endpoint, EventType
from tests.conftest import LiveServer
from tests.notifications.conftest import Receiver

BACKLOG = 100
SEND_EVERY_SECONDS = 5.0


@pytest.fixture
def slow_beat(server_factory: Callable[..., LiveServer]) -> Iterator[LiveServer]:
    server = server_factory(
        MCPSITE_REDIS_URL="",  # the embedded default: the in-process beat sends
        MCPSITE_NOTIFICATIONS_ALLOW_LOOPBACK="1",
        MCPSITE_NOTIFICATIONS_SEND_EVERY_SECONDS=str(SEND_EVERY_SECONDS),
    )
    yield server
    server.stop()


def test_a_backlog_of_100_to_a_healthy_receiver_arrives_within_three_beat_intervals(
    slow_beat: LiveServer, receiver_factory: Callable[..., Receiver], endpoint_factory: Callable[..., Endpoint]
) -> None:
    receiver = receiver_factory()
    endpoint = endpoint_factory(receiver, [EventType.APPROVAL_PENDING], slug="demo")
    begun = time.monotonic()
    Delivery.objects.bulk_create(
        Delivery(endpoint=endpoint, event_type=EventType.APPROVAL_PENDING, payload={"n": n}) for n in range(BACKLOG)
    )

    # Three intervals: the first tick may be 5 s away and a loaded machine may run one late; one
    # batch a tick would need 25.
    bound = 3 * SEND_EVERY_SECONDS + 2
    received = receiver.wait_for(BACKLOG, timeout=bound)

    assert time.monotonic() - begun < bound
    assert sorted(json.loads(r.body)["n"] for r in received) == list(range(BACKLOG))
    deadline = time.monotonic() + 2  # the last answers are recorded just after they arrive
    while Delivery.objects.filter(endpoint=endpoint, status=Delivery.Status.DELIVERED).count() < BACKLOG:
        assert time.monotonic() < deadline, "the deliveries the receiver got are not all recorded delivered"
        time.sleep(0.05)
