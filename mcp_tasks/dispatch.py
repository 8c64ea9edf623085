"""Where a task's run goes: a Celery worker when there is a broker; else a thread of this process.

``CELERY_TASK_ALWAYS_EAGER`` (the embedded default) would run a 30-second tool inside the request
that created it, so the embedded default (``TASKS["IN_PROCESS"]``) gets worker threads of its own
instead, like its beat; the row and its lease make a run lost with the process (a restart) the
sweep's to retry or fail.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor

from django.db import close_old_connections

from mcp_tasks.conf import tasks_settings

logger = logging.getLogger(__name__)

_pool: ThreadPoolExecutor | None = None


def enqueue(task_id: str) -> None:
    if not tasks_settings()["IN_PROCESS"]:
        from mcpsite.celery import app  # the configured app (the serving process imports no other)

        app.send_task("mcp_tasks.tasks.task_run", args=[task_id])
        return
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=tasks_settings()["WORKERS"], thread_name_prefix="mcpsite-task")
    _pool.submit(run_here, task_id)


def run_here(task_id: str) -> None:
    """One run on this thread, in an event loop of its own (the tool is async-capable code)."""
    from mcp_tasks.execution import task_execute

    try:
        asyncio.run(task_execute(task_id=task_id))
    except Exception:
        logger.exception("task %s: run crashed", task_id)
    finally:
        close_old_connections()
