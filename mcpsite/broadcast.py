"""Cross-process events on the channel layer: one broadcast group every process listens on.

Publishers call `publish_on_commit` from inside their transaction; the event leaves only if the
transaction commits. Listeners are the ASGI lifespan's `listen()` loop. A lost event is not fatal:
every cache that an event invalidates is also refreshed by a poll or expires on its own.

Who handles which event stands in one table, the composition root's (`mcp_server.background.HANDLERS`),
which may import every app; a Celery worker's listener names its one handler itself
(`mcp_tasks.dispatch`). Nothing registers itself.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

logger = logging.getLogger(__name__)

GROUP = "mcpsite.broadcast"

Event = dict[str, Any]
Handler = Callable[[Event], Awaitable[None]]

NOTIFY_SECONDS = 1.0
"""How long a handler may wait to hand one client a notification (`notify_within`)."""


async def notify_within(send: Callable[[], Awaitable[object]], what: str) -> bool:
    """Await `send`, a notification to one client's stream, for at most `NOTIFY_SECONDS`; whether it
    was sent. Handlers run in the process's one listener: a client that stopped reading (the send
    waits for room) must not hold up every other event. A client gone or not reading is logged as
    `what` not sent: nothing to retry."""
    with anyio.move_on_after(NOTIFY_SECONDS):
        try:
            await send()
        except Exception as exc:  # the client left: its stream is closed
            logger.info("%s not sent: session gone (%r)", what, exc)
            return False
        return True
    logger.info("%s not sent within %g s", what, NOTIFY_SECONDS)
    return False


async def apublish(event: Event) -> None:
    layer = get_channel_layer()
    if layer is not None:
        await layer.group_send(GROUP, event)


def publish(event: Event) -> None:
    """Send now (sync). Failures are logged: the receivers' polls and TTLs cover a lost event."""
    try:
        async_to_sync(apublish)(event)
    except Exception:
        logger.exception("could not publish %s; receivers will converge by polling", event.get("type"))


def publish_on_commit(event: Event) -> None:
    transaction.on_commit(lambda: publish(event))


async def listen(handlers: dict[str, Handler], *, ready: Callable[[], None] | None = None) -> None:
    """Receive broadcast events forever and dispatch them by ``type``."""
    layer = get_channel_layer()
    if layer is None:
        return
    channel = await layer.new_channel()
    await layer.group_add(GROUP, channel)
    if ready is not None:
        ready()
    try:
        while True:
            event = await layer.receive(channel)
            handler = handlers.get(event.get("type", ""))
            if handler is None:
                continue
            try:
                await handler(event)
            except Exception:
                logger.exception("handler for %s failed", event.get("type"))
    finally:
        try:
            await layer.group_discard(GROUP, channel)
        except Exception:  # shutting down; the group entry expires by itself
            pass
