from __future__ import annotations

from celery import shared_task

from audit import handoff, services


@shared_task
def toolcalls_purge() -> int:
    """The beat's clean-up of audit rows past their retention (``MCPSITE_AUDIT_RETENTION_DAYS``)."""
    return services.toolcalls_purge()


@shared_task
def toolcalls_drain() -> int:
    """The beat's writing of the calls the serving processes handed to Redis (``MCPSITE_AUDIT_WRITER=redis``)."""
    return handoff.drain()
