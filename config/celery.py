"""Celery: what must happen with nobody waiting. Redis broker when deployed; in-process by default."""

from __future__ import annotations

import os

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("mcpsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@signals.worker_init.connect
@signals.beat_init.connect
def refuse_to_start_misconfigured(**_: object) -> None:
    """A worker or beat refuses to start deployed as the web process does (`mcpsite.checks`)."""
    from django.core.management.base import SystemCheckError

    from mcpsite.checks import refuse_to_start_misconfigured

    try:
        refuse_to_start_misconfigured()
    except SystemCheckError as error:  # SystemExit: Celery logs and goes on past a handler's Exception
        raise SystemExit(str(error)) from None


@signals.worker_process_shutdown.connect
@signals.worker_shutdown.connect
def write_buffered_audit_rows(**_: object) -> None:
    """A worker's task runs are audited like calls (`audit.layer`): what its writer still buffers
    is written before the process ends (a prefork child, or the worker itself when it ran tasks)."""
    from audit.writer import writer

    writer.flush()
