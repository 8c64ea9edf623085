"""Where a task's run goes: a Celery worker's ``tasks`` queue when there is a broker; else this
process's task runner (`mcp_tasks.runner`).

``CELERY_TASK_ALWAYS_EAGER`` (the embedded default) would run a 30-second tool inside the request
that created it, so the embedded default (``TASKS["IN_PROCESS"]``) runs it on its own runner
loop instead, beside its beat. A Celery worker hands the run to its process's runner too and is
free at once: a body that waits holds no worker slot, and the runner's per-tenant and per-person
limits and turns apply there as here. The row and its lease make a run lost with its process (a
restart) the sweep's to retry or fail.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading

import anyio
from celery import current_app

from mcp_tasks.conf import tasks_settings
from mcp_tasks.runner import runner
from mcpsite import broadcast

logger = logging.getLogger(__name__)


def enqueue(task_id: str) -> None:
    if not tasks_settings()["IN_PROCESS"]:
        current_app.send_task("mcp_tasks.tasks.task_run", args=[task_id])  # routed to the `tasks` queue
        return
    runner.submit(task_id)


def run_here(task_id: str) -> None:
    """A Celery worker's: make sure this process hears the broadcast, then queue the run on its
    runner and return (the worker slot is free again at once)."""
    listen_in_this_process()
    runner.submit(task_id)


_listener_pid: int | None = None
_listener_lock = threading.Lock()
_LISTENER_READY_SECONDS = 5.0


def listen_in_this_process() -> None:
    """Listen for ``approvals.resolved`` (a URL-mode step ended), on a
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
    from approvals import completion_wait
    from approvals.services.publishing import RESOLVED_EVENT

    async def listen() -> None:
        while True:
            try:
                await broadcast.listen({RESOLVED_EVENT: completion_wait.on_resolved}, ready=ready.set)
            except Exception:
                logger.exception("task worker's broadcast listener failed; reconnecting")
            await anyio.sleep(1.0)

    asyncio.run(listen())
