"""Where a task's run goes: a Celery worker when there is a broker; else a thread of this process.

``CELERY_TASK_ALWAYS_EAGER`` (the embedded default) would run a 30-second tool inside the request
that created it, so the embedded default (``TASKS["IN_PROCESS"]``) gets worker threads of its own
instead, like its beat; the row and its lease make a run lost with the process (a restart) the
sweep's to retry or fail.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import anyio
from django.db import close_old_connections

from mcp_tasks.conf import tasks_settings
from mcpsite import broadcast

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


def run_here(task_id: str, *, in_worker: bool = False) -> None:
    """One run on this thread, in an event loop of its own (the tool is async-capable code).
    ``in_worker``: a Celery worker's, which first makes sure its process hears the broadcast."""
    from mcp_tasks.execution import task_execute

    if in_worker:
        listen_in_this_process()
    try:
        asyncio.run(task_execute(task_id=task_id))
    except Exception:
        logger.exception("task %s: run crashed", task_id)
    finally:
        close_old_connections()


_listener_pid: int | None = None
_listener_lock = threading.Lock()
_LISTENER_READY_SECONDS = 5.0


def listen_in_this_process() -> None:
    """Listen for the broadcast events apps registered (``approvals.resolved``: a step ended), on a
    daemon thread of this process, once per process (a forked worker child starts its own).

    A serving process listens in its lifespan; a Celery worker serves no requests, so nothing
    there heard a step end, and a run waiting in-call on a URL-mode step the client had already
    accepted resumed only when its hold ran out. Returns once the listener is subscribed (or
    after a few seconds: the hold's re-read still bounds the wait)."""
    global _listener_pid
    with _listener_lock:
        if _listener_pid == os.getpid():
            return
        _listener_pid = os.getpid()
        ready = threading.Event()
        threading.Thread(target=_listen_forever, args=(ready,), name="mcpsite-task-broadcast", daemon=True).start()
    if not ready.wait(_LISTENER_READY_SECONDS):
        logger.warning("broadcast listener not subscribed after %.0fs; runs wait out holds", _LISTENER_READY_SECONDS)


def _listen_forever(ready: threading.Event) -> None:
    async def listen() -> None:
        while True:
            try:
                await broadcast.listen(broadcast.registered(), ready=ready.set)
            except Exception:
                logger.exception("task worker's broadcast listener failed; reconnecting")
            await anyio.sleep(1.0)

    asyncio.run(listen())
