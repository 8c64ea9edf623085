"""Deployed (Redis broker, one Celery worker with two slots and the beat, started here), one
member's long tasks hold no worker slot: another tenant's 0-second task is done within 2 s, and
the beat's jobs go on meanwhile: an expired task is swept, another tenant's notification is sent,
and the audit rows of the quick task's call (handed to Redis by the web process) and of its run
(by the worker) are written by the beat's drain. (Before, two long task bodies held both slots of
the one queue everything shared.)"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from audit.models import ToolCall
from mcp_tasks.models import Task
from mcpsite.models import Tenant
from notifications import services as notifications
from notifications.models import Delivery, EventType
from tests.conftest import ROOT, Cast, LiveServer
from tests.notifications.conftest import Receiver
from tests.tasks.conftest import rpc, serve, start, wait_for

LIMITS = {
    "MCPSITE_TASKS_IN_PROCESS": "0",  # runs go to the broker's `tasks` queue
    "MCPSITE_TASKS_MAX_RUNNING_PER_TENANT": "3",
    "MCPSITE_TASKS_MAX_RUNNING_PER_PRINCIPAL": "2",
    "MCPSITE_TASKS_SWEEP_EVERY_SECONDS": "1",
    "MCPSITE_NOTIFICATIONS_SEND_EVERY_SECONDS": "0.5",
    "MCPSITE_NOTIFICATIONS_TIMEOUT_SECONDS": "1",
    "MCPSITE_NOTIFICATIONS_ALLOW_LOOPBACK": "1",
    "MCPSITE_AUDIT_WRITER": "redis",  # as deployed: rows built and written by the beat's drain
    "MCPSITE_AUDIT_QUEUE_KEY": f"test:audit:deployed:{uuid.uuid4().hex}",
    "MCPSITE_AUDIT_FLUSH_SECONDS": "0.2",
}


@pytest.fixture
def web(server_factory: Callable[..., LiveServer]) -> LiveServer:
    return server_factory(**LIMITS)


@pytest.fixture
def worker(web: LiveServer, tmp_path: Path) -> Iterator[Path]:
    """`celery -A config worker --beat` with two prefork slots, taking every queue, as a small
    deployment runs it; yields its log once it is ready."""
    log_path = tmp_path / "worker.log"
    command = [sys.executable, "-m", "celery", "-A", "config", "worker", "--beat", "--pool=prefork"]
    options = ["--concurrency=2", f"--schedule={tmp_path / 'beat-schedule'}", "--without-gossip", "--without-mingle"]
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [*command, *options, "--loglevel=INFO"], cwd=ROOT, env=web.env, stdout=log, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + 60
        while "ready." not in log_path.read_text(errors="replace"):
            assert process.poll() is None, log_path.read_text(errors="replace")
            assert time.monotonic() < deadline, f"worker not ready:\n{log_path.read_text(errors='replace')}"
            time.sleep(0.2)
        yield log_path
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    monkeypatch.setitem(settings.NOTIFICATIONS, "ALLOW_LOOPBACK", True)  # this process makes the endpoint
    receiver = Receiver().start()
    yield receiver
    receiver.stop()


def test_deployed_a_members_long_tasks_leave_other_tenants_tasks_expiry_and_notifications_running(
    web: LiveServer, worker: Path, receiver: Receiver, cast: Cast
) -> None:
    busy = serve(web, "deployed-busy", ["alice"], cast)
    quiet = serve(web, "deployed-quiet", ["mallory"], cast)
    alice, mallory = cast.token(web, "alice", "deployed-busy"), cast.token(web, "mallory", "deployed-quiet")
    longs = [start(busy, alice, seconds=120) for _ in range(4)]
    endpoint = notifications.endpoint_create(
        url=receiver.url, event_types=[EventType.APPROVAL_PENDING], tenant=Tenant.objects.get(slug="deployed-quiet")
    )
    try:
        deadline = time.monotonic() + 20
        while Task.objects.filter(pk__in=longs).exclude(worker="").count() < 2:
            assert time.monotonic() < deadline, "the long tasks did not start"
            time.sleep(0.1)

        begun = time.monotonic()
        quick = start(quiet, mallory, seconds=0, title="quick")
        task = wait_for(quiet, mallory, quick, "completed", timeout=2.0)
        assert task["result"]["content"] == [{"type": "text", "text": "quick: done after 0s"}]
        assert time.monotonic() - begun < 2.0

        now = timezone.now()
        expired = Task.objects.create(
            tenant=Tenant.objects.get(slug="deployed-quiet"),
            tool="long_report",
            status=Task.Status.COMPLETED,
            result={"content": []},
            ttl_ms=1,
            poll_interval_ms=1000,
            created_at=now - timedelta(hours=1),
            expires_at=now - timedelta(minutes=1),
        )
        Delivery.objects.create(endpoint=endpoint, event_type=EventType.APPROVAL_PENDING, payload={"n": "quiet"})

        receiver.wait_for(1, timeout=5.0)  # the beat's send, every 0.5 s
        deadline = time.monotonic() + 5.0  # the beat's sweep, every second
        while Task.objects.filter(pk=expired.pk).exists():
            assert time.monotonic() < deadline, "the expired task was not swept within 5 s"
            time.sleep(0.1)
        assert Task.objects.filter(pk__in=longs, status=Task.Status.WORKING).count() == 4  # still running or waiting
        deadline = time.monotonic() + 5.0  # flushed every 0.2 s, drained every second
        wanted = {(ToolCall.Outcome.TASK, ""), (ToolCall.Outcome.RESULT, quick)}
        while not wanted <= set(
            ToolCall.objects.filter(tenant__slug="deployed-quiet").values_list("outcome", "task_id")
        ):
            assert time.monotonic() < deadline, "the quick task's audit rows were not written within 5 s"
            time.sleep(0.1)
    finally:
        for task_id in longs:
            rpc(busy, "tasks/cancel", {"taskId": task_id}, alice)
        notifications.endpoint_delete(endpoint=endpoint)
