"""The sweep in the serving process, when tasks run there but no embedded beat does (Redis as
channel layer, tasks kept in process: ``TASKS["IN_PROCESS"]``); the embedded beat and Celery beat
run it from ``CELERY_BEAT_SCHEDULE`` otherwise."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

import anyio
from channels.db import database_sync_to_async

from mcp_tasks import services
from mcp_tasks.conf import tasks_settings

logger = logging.getLogger(__name__)

# Its own thread, off asgiref's thread-sensitive one the MCP hot path queues on (as the beat's).
_SWEEP_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcpsite-task-sweep")


async def sweep_in_process() -> None:
    interval = tasks_settings()["SWEEP_EVERY_SECONDS"]
    while True:
        await anyio.sleep(interval)
        try:
            await database_sync_to_async(services.tasks_sweep, thread_sensitive=False, executor=_SWEEP_THREAD)()
        except Exception:
            logger.exception("task sweep failed; retrying in %.0fs", interval)
