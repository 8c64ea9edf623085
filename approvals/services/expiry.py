"""Expiring stale rows in bounded batches (the beat's job)."""

from __future__ import annotations

import logging
import time
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from approvals import signals
from approvals.conf import approvals_settings
from approvals.models import Elicitation, ElicitationEvent
from approvals.services.publishing import publish_ended
from mcpsite.actors import Via

logger = logging.getLogger(__name__)


def elicitations_expire(*, now: datetime | None = None) -> int:
    """Expire pending rows past their expiry, a batch per transaction, for at most
    ``APPROVALS["EXPIRE_TICK_SECONDS"]`` (what is left waits for the next tick). Returns how many."""
    conf = approvals_settings()
    size, deadline = conf["EXPIRE_BATCH_SIZE"], time.monotonic() + conf["EXPIRE_TICK_SECONDS"]
    expired = 0
    while True:
        ended = _expire_batch(now=now or timezone.now(), size=size)
        expired += ended
        if ended < size or time.monotonic() >= deadline:
            return expired


@transaction.atomic
def _expire_batch(*, now: datetime, size: int) -> int:
    """Expire up to `size` stale rows as `elicitation_end` would end each: status, audit row, and the
    ``approvals.resolved`` event after commit; in a bounded number of queries.

    1. Lock the oldest stale rows, skipping rows another transaction holds (a webhook completing
       one: it wins, and a skipped row that is still stale is taken by a later batch).
    2. One UPDATE ends those still pending (`ElicitationQuerySet.expire`; never a completed row).
    3. Without row locks (SQLite), a row may have ended between 1 and 2: read back which rows
       this UPDATE ended (their `completed_at` is this batch's timestamp).
    4. One INSERT of the audit rows; the events leave after commit.
    """
    ids = list(
        Elicitation.objects.stale(now)
        .select_for_update(skip_locked=True)
        .order_by("expires_at")
        .values_list("pk", flat=True)[:size]
    )
    if not ids:
        return 0
    stamp = timezone.now()
    if Elicitation.objects.filter(pk__in=ids).expire(now=stamp) != len(ids):
        ids = list(
            Elicitation.objects.filter(pk__in=ids, status=Elicitation.Status.EXPIRED, completed_at=stamp).values_list(
                "pk", flat=True
            )
        )
    ElicitationEvent.objects.bulk_create(
        ElicitationEvent(elicitation_id=pk, at=stamp, via=Via.BEAT, status=Elicitation.Status.EXPIRED) for pk in ids
    )
    statuses = dict.fromkeys(ids, str(Elicitation.Status.EXPIRED))
    transaction.on_commit(lambda: publish_ended(statuses))
    signals.elicitations_ended.send(sender=Elicitation, elicitation_ids=ids)
    logger.info("%d elicitation(s) expired", len(ids))
    return len(ids)
