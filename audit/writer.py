"""Writing audit rows off the request's path: a bounded buffer, one writer thread per process.

1. A call hands `AuditWriter.record` a `Call`: plain values taken from the request, nothing
   computed (the arguments as sent, the tool's server for their digest). When the buffer holds
   ``AUDIT["BUFFER"]`` calls, the call is dropped and ``mcpsite_audit_dropped_total{reason=
   "buffer_full"}`` counts it: recording never waits, whatever the database does.
2. The writer thread wakes every ``FLUSH_SECONDS``, or as soon as a batch's worth is waiting, and
   writes what is buffered in batches of at most ``BATCH_SIZE`` rows, one COPY each. The digest of
   each call's arguments is taken here, off the request's path: of the arguments as sent, in the
   one canonical form (`tools_app.urlmode.canonical_digest`). Not as the tool's model validates
   them (`arguments_digest`, what a URL-mode step's row is kept under): validating again cost
   three times the rest of a row, and a client sends one call's arguments alike on every round.
3. A batch the database refuses is logged and counted (``reason="write_failed"``), not retried: a
   database that is down must not fill the process's memory.
4. The serving process flushes what is left at shutdown (its ASGI lifespan,
   `mcp_server.background`), a Celery worker when its process ends (`config.celery`).

The buffer is a deque: ``append`` and ``popleft`` are atomic, and every call is recorded from the
event loop's thread (a task run from its runner's), so the bound is exact but for a few calls
recorded at the same instant by different threads.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import deque
from datetime import UTC, datetime
from typing import Any, NamedTuple

from django.conf import settings
from django.db import close_old_connections, connection, transaction

from audit.conf import audit_settings
from audit.models import ToolCall
from mcpsite import metrics
from tools_app.principal import Principal
from tools_app.urlmode import canonical_digest

logger = logging.getLogger(__name__)

SAFE_VALUE_MAX = 1024
"""Characters of JSON one safe argument may take in a row; a longer value is recorded by its size."""


class Call(NamedTuple):
    """What one tool call hands the writer (see the module docstring, step 1)."""

    at: float  # time.time() when it reached the server
    tenant_id: int | None
    principal: Principal
    tool: str
    arguments: Any  # as sent: digested by the writer, never stored
    safe: tuple[str, ...]  # the arguments the tool marks safe to record in full
    outcome: str
    error_code: int | None
    seconds: float
    request_id: str
    generation: str
    task_id: str = ""


class AuditWriter:
    def __init__(self, *, capacity: int, batch_size: int, interval: float) -> None:
        self.capacity = capacity
        self.batch_size = max(1, batch_size)
        self.interval = interval
        self._pending: deque[Call] = deque()
        self._wake = threading.Event()
        self._flushing = threading.Lock()  # one flush at a time: the thread's, or a shutdown's
        self._thread: threading.Thread | None = None
        os.register_at_fork(after_in_child=self._forget_thread)  # a forked worker starts its own

    @classmethod
    def from_settings(cls) -> AuditWriter:
        conf = audit_settings()
        return cls(capacity=conf["BUFFER"], batch_size=conf["BATCH_SIZE"], interval=conf["FLUSH_SECONDS"])

    @property
    def pending(self) -> int:
        return len(self._pending)

    def record(self, call: Call) -> None:
        """Buffer `call` for writing; drop and count it when the buffer is full. Never blocks."""
        pending = self._pending
        if len(pending) >= self.capacity:
            metrics.AUDIT_DROPPED_FULL.inc()
            return
        pending.append(call)
        if self._thread is None:
            self._start()
        if len(pending) >= self.batch_size:
            self._wake.set()

    def flush(self) -> int:
        """Write everything buffered now, in batches; the number of rows written."""
        written = 0
        with self._flushing:
            while self._pending:
                batch: list[Call] = []
                while self._pending and len(batch) < self.batch_size:
                    batch.append(self._pending.popleft())
                written += self._write(batch)
        return written

    def _write(self, batch: list[Call]) -> int:
        close_old_connections()  # a long-lived thread: its connection may have gone stale
        try:
            insert([to_row(call) for call in batch])
        except Exception:
            logger.exception("audit: %d tool-call rows not written", len(batch))
            metrics.AUDIT_DROPPED_WRITE.inc(len(batch))
            connection.close()  # whatever state it is in, the next batch starts on a fresh one
            return 0
        return len(batch)

    def _start(self) -> None:
        with self._flushing:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="mcpsite-audit", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            self._wake.wait(self.interval)
            self._wake.clear()
            try:
                self.flush()
            except Exception:  # the thread must outlive anything one flush meets
                logger.exception("audit: flush failed")
                time.sleep(self.interval)

    def _forget_thread(self) -> None:
        self._thread = None
        self._pending.clear()  # the parent's, written by the parent
        self._flushing = threading.Lock()


FIELDS = (
    "at", "tenant", "user", "client_id", "issuer", "subject", "tool", "arguments_digest", "arguments",
    "outcome", "error_code", "duration_ms", "request_id", "generation", "task_id",
)  # fmt: skip
"""The columns a row is written with, in the order `to_row` gives its values."""

COLUMNS = {field.name: str(field.column) for field in ToolCall._meta.concrete_fields}
Row = tuple[Any, ...]
SQL_ROWS = 60
"""Rows per INSERT where there is no COPY: 900 parameters, under SQLite's oldest limit (999)."""


