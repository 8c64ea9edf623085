"""Logging filters named by `settings.LOGGING` (no Django imports: logging is configured before
the apps are loaded)."""

from __future__ import annotations

import logging


class BeatBookkeepingAtDebug(logging.Filter):
    """Celery's lines for a job of the beat's schedule (expiry, republish, clean-ups, the audit
    drain), told at DEBUG: the beat's "Sending due task", the worker's "received" and "succeeded".
    An idle deployment otherwise logs a couple of hundred such lines a minute (the audit drain runs
    every second), which bury what happens. A failing job still logs at ERROR, and other tasks as
    Celery does."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO or _job_of(record) not in _bookkeeping():
            return True
        record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        return logging.getLogger().isEnabledFor(logging.DEBUG)


BEAT_SENDING = "Scheduler: Sending due task %s (%s)"
"""`celery.beat`'s line for each job it sends: its arguments are the entry's name and its task's."""


def _job_of(record: logging.LogRecord) -> str | None:
    """The task a Celery line is about: the worker's lines carry it as ``data["name"]``."""
    data = getattr(record, "data", None)
    if isinstance(data, dict):
        return str(data.get("name"))
    if record.msg == BEAT_SENDING and isinstance(record.args, tuple) and len(record.args) == 2:
        return str(record.args[1])
    return None


def _bookkeeping() -> set[str]:
    from django.conf import settings

    return {str(entry["task"]) for entry in settings.CELERY_BEAT_SCHEDULE.values()}
