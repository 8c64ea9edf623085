"""The ``approvals.resolved`` event: sent after commit for each row that ended, and sent again by
the beat (`elicitations_republish`) for any a crash or a broker outage kept in; a row is marked
published only once its event left, so the row is the record of what is owed."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import timedelta

from asgiref.sync import async_to_sync
from django.utils import timezone

from approvals.models import Elicitation
from mcpsite import broadcast

logger = logging.getLogger(__name__)


RESOLVED_EVENT = "approvals.resolved"


def publish_resolved(elicitation_id: str) -> bool:
    """Send the ``approvals.resolved`` event now; True once it left. A failure is retried by
    `elicitations_republish` (beat), because the row stays unpublished."""
    row = Elicitation.objects.filter(pk=elicitation_id).values("status").first()
    if row is None:
        return False
    return publish_ended({elicitation_id: row["status"]}) == 1


def publish_ended(statuses: Mapping[str, str]) -> int:
    """Send one ``approvals.resolved`` event per row (id -> status), then mark the ones that left
    as published in one UPDATE. Stops at the first failure: the rest stay unpublished for
    `elicitations_republish` (receivers deduplicate). Returns how many left."""
    sent: list[str] = []

    async def send_all() -> None:
        for elicitation_id, status in statuses.items():
            await broadcast.apublish({"type": RESOLVED_EVENT, "elicitation": elicitation_id, "status": status})
            sent.append(elicitation_id)

    try:
        async_to_sync(send_all)()
    except Exception:
        unsent = len(statuses) - len(sent)
        logger.exception("could not publish the end of %d elicitation(s); the beat task retries", unsent)
    if sent:
        Elicitation.objects.filter(pk__in=sent, published_at__isnull=True).update(published_at=timezone.now())
    return len(sent)


def elicitations_republish(*, older_than_seconds: float = 10.0) -> int:
    """Re-send the events a crash or a broker outage kept from leaving (receivers deduplicate)."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    rows = Elicitation.objects.unpublished(cutoff).values_list("pk", "status")[:500]
    return publish_ended(dict(rows))
