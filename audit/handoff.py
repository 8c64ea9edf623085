"""Audit rows written outside the serving processes (``MCPSITE_AUDIT_WRITER=redis``, the default
with Redis): the writer thread hands its calls to a Redis list, the beat's drain job writes them.

Building and writing the rows took the serving process's CPU and its GIL: with the rows handed
off, a plain call keeps 0.943 of its audit-off rate per CPU-second instead of 0.928
(`bench/audit.py`, bench/README.md), and no writer's turn with the GIL stands between a request
and its answer. The serving process packs a flush's calls (one C call per `BATCH_CALLS`, pausing
after each as the writer thread pauses while it builds rows) and makes two round trips; the rows
are built and copied in where the beat runs (~7 µs of CPU a row).

1. `CallQueue.push` packs a flush's calls with msgpack, `BATCH_CALLS` to an entry, and appends the
   entries to the list (``AUDIT["QUEUE_KEY"]``) while it holds fewer than ``QUEUE_MAX_BATCHES``;
   beyond that an entry is dropped and counted (``reason="buffer_full"``): a drain that is not
   running costs Redis a bounded amount of memory. Redis down: the flush's calls are logged and
   counted (``reason="write_failed"``), as a database that is down is for the process's writer.
2. `drain` (the beat's ``audit.tasks.toolcalls_drain``, every ``DRAIN_EVERY_SECONDS``) pops
   entries (``LPOP`` with a count: two drains never take the same entry), builds their rows as the
   process's writer does (`audit.writer.rows_of`) and writes them the same way
   (`audit.writer.write_rows`). When the database cannot take them, the entries go back to the
   head of the list, in their order, for the next run: nothing is lost while the database is down
   and the list has room. A drain killed between a pop and its commit loses what it popped
   (`POP_ENTRIES` entries at most).

What an entry carries is what `audit.writer.Call` carries, the arguments as the client sent them
(never stored: digested by the drain). msgpack, not pickle or marshal: what is read back from
Redis is data, whatever wrote it; an integer past 64 bits and a lone surrogate (both valid JSON)
travel as they are.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import msgpack
from django.conf import settings
from django.db import DatabaseError, connection
from redis import Redis, RedisError

from audit.conf import audit_settings
from mcpsite import metrics
from tools_app.principal import Principal

logger = logging.getLogger("audit.writer")

BATCH_CALLS = 200
"""Calls one list entry carries: ~90 µs to pack while the GIL is held, one entry a pop."""
BIG_INT = 1
"""The msgpack extension type of an integer past 64 bits (its decimal digits)."""
POP_ENTRIES = 10
"""Entries a drain pops and writes at a time (2,000 rows at most: one COPY)."""
TIMEOUT_SECONDS = 5.0


def _beyond_64_bits(value: Any) -> msgpack.ExtType:
    if isinstance(value, int):
        return msgpack.ExtType(BIG_INT, str(value).encode())
    raise TypeError(f"cannot queue a {type(value).__name__}")


def _ext(code: int, data: bytes) -> Any:
    if code == BIG_INT:
        return int(data)
    return msgpack.ExtType(code, data)


def client() -> Redis:
    return Redis.from_url(settings.REDIS_URL, socket_connect_timeout=TIMEOUT_SECONDS, socket_timeout=TIMEOUT_SECONDS)


class CallQueue:
    """The serving process's end of the list (one per process, used from its writer thread)."""

    def __init__(self, *, key: str, max_batches: int) -> None:
        self.key = key
        self.max_batches = max_batches
        self._redis: Redis | None = None
        self._packer = msgpack.Packer(default=_beyond_64_bits, unicode_errors="surrogatepass")

    @classmethod
    def from_settings(cls) -> CallQueue | None:
        """The queue when ``AUDIT["WRITER"]`` is ``redis``; None when the process writes its rows."""
        conf = audit_settings()
        if conf["WRITER"] != "redis":
            return None
        return cls(key=conf["QUEUE_KEY"], max_batches=conf["QUEUE_MAX_BATCHES"])

    def forget_connection(self) -> None:
        """After a fork: the child opens its own."""
        self._redis = None

    def push(self, calls: Sequence[Any]) -> int:
        """Queue `calls` (`audit.writer.Call` values); how many were queued. The writer thread's
        pause after each entry packed (`audit.writer.in_turns`) lets the event loop's thread run."""
        from audit.writer import in_turns  # the writer module builds this process's writer (and its queue)

        entries = [(entry, n) for turn in in_turns(calls, BATCH_CALLS) for entry, n in self._pack(turn)]
        if not entries:
            return 0
        try:
            if self._redis is None:
                self._redis = client()
            room = max(0, self.max_batches - int(self._redis.llen(self.key)))
            kept, over = entries[:room], entries[room:]
            if kept:
                self._redis.rpush(self.key, *(entry for entry, _ in kept))
        except RedisError:
            lost = sum(n for _, n in entries)
            logger.exception("audit: %d tool calls not handed to Redis", lost)
            metrics.AUDIT_DROPPED_WRITE.inc(lost)
            self._redis = None  # whatever state it is in, the next flush starts on a fresh one
            return 0
        if over:
            dropped = sum(n for _, n in over)
            logger.warning(
                "audit: %d tool calls dropped: Redis holds %d batches not yet written", dropped, self.max_batches
            )
            metrics.AUDIT_DROPPED_FULL.inc(dropped)
        return sum(n for _, n in kept)

    def _pack(self, calls: Sequence[Any]) -> list[tuple[bytes, int]]:
        """One entry for `calls`; when they cannot be packed together, one each, and a call that
        cannot be packed at all (arguments nested past msgpack's limit) is logged and counted."""
        try:
            return [(self._packer.pack(calls), len(calls))]
        except (TypeError, ValueError, OverflowError):
            self._packer.reset()
        entries = []
        for call in calls:
            try:
                entries.append((self._packer.pack([call]), 1))
            except (TypeError, ValueError, OverflowError):
                self._packer.reset()
                logger.exception("audit: a tool call that could not be queued was not written")
                metrics.AUDIT_DROPPED_WRITE.inc()
        return entries


