"""Who in this process waits for an elicitation to end, and the handler that tells them.

Two kinds of waiter, both process-local and both fed by the ``approvals.resolved`` broadcast
(`on_resolved`, in the root's table of handlers, `mcp_server.background.HANDLERS`), whichever process ended
the row:

- a round held open (2026-07-28), a call waiting in-call (2025-11-25) or a durable task's run
  waiting on a step the client accepted: an `anyio.Event`, set on the event loop that waits on it.
  A task's run has a loop of its own on a worker thread, and the listener's loop setting that
  event directly would not wake it (it was noticed at the run's next lease renewal, ~10 s on);
- a 2025-11-25 session that was shown the URL: it gets ``notifications/elicitation/complete``
  exactly once, from this process, because only this process holds that session. A session
  that has gone away is dropped quietly (a failed send is logged).

The SDK's `ServerSession` is per request but sends an unrelated notification on its connection's
standalone stream, so the one from the request that showed the URL is kept until the row ends
(or a day passes, or the table is full: then the oldest is dropped).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio

from mcpsite import broadcast

logger = logging.getLogger(__name__)

# elicitation id -> the events waiting on it, each with the loop it waits on. Entered and left
# from task threads as well as the serving loop, hence the lock.
_waiters: dict[str, set[tuple[anyio.Event, asyncio.AbstractEventLoop]]] = {}
_waiters_lock = threading.Lock()
# elicitation id -> (registered at, the sessions that were shown it); insertion-ordered
_sessions: dict[str, tuple[float, list[Any]]] = {}
_SESSION_WATCH_SECONDS = 24 * 3600.0
_SESSION_WATCH_MAX = 10_000


@asynccontextmanager
async def watching(elicitation_id: str) -> AsyncIterator[anyio.Event]:
    """An event set when the row ends. Enter *before* re-reading the row, so an end that
    lands between the read and the wait is not missed."""
    event = anyio.Event()
    waiter = (event, asyncio.get_running_loop())
    with _waiters_lock:
        _waiters.setdefault(elicitation_id, set()).add(waiter)
    try:
        yield event
    finally:
        with _waiters_lock:
            waiting = _waiters.get(elicitation_id)
            if waiting is not None:
                waiting.discard(waiter)
                if not waiting:
                    _waiters.pop(elicitation_id, None)


def _wake(elicitation_id: str) -> None:
    """Set every event waiting on this row, each on its own loop."""
    with _waiters_lock:
        waiting = list(_waiters.get(elicitation_id, ()))
    here = asyncio.get_running_loop()
    for event, loop in waiting:
        if loop is here:
            event.set()
            continue
        try:
            loop.call_soon_threadsafe(event.set)
        except RuntimeError:  # that run ended and closed its loop meanwhile: nobody waits there
            pass


def notify_session_on_end(elicitation_id: str, session: Any) -> None:
    """Remember that `session` (2025-11-25) was shown this elicitation."""
    now = time.monotonic()
    for stale in [key for key, (at, _) in _sessions.items() if now - at > _SESSION_WATCH_SECONDS]:
        _sessions.pop(stale, None)
    while len(_sessions) >= _SESSION_WATCH_MAX:
        _sessions.pop(next(iter(_sessions)))
    _, sessions = _sessions.setdefault(elicitation_id, (now, []))
    if not any(known is session for known in sessions):
        sessions.append(session)


async def on_resolved(event: broadcast.Event) -> None:
    elicitation_id = str(event.get("elicitation", ""))
    _, sessions = _sessions.pop(elicitation_id, (0.0, []))
    what = f"notifications/elicitation/complete for {elicitation_id}"
    for session in sessions:
        if await broadcast.notify_within(functools.partial(session.send_elicit_complete, elicitation_id), what):
            logger.info("%s sent", what)
    _wake(elicitation_id)
