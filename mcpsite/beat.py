"""The embedded default's beat: run ``CELERY_BEAT_SCHEDULE`` inside the serving process.

Without Redis there is no broker for ``celery beat`` and a worker to share, and Celery runs tasks
eagerly (``CELERY_TASK_ALWAYS_EAGER``), so the ASGI lifespan runs each scheduled task in-process
at its interval. Deployed (Redis), run ``celery -A mcpsite worker --beat`` instead; this loop is
then not started.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio
from channels.db import database_sync_to_async
from django.conf import settings
from django.utils.module_loading import import_string

logger = logging.getLogger(__name__)

# The beat's own thread (and so its own database connection). Not asgiref's thread-sensitive
# thread: every `database_sync_to_async` call of the MCP hot path queues on that one thread, so a
# long task there (thousands of rows expiring at once) kept every MCP call waiting. One worker:
# the tasks still run one at a time, as on a Celery beat.
_BEAT_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcpsite-beat")


def _intervals() -> dict[str, tuple[Any, float]]:
    entries: dict[str, tuple[Any, float]] = {}
    for name, entry in settings.CELERY_BEAT_SCHEDULE.items():
        schedule = entry["schedule"]
        if not isinstance(schedule, int | float):
            logger.warning("beat entry %s has a non-interval schedule; the embedded beat skips it", name)
            continue
        entries[name] = (import_string(str(entry["task"])), float(schedule))
    return entries


async def run_embedded() -> None:
    entries = _intervals()
    if not entries:
        return
    logger.info("embedded beat: %s", ", ".join(f"{n} every {s:.0f}s" for n, (_, s) in entries.items()))
    due = {name: time.monotonic() + interval for name, (_, interval) in entries.items()}
    while True:
        await anyio.sleep(max(0.0, min(due.values()) - time.monotonic()))
        for name, (task, interval) in entries.items():
            if due[name] > time.monotonic():
                continue
            due[name] = time.monotonic() + interval
            try:
                # An event the task publishes still goes out on this loop's channel layer: the
                # task's `async_to_sync` runs it on the loop that called us, whichever thread runs it.
                await database_sync_to_async(task.apply, thread_sensitive=False, executor=_BEAT_THREAD)()
            except Exception:
                logger.exception("embedded beat: %s failed", name)