def unpack(entry: bytes) -> list[Any]:
    """The `audit.writer.Call` values of one entry."""
    from audit.writer import Call  # the writer module builds this process's writer (and its queue)

    fields = msgpack.unpackb(entry, ext_hook=_ext, unicode_errors="surrogatepass", strict_map_key=False)
    return [
        Call(at, tenant_id, Principal(*principal), tool, arguments, tuple(safe), *rest)
        for at, tenant_id, principal, tool, arguments, safe, *rest in fields
    ]


def drain() -> int:
    """Write what is queued, at most ``DRAIN_BATCHES_PER_RUN`` entries; the number of rows
    written. The database down: the entries go back, for the next run."""
    from audit.writer import rows_of, write_rows

    conf = audit_settings()
    budget = conf["DRAIN_BATCHES_PER_RUN"]
    written = 0
    with client() as redis:
        while budget > 0:
            entries: list[bytes] = redis.lpop(conf["QUEUE_KEY"], min(budget, POP_ENTRIES)) or []
            if not entries:
                break
            budget -= len(entries)
            calls = []
            for entry in entries:
                try:
                    calls.extend(unpack(entry))
                except Exception:  # not an entry this module wrote: it alone is lost
                    logger.exception("audit: a queued entry that could not be read was not written")
                    metrics.AUDIT_DROPPED_WRITE.inc()
            try:
                written += write_rows(rows_of(calls))
            except DatabaseError:
                redis.lpush(conf["QUEUE_KEY"], *reversed(entries))  # back at the head, in order
                logger.exception("audit: the database cannot take rows; %d batches left queued", len(entries))
                connection.close()
                break
    return written
