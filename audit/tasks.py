from __future__ import annotations

from celery import shared_task

from audit import services


@shared_task
def toolcalls_purge() -> int:
    """The beat's clean-up of audit rows past their retention (``MCPSITE_AUDIT_RETENTION_DAYS``)."""
    return services.toolcalls_purge()