def to_row(call: Call) -> Row:
    """The row of one call (`FIELDS`): its arguments as a digest, and only the safe ones in full.
    A plain tuple, written by COPY: a model instance and the ORM's INSERT cost ten times more per
    row than the call they record (bench/audit.py)."""
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    client_id, issuer, subject = call.principal
    safe = {name: _bounded(arguments[name]) for name in call.safe if name in arguments}
    return (
        datetime.fromtimestamp(call.at, UTC),
        call.tenant_id,
        user_id_of(call.principal),
        client_id[:255],
        issuer[:255],
        subject[:255],
        call.tool,
        canonical_digest(call.arguments),
        json.dumps(safe) if safe else "{}",
        call.outcome,
        call.error_code,
        call.seconds * 1000,
        call.request_id,
        call.generation,
        call.task_id,
    )


def insert(rows: list[Row]) -> None:
    """The batch in one transaction: PostgreSQL's COPY, or (SQLite, the embedded default) INSERTs
    of many rows each."""
    quote = connection.ops.quote_name
    columns = ", ".join(quote(COLUMNS[name]) for name in FIELDS)
    table = quote(ToolCall._meta.db_table)
    with transaction.atomic(), connection.cursor() as cursor:  # one commit (SQLite: one fsync) a batch
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            # Many rows a statement: SQLite lets go of the GIL at every statement it steps, and an
            # executemany of one row each handed the GIL back and forth with the event loop per row.
            adapt = connection.ops.adapt_datetimefield_value
            row_marks = "(" + ", ".join(["%s"] * len(FIELDS)) + ")"
            for start in range(0, len(rows), SQL_ROWS):
                chunk = rows[start : start + SQL_ROWS]
                values = ", ".join([row_marks] * len(chunk))
                params = [value for row in chunk for value in (adapt(row[0]), *row[1:])]
                cursor.execute(f"INSERT INTO {table} ({columns}) VALUES {values}", params)


def user_id_of(principal: Principal) -> int | None:
    """Our user's id, when the token is one this site issued (its subject is the user's id)."""
    if principal.issuer == settings.MCPSITE["ISSUER"] and principal.subject.isdigit():
        return int(principal.subject)
    return None


def _bounded(value: Any) -> Any:
    size = len(json.dumps(value, default=str))
    return value if size <= SAFE_VALUE_MAX else f"<{size} characters, not recorded>"


writer = AuditWriter.from_settings()
"""This process's writer (every tenant server's layer and every task run records to it)."""
