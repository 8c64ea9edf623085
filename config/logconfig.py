"""The ``LOGGING`` dict `config.settings` hands Django: plain lines or one JSON object a line
(``MCPSITE_LOG_FORMAT``), each with the request's context (`mcpsite.logs`)."""

from __future__ import annotations

import logging
from typing import Any


def logging_dict(*, level: str, log_format: str) -> dict[str, Any]:
    if log_format == "json":
        logging.captureWarnings(True)  # a Python warning is a JSON line too, not bare text on stderr
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
            # One JSON object a line; the request's context (`mcpsite.logs`) comes with every record.
            "json": {"()": "mcpsite.logs.JsonFormatter"},
        },
        "filters": {
            "beat_bookkeeping_at_debug": {"()": "config.logfilters.BeatBookkeepingAtDebug"},
            "log_context": {"()": "mcpsite.logs.LogContextFilter"},
        },
        "handlers": {
            "console": {"class": "logging.StreamHandler", "formatter": log_format, "filters": ["log_context"]},
        },
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            "django.db.backends": {"level": "WARNING"},
            # A job of the beat's schedule: its "sending", "received" and "succeeded" lines at DEBUG.
            "celery.app.trace": {"filters": ["beat_bookkeeping_at_debug"]},
            "celery.worker.strategy": {"filters": ["beat_bookkeeping_at_debug"]},
            "celery.beat": {"filters": ["beat_bookkeeping_at_debug"]},
        },
    }
