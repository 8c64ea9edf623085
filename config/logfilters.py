"""Logging filters named by `settings.LOGGING` (no Django imports: logging is configured before
the apps are loaded)."""

from __future__ import annotations

import logging


class BeatBookkeepingAtDebug(logging.Filter):
    """Celery's "Task ... succeeded" line for a job of the beat's schedule (expiry, republish,
    clean-ups), told at DEBUG: an idle server otherwise logs a couple of dozen such lines a minute,
    which bury what happens. A failing job still logs at ERROR, and other tasks as Celery does."""

    def filter(self, record: logging.LogRecord) -> bool:
        data = getattr(record, "data", None)
        if record.levelno != logging.INFO or not isinstance(data, dict) or data.get("name") not in _bookkeeping():
            return True
        record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        return logging.getLogger().isEnabledFor(logging.DEBUG)


def _bookkeeping() -> set[str]:
    from django.conf import settings

    return {str(entry["task"]) for entry in settings.CELERY_BEAT_SCHEDULE.values()}
