"""Where task bodies run in a process: coroutines on one event loop thread, started fairly.

A task's body mostly waits (a sleep, a reply from elsewhere, a step someone decides), so it is a
coroutine on this loop, not a thread of its own: a thousand waiting bodies cost a thousand small
coroutines. (A sync tool still runs on a thread the SDK borrows for it; ORM calls go to the loop's
small pool of database threads.)

What may start is bounded three ways, all counted in this process: ``TASKS["WORKERS"]`` bodies at
once, ``MAX_RUNNING_PER_TENANT`` of one tenant's and ``MAX_RUNNING_PER_PRINCIPAL`` of one person's
(a signed-in user's across their OAuth clients; an anonymous caller of a public tenant by address).
A run over a limit is not refused: its task stays ``working`` and waits in its tenant's queue.
When a place frees, tenants take turns (round-robin: the tenant that started a run least recently
goes first), each starting its oldest run whose person has room, so one tenant with a hundred
waiting runs delays another's one by at most one turn.

A waiting run keeps its row's pickup deadline fresh, so the sweep does not take it for lost; if
this process dies, the deadline runs out and the sweep hands the run to another.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import logging
import os
import threading
from collections import Counter, OrderedDict, deque
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from channels.db import database_sync_to_async

from mcp_tasks import services
from mcp_tasks.conf import tasks_settings

logger = logging.getLogger(__name__)

# The loop's pool for ORM calls (claims, lease renewals, the tools' own queries): each is short.
_DB_THREADS = 8
# Tenants whose last start is remembered for the turns; one forgotten counts as never served.
_TURNS_REMEMBERED = 10_000


@dataclass(frozen=True)
class Run:
    task_id: str
    tenant_id: int
    person: str


class Runner:
    """The fair start order and the limits; every method but `submit` runs on the loop's thread."""

    def __init__(self) -> None:
        self._started = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self._pid = os.getpid()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queues: dict[int, deque[Run]] = {}
        self._last_start: OrderedDict[int, int] = OrderedDict()  # tenant -> when it last started a run
        self._starts = itertools.count()
        self._waiting: set[str] = set()
        self._running: set[str] = set()
        self._per_tenant: Counter[int] = Counter()
        self._per_person: Counter[tuple[int, str]] = Counter()
        self._bodies: set[asyncio.Task[None]] = set()

    # --- from any thread ----------------------------------------------------------------

    def submit(self, task_id: str) -> None:
        """Queue a run of this task (a run already queued or running here is not queued twice)."""
        loop = self._ensure_loop()
        loop.call_soon_threadsafe(self._spawn, self._admit(task_id))

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._started:
            if self._pid != os.getpid():  # a forked child (a Celery pool's) starts a loop of its own
                self._reset()
            if self._loop is None:
                ready = threading.Event()
                threading.Thread(target=self._serve, args=(ready,), name="mcpsite-task-runner", daemon=True).start()
                ready.wait()
            assert self._loop is not None
            return self._loop

    def _serve(self, ready: threading.Event) -> None:
        loop = asyncio.new_event_loop()
        loop.set_default_executor(ThreadPoolExecutor(max_workers=_DB_THREADS, thread_name_prefix="mcpsite-task-db"))
        asyncio.set_event_loop(loop)
        self._loop = loop
        ready.set()
        loop.call_soon(self._spawn, self._hold_waiting())
        loop.run_forever()

    # --- on the loop --------------------------------------------------------------------

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        # In an empty context: never the submitter's nor another run's. A context copied from a
        # request's thread carries asgiref's executor of a call long over (thread-sensitive ORM
        # calls then fail), and one run's context variables are no other's business.
        task = asyncio.get_running_loop().create_task(coroutine, context=contextvars.Context())
        self._bodies.add(task)
        task.add_done_callback(self._bodies.discard)

    async def _admit(self, task_id: str) -> None:
        if task_id in self._waiting or task_id in self._running:
            return
        key = await database_sync_to_async(services.task_run_key, thread_sensitive=False)(task_id=task_id)
        if key is None:
            return  # ended, or another worker runs it
        tenant_id, person = key
        if task_id in self._waiting or task_id in self._running:
            return
        self._queues.setdefault(tenant_id, deque()).append(Run(task_id, tenant_id, person))
        self._waiting.add(task_id)
        self._start_what_fits()

    def _start_what_fits(self) -> None:
        conf = tasks_settings()
        while len(self._running) < conf["WORKERS"]:
            run = self._next(conf["MAX_RUNNING_PER_TENANT"], conf["MAX_RUNNING_PER_PRINCIPAL"])
            if run is None:
                return
            self._waiting.discard(run.task_id)
            self._running.add(run.task_id)
            self._per_tenant[run.tenant_id] += 1
            self._per_person[(run.tenant_id, run.person)] += 1
            self._spawn(self._body(run))

    def _next(self, per_tenant: int, per_person: int) -> Run | None:
        """The oldest startable run of the tenant whose turn it is: among tenants with a waiting
        run under their limit, the one that started a run least recently (never: first)."""
        for tenant_id in sorted(self._queues, key=lambda t: self._last_start.get(t, -1)):
            if self._per_tenant[tenant_id] >= per_tenant:
                continue
            queue = self._queues[tenant_id]
            for run in queue:
                if self._per_person[(tenant_id, run.person)] < per_person:
                    queue.remove(run)
                    if not queue:
                        del self._queues[tenant_id]
                    self._last_start[tenant_id] = next(self._starts)
                    self._last_start.move_to_end(tenant_id)
                    if len(self._last_start) > _TURNS_REMEMBERED:
                        self._last_start.popitem(last=False)  # the least recent: first in line anyway
                    return run
        return None

    async def _body(self, run: Run) -> None:
        from mcp_tasks.execution import task_execute

        try:
            await task_execute(task_id=run.task_id)
        except Exception:
            logger.exception("task %s: run crashed", run.task_id)
        finally:
            self._running.discard(run.task_id)
            self._per_tenant[run.tenant_id] -= 1
            self._per_person[(run.tenant_id, run.person)] -= 1
            if self._per_tenant[run.tenant_id] <= 0:
                del self._per_tenant[run.tenant_id]
            if self._per_person[(run.tenant_id, run.person)] <= 0:
                del self._per_person[(run.tenant_id, run.person)]
            self._start_what_fits()

    async def _hold_waiting(self) -> None:
        """Keep the pickup deadline of every waiting run ahead of the sweep."""
        interval = max(0.2, tasks_settings()["LEASE_SECONDS"] / 3)
        while True:
            await asyncio.sleep(interval)
            if not self._waiting:
                continue
            try:
                await database_sync_to_async(services.tasks_hold_queued, thread_sensitive=False)(
                    task_ids=sorted(self._waiting)
                )
            except Exception:
                logger.exception("could not hold %d waiting task(s); the sweep may run them again", len(self._waiting))


runner = Runner()
