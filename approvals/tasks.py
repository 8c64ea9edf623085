"""What happens with nobody waiting: expiry, and events that never left a process (beat schedule in settings)."""

from __future__ import annotations

from celery import shared_task

from approvals.services import expiry, publishing


@shared_task
def elicitations_expire() -> int:
    """Expire pending elicitations past their expiry; a waiting client then gets the cancelled outcome."""
    return expiry.elicitations_expire()


@shared_task
def elicitations_republish() -> int:
    """Re-send "resolved" events a crash or broker outage kept in (the row is the record of what is owed)."""
    return publishing.elicitations_republish()
