"""The embedded default's beat: run ``CELERY_BEAT_SCHEDULE`` inside the serving process.

Without Redis there is no broker for ``celery beat`` and a worker to share, and Celery runs tasks
eagerly (``CELERY_TASK_ALWAYS_EAGER``), so the ASGI lifespan runs each scheduled task in-process
at its interval, each queue's jobs on their own thread. Deployed (Redis), run ``celery -A config
beat`` and a worker per queue instead (README, Deploying); this loop is then not started.
"""

from __future__ import annotations

import fnmatch
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio
from channels.db import database_sync_to_async
from django.conf import settings
from django.utils.module_loading import import_string

logger = logging.getLogger(__name__)

# Each queue's jobs on a thread of their own (and so a database connection of their own), as
# each queue has its own workers when deployed (`CELERY_TASK_ROUTES`): a notifications tick that
# waits out a slow receiver's timeout does not hold expiry back. Not asgiref's thread-sensitive
# thread: every `database_sync_to_async` call of the MCP hot path queues on that one thread, so a
# long job there (thousands of rows expiring at once) kept every MCP call waiting. One thread a
# queue: its jobs run one at a time, in turn, as on a Celery worker with one slot.
_threads: dict[str, ThreadPoolExecutor] = {}


def _queue_of(task_name: str) -> str:
    for pattern, route in settings.CELERY_TASK_ROUTES.items():
        if fnmatch.fnmatchcase(task_name, pattern):
            return str(route["queue"])
    return str(settings.CELERY_TASK_DEFAULT_QUEUE)


def _thread_for(queue: str) -> ThreadPoolExecutor:
    if queue not in _threads:
        _threads[queue] = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"mcpsite-beat-{queue}")
    return _threads[queue]


def _intervals() -> dict[str, tuple[Any, float, str]]:
    entries: dict[str, tuple[Any, float, str]] = {}
    for name, entry in settings.CELERY_BEAT_SCHEDULE.items():
        schedule = entry["schedule"]
        if not isinstance(schedule, int | float):
            logger.warning("beat entry %s has a non-interval schedule; the embedded beat skips it", name)
            continue
        entries[name] = (import_string(str(entry["task"])), float(schedule), _queue_of(str(entry["task"])))
    return entries


async def run_embedded() -> None:
    entries = _intervals()
    if not entries:
        return
    logger.info("embedded beat: %s", ", ".join(f"{n} every {s:.0f}s ({q})" for n, (_, s, q) in entries.items()))
    async with anyio.create_task_group() as tg:
        for queue in sorted({q for _, _, q in entries.values()}):
            tg.start_soon(_run_queue, queue, {n: (t, s) for n, (t, s, q) in entries.items() if q == queue})


async def _run_queue(queue: str, entries: dict[str, tuple[Any, float]]) -> None:
    thread = _thread_for(queue)
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
                await database_sync_to_async(task.apply, thread_sensitive=False, executor=thread)()
            except Exception:
                logger.exception("embedded beat: %s failed", name)
