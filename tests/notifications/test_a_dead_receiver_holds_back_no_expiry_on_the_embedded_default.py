"""On the embedded default the beat runs each queue's jobs on a thread of its own: while every
notifications tick waits out a receiver that never answers, the housekeeping jobs go on (an
expired task is swept within a second or two, not after the hanging posts)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest
from django.utils import timezone

from mcp_tasks.models import Task
from mcpsite.models import Tenant
from notifications.models import Delivery, Endpoint, EventType
from tests.conftest import LiveServer
from tests.notifications.conftest import HANG, HANG_SECONDS, Receiver

SWEEP_EVERY_SECONDS = 0.5
SWEPT_WITHIN_SECONDS = 2.0  # the hanging posts hold each notifications tick for HANG_SECONDS (6 s)


@pytest.fixture
def embedded(server_factory: Callable[..., LiveServer]) -> Iterator[LiveServer]:
    server = server_factory(
        MCPSITE_REDIS_URL="",
        MCPSITE_NOTIFICATIONS_ALLOW_LOOPBACK="1",
        MCPSITE_NOTIFICATIONS_SEND_EVERY_SECONDS="0.2",
        MCPSITE_NOTIFICATIONS_TIMEOUT_SECONDS=str(HANG_SECONDS + 2),  # the receiver hangs up first
        MCPSITE_TASKS_SWEEP_EVERY_SECONDS=str(SWEEP_EVERY_SECONDS),
    )
    yield server
    server.stop()


def test_an_expired_task_is_swept_while_notifications_wait_on_a_dead_receiver(
    embedded: LiveServer, receiver_factory: Callable[..., Receiver], endpoint_factory: Callable[..., Endpoint]
) -> None:
    dead = receiver_factory(default=HANG)
    endpoint = endpoint_factory(dead, [EventType.APPROVAL_PENDING], slug="demo")
    Delivery.objects.bulk_create(
        Delivery(endpoint=endpoint, event_type=EventType.APPROVAL_PENDING, payload={"n": n}) for n in range(8)
    )
    dead.wait_for(1)  # a notifications tick is now waiting on it
    now = timezone.now()
    expired = Task.objects.create(
        tenant=Tenant.objects.get(slug="demo"),
        tool="long_report",
        status=Task.Status.COMPLETED,
        result={"content": []},
        ttl_ms=1,
        poll_interval_ms=1000,
        created_at=now - timedelta(hours=1),
        expires_at=now - timedelta(minutes=1),
    )

    begun = time.monotonic()
    while Task.objects.filter(pk=expired.pk).exists():
        assert time.monotonic() - begun < SWEPT_WITHIN_SECONDS, "the sweep waited behind the hanging posts"
        time.sleep(0.05)
