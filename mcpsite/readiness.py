"""Whether this process can serve: what ``/readyz`` answers (``/healthz`` only says it is alive).

Each check answers a `Check` (name, ok, detail). The details are safe for anyone to read: no
secret, no row, no address of a server behind us (a failure's own message is logged here, and
the answer names only its kind). A check that has nothing to check (no Redis on the embedded
default) is not listed, so it can neither pass nor fail.

The checks, in the order they are listed:

1. ``database``: a connection and one ``SELECT 1``.
2. ``migrations``: Django's migration plan for every app's newest migration is empty (a process
   started before ``migrate`` finished, or a database a migration was rolled back on, is not ready).
3. ``keyring``: this process has loaded the key ring, it has a minting key, and the minting key
   the database names is in it (a promotion waits for every live process to load the key, so a
   process without it has stopped reloading: its poll fails, or its key-encryption key is wrong).
4. ``redis`` (when ``MCPSITE_REDIS_URL`` is set): a ``PING`` answered.
5. ``broker`` (when Celery sends to a broker rather than running tasks in process): a connection.

Each network check gives up after `TIMEOUT_SECONDS`, so a probe's answer never waits on a dead
server for long.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

logger = logging.getLogger(__name__)

TIMEOUT_SECONDS = 2.0


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str

    def as_json(self) -> dict[str, object]:
        return asdict(self)


def _failed(name: str, what: str, exc: BaseException) -> Check:
    logger.warning("readiness: %s failed: %s", name, exc)
    return Check(name, False, f"{what} ({type(exc).__name__})")


def _database() -> Check:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:
        return _failed("database", "unreachable", exc)
    return Check("database", True, connection.vendor)


def _migrations() -> Check:
    try:
        executor = MigrationExecutor(connection)
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except Exception as exc:
        return _failed("migrations", "cannot read the applied migrations", exc)
    if plan:
        first = plan[0][0]
        return Check("migrations", False, f"{len(plan)} not applied, first {first.app_label}.{first.name}")
    return Check("migrations", True, "all applied")


def _keyring() -> Check:
    from mcpsite.keyring import ring
    from mcpsite.models import RequestStateKey

    try:
        minting = (
            RequestStateKey.objects.filter(phase=RequestStateKey.Phase.MINTING).values_list("kid", flat=True).first()
        )
    except Exception as exc:
        return _failed("keyring", "cannot read the key ring", exc)
    if minting is None:
        return Check("keyring", False, "the database has no minting key (add and promote one)")
    if ring.minting_kid is None:
        return Check("keyring", False, "this process has loaded no minting key")
    if minting not in ring.kids:
        return Check("keyring", False, "this process has not loaded the minting key")
    return Check("keyring", True, f"loaded, {len(ring.kids)} key(s)")


def _database_checks() -> list[Check]:
    # One thread and one connection for the three: the database is asked in order, and a
    # database that is down is reported as such by each, without a second wait on the others.
    return [_database(), _migrations(), _keyring()]


async def _redis() -> Check:
    from redis.asyncio import Redis

    client = Redis.from_url(settings.REDIS_URL, socket_connect_timeout=TIMEOUT_SECONDS, socket_timeout=TIMEOUT_SECONDS)
    try:
        await asyncio.wait_for(client.ping(), TIMEOUT_SECONDS)
    except Exception as exc:
        return _failed("redis", "unreachable", exc)
    finally:
        await client.aclose()
    return Check("redis", True, "answered")


def _broker_connect() -> None:
    from celery import current_app

    with current_app.connection_for_read(connect_timeout=TIMEOUT_SECONDS) as broker:
        broker.ensure_connection(max_retries=0)  # one attempt: a probe is asked again soon anyway


async def _broker() -> Check:
    try:
        await asyncio.wait_for(asyncio.to_thread(_broker_connect), TIMEOUT_SECONDS + 1)
    except Exception as exc:
        return _failed("broker", "unreachable", exc)
    return Check("broker", True, "connected")


async def readiness_checks() -> list[Check]:
    """Every check that applies here, run together (the database's off the event loop)."""
    pending: list[Awaitable[list[Check]]] = [database_sync_to_async(_database_checks)()]
    network: list[Callable[[], Awaitable[Check]]] = []
    if settings.REDIS_URL:
        network.append(_redis)
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        network.append(_broker)
    pending += [_one(check) for check in network]
    return [check for group in await asyncio.gather(*pending) for check in group]


async def _one(check: Callable[[], Awaitable[Check]]) -> list[Check]:
    return [await check()]
