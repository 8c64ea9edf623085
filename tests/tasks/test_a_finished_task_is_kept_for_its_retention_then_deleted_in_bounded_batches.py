"""A task that ends is kept ``FINISHED_KEEP_SECONDS`` (an hour) within its TTL, and its ttlMs says
so; the sweep deletes what is past retention, keeps a finished task inside it and a live task, and
deletes at most ``DELETE_BATCH_SIZE`` x ``DELETE_BATCHES_PER_SWEEP`` rows a run (the rest next run)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from mcp_tasks import services
from mcp_tasks.models import Task
from mcpsite.actors import Actor, Via
from mcpsite.models import Tenant

pytestmark = pytest.mark.django_db


def task(*, status: Task.Status = Task.Status.WORKING, expires_in: timedelta = timedelta(hours=24)) -> Task:
    now = timezone.now()
    return Task.objects.create(
        tenant=Tenant.objects.get(slug="demo"),
        client_id="c",
        issuer="i",
        subject="s",
        tool="long_report",
        status=status,
        result={"content": []} if status == Task.Status.COMPLETED else None,
        ttl_ms=24 * 3600 * 1000,
        poll_interval_ms=1000,
        created_at=now - timedelta(minutes=5),
        expires_at=now + expires_in,
        worker="w" if status == Task.Status.WORKING else "",
    )


def test_a_task_that_completes_is_kept_an_hour_and_its_ttl_says_so() -> None:
    running = task()
    finished = timezone.now()
    done = services.Outcome(status=Task.Status.COMPLETED, result={"content": []})

    assert services.task_finish(task_id=running.pk, worker="w", outcome=done)

    running.refresh_from_db()
    assert finished + timedelta(minutes=59) < running.expires_at <= timezone.now() + timedelta(hours=1)
    assert running.wire(detailed=True)["ttlMs"] == running.ttl_ms
    assert running.ttl_ms == int((running.expires_at - running.created_at).total_seconds() * 1000)


def test_a_cancelled_task_is_kept_an_hour_too() -> None:
    waiting = task(status=Task.Status.INPUT_REQUIRED)

    services.task_cancel(task_id=waiting.pk, tenant_id=waiting.tenant_id, principal=None, actor=Actor(Via.STAFF))

    waiting.refresh_from_db()
    assert waiting.expires_at <= timezone.now() + timedelta(hours=1)
    assert waiting.ttl_ms < 70 * 60 * 1000


def test_a_task_asking_again_keeps_its_ttl() -> None:
    running = task()
    asks = services.Outcome(status=Task.Status.INPUT_REQUIRED, input_requests={"q": {}}, request_state="s")

    assert services.task_finish(task_id=running.pk, worker="w", outcome=asks)

    running.refresh_from_db()
    assert running.ttl_ms == 24 * 3600 * 1000
    assert running.expires_at > timezone.now() + timedelta(hours=23)


def test_the_sweep_deletes_finished_tasks_past_retention_and_keeps_the_others() -> None:
    past = task(status=Task.Status.COMPLETED, expires_in=timedelta(seconds=-1))
    inside = task(status=Task.Status.COMPLETED, expires_in=timedelta(minutes=30))
    live = task(status=Task.Status.INPUT_REQUIRED)

    assert services.tasks_sweep().deleted == 1

    assert set(Task.objects.filter(pk__in=[past.pk, inside.pk, live.pk])) == {inside, live}


def test_one_sweep_deletes_a_bounded_number_and_the_next_the_rest(settings: Any) -> None:
    settings.TASKS = {**settings.TASKS, "DELETE_BATCH_SIZE": 2, "DELETE_BATCHES_PER_SWEEP": 2}
    backlog = [task(status=Task.Status.COMPLETED, expires_in=timedelta(minutes=-m)) for m in range(1, 6)]
    kept = task(status=Task.Status.COMPLETED, expires_in=timedelta(minutes=30))

    assert services.tasks_sweep().deleted == 4
    assert list(Task.objects.filter(pk__in=[t.pk for t in backlog])) == [backlog[0]]  # the newest expired waits
    assert services.tasks_sweep().deleted == 1
    assert list(Task.objects.filter(pk__in=[*(t.pk for t in backlog), kept.pk])) == [kept]
