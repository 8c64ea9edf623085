"""Tenants take turns for outgoing notifications: one tenant with 300 due deliveries to a receiver
that never answers does not hold back another tenant's one, which arrives within the first send
after it is due (the server is the embedded default; its beat sends every 0.2 s)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import timedelta

from django.utils import timezone

from notifications.models import Delivery, Endpoint, EventType
from tests.conftest import LiveServer
from tests.notifications.conftest import HANG, Receiver

BACKLOG = 300
ARRIVES_WITHIN_SECONDS = 3.0  # ~one send tick plus one post; the backlog alone takes minutes to drain


def test_another_tenants_notification_arrives_within_3_seconds_behind_a_backlog_of_300(
    server: LiveServer, receiver_factory: Callable[..., Receiver], endpoint_factory: Callable[..., Endpoint]
) -> None:
    dead = receiver_factory(default=HANG)  # takes each post and never answers
    alive = receiver_factory()
    busy = endpoint_factory(dead, [EventType.APPROVAL_PENDING], slug="demo")
    quiet = endpoint_factory(alive, [EventType.APPROVAL_PENDING], slug="other")
    an_hour_ago = timezone.now() - timedelta(hours=1)  # older than anything: first in line by age
    Delivery.objects.bulk_create(
        Delivery(endpoint=busy, event_type=EventType.APPROVAL_PENDING, payload={"n": n}, next_attempt_at=an_hour_ago)
        for n in range(BACKLOG)
    )

    begun = time.monotonic()
    ours = Delivery.objects.create(endpoint=quiet, event_type=EventType.APPROVAL_PENDING, payload={"n": "ours"})

    received = alive.wait_for(1, timeout=ARRIVES_WITHIN_SECONDS)
    assert received[0].at - begun < ARRIVES_WITHIN_SECONDS
    assert json.loads(received[0].body) == {"n": "ours"}
    assert received[0].headers["webhook-id"] == ours.pk
    # the backlog is still there: most of it waits (four at a time in flight to the dead receiver)
    assert Delivery.objects.filter(endpoint=busy, status=Delivery.Status.PENDING).count() == BACKLOG
