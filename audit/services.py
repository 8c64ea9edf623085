"""The audit log's one workflow: forgetting calls older than its retention."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from audit.conf import audit_settings
from audit.models import ToolCall


def toolcalls_purge(*, now: datetime | None = None) -> int:
    """Delete rows older than ``RETENTION_DAYS``, oldest first, ``DELETE_BATCH_SIZE`` per statement
    and at most ``DELETE_BATCHES_PER_RUN`` statements a run: a backlog (the beat was down for a
    week) is worked off over several runs, none holding a long lock. The number deleted."""
    conf = audit_settings()
    cutoff = (now or timezone.now()) - timedelta(days=conf["RETENTION_DAYS"])
    deleted = 0
    for _ in range(conf["DELETE_BATCHES_PER_RUN"]):
        batch = list(
            ToolCall.objects.filter(at__lt=cutoff)
            .order_by("at", "id")
            .values_list("id", flat=True)[: conf["DELETE_BATCH_SIZE"]]
        )
        if batch:
            deleted += ToolCall.objects.filter(id__in=batch).delete()[0]
        if len(batch) < conf["DELETE_BATCH_SIZE"]:
            break
    return deleted
