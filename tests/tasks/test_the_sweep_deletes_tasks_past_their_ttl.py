"""The beat's sweep deletes tasks past their TTL, whatever their status, and leaves the others;
``tasks/get`` stops answering for an expired task even before the sweep ran."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from mcp_tasks import services
from mcp_tasks.models import Task
from mcpsite.models import Tenant
from tools_app.principal import Principal


def task(*, status: Task.Status, expires_in: timedelta) -> Task:
    now = timezone.now()
    return Task.objects.create(
        tenant=Tenant.objects.get(slug="demo"),
        client_id="c",
        issuer="i",
        subject="s",
        tool="long_report",
        status=status,
        result={"content": []} if status == Task.Status.COMPLETED else None,
        ttl_ms=1000,
        poll_interval_ms=1000,
        created_at=now - timedelta(hours=2),
        expires_at=now + expires_in,
    )


@pytest.mark.django_db
def test_the_sweep_deletes_expired_tasks_only() -> None:
    expired_done = task(status=Task.Status.COMPLETED, expires_in=timedelta(seconds=-1))
    expired_waiting = task(status=Task.Status.INPUT_REQUIRED, expires_in=timedelta(seconds=-1))
    current = task(status=Task.Status.COMPLETED, expires_in=timedelta(hours=1))

    sweep = services.tasks_sweep()

    assert sweep == services.Sweep(deleted=2, retried=0, failed=0)
    assert list(Task.objects.filter(pk__in=[expired_done.pk, expired_waiting.pk, current.pk])) == [current]


@pytest.mark.django_db
def test_an_expired_task_is_unknown_before_the_sweep_runs() -> None:
    expired = task(status=Task.Status.COMPLETED, expires_in=timedelta(seconds=-1))

    with pytest.raises(services.TaskRefused) as refused:
        services.task_get(task_id=expired.pk, tenant_id=expired.tenant_id, principal=Principal("c", "i", "s"))

    assert (refused.value.reason, refused.value.message) == ("not_found", "Unknown taskId")
