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
