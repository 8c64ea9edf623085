"""What every serving process runs beside the requests: the tenant registry, the key ring, and
the loops that keep them current (broadcast listener and the fallback poll); at shutdown, the
audit rows still buffered are written."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from channels.db import database_sync_to_async
from django.conf import settings

from approvals import completion_wait
from approvals.services.publishing import RESOLVED_EVENT
from audit.writer import writer as audit_writer
from mcp_server import beat
from mcp_server.registry import registry
from mcp_tasks.in_process_sweep import sweep_in_process
from mcpsite import broadcast
from mcpsite.auth import tokens
from mcpsite.conf import mcpsite_settings
from mcpsite.keyring import heartbeat_beat, heartbeat_forget, ring

logger = logging.getLogger(__name__)


def _reload_ring() -> None:
    """Reload the ring and, when it changed, say so at once (the promote guard waits for it)."""
    if ring.reload():
        heartbeat_beat()


async def _on_keyring_changed(_: broadcast.Event) -> None:
    await database_sync_to_async(_reload_ring)()


async def _on_tenants_changed(event: broadcast.Event) -> None:
    # One tenant's change reaches that tenant only (by slug, or by id when its slug changed).
    slug, tenant_id = event.get("slug"), event.get("id")
    if slug is None and tenant_id is None:  # an event without them (an older process): all loaded
        await registry.refresh()
    else:
        await registry.refresh(slug=slug, tenant_id=tenant_id)


async def _on_token_changed(event: broadcast.Event) -> None:
    tokens.evict(str(event.get("checksum", "")))


async def _on_members_changed(event: broadcast.Event) -> None:
    # Their roles changed: their tokens are read again, roles included, on their next call; then
    # the tenant's listening clients here are told to list again (an older event names no tenant).
    subjects = frozenset(str(subject) for subject in event.get("subjects", ()))
    tokens.evict_subjects(subjects)
    if isinstance(tenant_id := event.get("tenant"), int):
        await registry.lists_changed(tenant_id, subjects)


# Every broadcast event this process handles, and who handles it: the one table.
HANDLERS: dict[str, broadcast.Handler] = {
    # A URL-mode step ended: wake the rounds and runs waiting on it in this process.
    RESOLVED_EVENT: completion_wait.on_resolved,
    "keyring.changed": _on_keyring_changed,
    "tenants.changed": _on_tenants_changed,
    "token.changed": _on_token_changed,
    "members.changed": _on_members_changed,
}


async def _poll(interval: float) -> None:
    """The fallback that bounds convergence when a broadcast is lost (or never crossed processes)."""
    while True:
        await anyio.sleep(interval)
        try:
            await database_sync_to_async(ring.reload)()
            await database_sync_to_async(heartbeat_beat)()
            await registry.refresh()
        except Exception:
            logger.exception("poll failed; retrying in %.0fs", interval)


async def _listen() -> None:
    while True:
        try:
            await broadcast.listen(HANDLERS)
        except Exception:
            logger.exception("broadcast listener failed; reconnecting")
            await anyio.sleep(1.0)


@asynccontextmanager
async def running() -> AsyncIterator[None]:
    await database_sync_to_async(ring.reload)()
    await database_sync_to_async(heartbeat_beat)()
    if ring.minting_kid is None:
        logger.error("the requestState key ring has no minting key: tools that ask questions will fail")
    async with anyio.create_task_group() as tg:
        await registry.start(tg)
        tg.start_soon(_listen)
        tg.start_soon(_poll, mcpsite_settings()["POLL_SECONDS"])
        if settings.CELERY_TASK_ALWAYS_EAGER:  # embedded default: no broker, so beat runs here
            tg.start_soon(beat.run_embedded)
        elif settings.TASKS["IN_PROCESS"]:  # tasks run here, yet no beat sweeps them: this does
            tg.start_soon(sweep_in_process)
        try:
            yield
        finally:
            tg.cancel_scope.cancel()
    # The audit rows still buffered are written before the process ends (the writer thread is a
    # daemon: it would die with them).
    written = await database_sync_to_async(audit_writer.flush, thread_sensitive=False)()
    if written:
        logger.info("audit: %d buffered tool-call rows written at shutdown", written)
    await database_sync_to_async(heartbeat_forget)()
