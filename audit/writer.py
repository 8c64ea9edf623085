"""Writing audit rows off the request's path: a bounded buffer, one writer thread per process.

1. A call hands `AuditWriter.record` a `Call`: plain values taken from the request, nothing
   computed (the arguments as sent, the tool's server for their digest). When the buffer holds
   ``AUDIT["BUFFER"]`` calls, the call is dropped and ``mcpsite_audit_dropped_total{reason=
   "buffer_full"}`` counts it: recording never waits, whatever the database does.
2. The writer thread wakes every ``FLUSH_SECONDS``, or as soon as a batch's worth is waiting, and
   writes what is buffered in batches of at most ``BATCH_SIZE`` rows, one COPY each, pausing every
   `YIELD_EVERY` rows so the event loop's requests are not held up. The digest of
   each call's arguments is taken here, off the request's path: of the arguments as sent, in the
   one canonical form (`tools_app.urlmode.canonical_digest`). Not as the tool's model validates
   them (`arguments_digest`, what a URL-mode step's row is kept under): validating again cost
   three times the rest of a row, and a client sends one call's arguments alike on every round.
3. A batch the database cannot take is logged and counted (``reason="write_failed"``), not
   retried: a database that is down must not fill the process's memory. A batch it refuses for
   one row's value is written in halves, so only that row is lost; and nothing a caller sends can
   be such a value (a NUL character, which PostgreSQL refuses in text and JSON, is replaced).
4. The serving process flushes what is left at shutdown (its ASGI lifespan,
   `mcp_server.background`), a Celery worker when its process ends (`config.celery`).
5. With ``AUDIT["WRITER"] = "redis"`` (the default with Redis) steps 2 and 3 happen elsewhere: the
   writer thread hands each flush's calls to a Redis list, and the beat's drain job builds and
   writes the rows (`audit.handoff`).

The buffer is a deque: ``append`` and ``popleft`` are atomic, and every call is recorded from the
event loop's thread (a task run from its runner's), so the bound is exact but for a few calls
recorded at the same instant by different threads.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple

from django.conf import settings
from django.db import DataError, close_old_connections, connection, transaction
from psycopg.types.json import set_json_dumps

from audit.conf import audit_settings
from audit.handoff import CallQueue
from audit.models import ToolCall
from mcpsite import metrics
from mcpsite.toolcall_metrics import generation
from tools_app.principal import Principal
from tools_app.urlmode import canonical_digest

logger = logging.getLogger(__name__)

YIELD_EVERY = 50
"""Rows the writer thread works through (~0.3 ms) before it pauses for `YIELD_SECONDS`, so the event
loop's thread runs. CPython takes the GIL from a busy thread only after ``sys.getswitchinterval()``
(5 ms), so a request that came in while the writer worked through a batch of 2,000 rows (~12 ms of
Python) could wait whole switch intervals: p99 at c = 1 was 2.76 ms with the audit on, 0.82 ms with
it off (bench/run). A pause must block: ``time.sleep(0)`` releases the GIL and takes it straight
back, on one core before the other thread can run."""
YIELD_SECONDS = 0.0001


def in_turns(items: Sequence[Any], size: int = YIELD_EVERY) -> Iterator[Sequence[Any]]:
    """`items` in slices of `size`, pausing `YIELD_SECONDS` after each: the event loop's turn."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
        time.sleep(YIELD_SECONDS)


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
    protocol_version: str | None  # the request's, as the SDK read it: its generation is the row's
    task_id: str = ""


class AuditWriter:
    def __init__(self, *, capacity: int, batch_size: int, interval: float, queue: CallQueue | None = None) -> None:
        self.capacity = capacity
        self.batch_size = max(1, batch_size)
        self.interval = interval
        self.queue = queue  # set: the calls are handed to Redis (`audit.handoff`), not written here
        self._pending: deque[Call] = deque()
        self._wake = threading.Event()
        self._flushing = threading.Lock()  # one flush at a time: the thread's, or a shutdown's
        self._thread: threading.Thread | None = None
        os.register_at_fork(after_in_child=self._forget_thread)  # a forked worker starts its own

    @classmethod
    def from_settings(cls) -> AuditWriter:
        conf = audit_settings()
        return cls(
            capacity=conf["BUFFER"],
            batch_size=conf["BATCH_SIZE"],
            interval=conf["FLUSH_SECONDS"],
            queue=CallQueue.from_settings(),
        )

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
        """Write what is buffered now, in batches; the number of rows written.

        Only what was waiting when the flush began: under steady load the calls keep coming while
        a batch is written, and chasing them wrote batches of a few rows each, one transaction
        apiece, for as long as the load lasted (about 700 µs of CPU a batch: 100 µs a row instead
        of 4, bench/audit.py). What arrives meanwhile waits for the next wake."""
        written = 0
        with self._flushing:
            left = len(self._pending)
            while left > 0:
                batch = [self._pending.popleft() for _ in range(min(left, self.batch_size))]
                left -= len(batch)
                written += self._write(batch)
        return written

    def _write(self, batch: list[Call]) -> int:
        if self.queue is not None:  # the rows are built and written where the beat runs
            return self.queue.push(batch)
        close_old_connections()  # a long-lived thread: its connection may have gone stale
        rows = rows_of(batch)
        try:
            return write_rows(rows)
        except Exception:  # the database is down: retrying would only fill the process's memory
            logger.exception("audit: %d tool-call rows not written", len(rows))
            metrics.AUDIT_DROPPED_WRITE.inc(len(rows))
            connection.close()  # whatever state it is in, the next batch starts on a fresh one
            return 0

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
        if self.queue is not None:
            self.queue.forget_connection()


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
    """The row of one call (`FIELDS`): its arguments as a digest, and only the safe ones in full
    (as JSON text). A plain tuple: a model instance and the ORM's INSERT cost
    ten times more per row than the call they record (bench/audit.py)."""
    safe = "{}"
    if call.safe and isinstance(call.arguments, dict):
        kept = [f"{json.dumps(name)}:{_bounded(call.arguments[name])}" for name in call.safe if name in call.arguments]
        safe = _json_text("{" + ",".join(kept) + "}")
    return (
        datetime.fromtimestamp(call.at, UTC),
        call.tenant_id,
        *_principal_columns(call.principal),
        _text(call.tool),
        canonical_digest(call.arguments),
        safe,
        call.outcome,
        call.error_code,
        call.seconds * 1000,
        call.request_id,
        generation(call.protocol_version),
        call.task_id,
    )


def rows_of(calls: list[Call]) -> list[Row]:
    """The rows of `calls`, pausing every `YIELD_EVERY` for the event loop; a call whose row cannot
    be built is logged and counted, and only it is lost."""
    rows = []
    for turn in in_turns(calls):
        for call in turn:
            try:
                rows.append(to_row(call))
            except Exception:  # (arguments nested past the interpreter's limit): this row only
                logger.exception("audit: a tool-call row that could not be built was not written")
                metrics.AUDIT_DROPPED_WRITE.inc()
    return rows


def write_rows(rows: list[Row]) -> int:
    """Insert `rows`; the number written. When the database refuses a value, in halves, so a row it
    refuses loses only itself, not the calls of every tenant batched with it (at most twice the
    batch's depth in statements per refused row). Any other failure (the database is down) is
    raised: the process's writer drops the batch, the drain (`audit.handoff`) queues it again."""
    if not rows:
        return 0
    try:
        insert(rows)
    except DataError:
        if len(rows) == 1:
            logger.exception("audit: a tool-call row the database refuses was not written")
            metrics.AUDIT_DROPPED_WRITE.inc()
            return 0
        half = len(rows) // 2
        return write_rows(rows[:half]) + write_rows(rows[half:])
    return len(rows)


def insert(rows: list[Row]) -> None:
    """The batch in one transaction: PostgreSQL's binary COPY, or (SQLite, the embedded default)
    INSERTs of many rows each."""
    quote = connection.ops.quote_name
    columns = ", ".join(quote(COLUMNS[name]) for name in FIELDS)
    table = quote(ToolCall._meta.db_table)
    with transaction.atomic(), connection.cursor() as cursor:  # one commit (SQLite: one fsync) a batch
        if connection.vendor == "postgresql":
            # Binary: psycopg's C adapters write each value as the column's type (half the CPU of
            # the text format's per-value conversions); the types are the table's own, read once.
            types = _column_types(cursor)  # before the COPY: no other statement runs during one
            set_json_dumps(str, context=cursor.cursor)  # `arguments` is JSON text already (`to_row`)
            with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(types)
                for turn in in_turns(rows):
                    for row in turn:
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


_types: list[int] = []


def _column_types(cursor: Any) -> list[int]:
    """The PostgreSQL type (oid) of each column of `FIELDS`, from the catalog: a binary COPY must
    send each value as exactly its column's type (an ``integer`` key is not a ``bigint``)."""
    if not _types:
        cursor.execute(
            "SELECT attname, atttypid FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0",
            [ToolCall._meta.db_table],
        )
        oids = dict(cursor.fetchall())
        _types[:] = [oids[COLUMNS[name]] for name in FIELDS]
    return _types


@functools.lru_cache(maxsize=4096)
def _principal_columns(principal: Principal) -> tuple[int | None, str, str, str]:
    """The user, client id, issuer and subject columns of a principal's rows: worked out once per
    principal (a process sees the same callers again and again)."""
    client_id, issuer, subject = (_text(value)[:255] for value in principal)
    return user_id_of(principal), client_id, issuer, subject


def user_id_of(principal: Principal) -> int | None:
    """Our user's id, when the token is one this site issued (its subject is the user's id)."""
    if principal.issuer == settings.MCPSITE["ISSUER"] and principal.subject.isdigit():
        return int(principal.subject)
    return None


def _text(value: str) -> str:
    """`value` as a database can keep it: PostgreSQL refuses a NUL character in text (and in JSON),
    and one refused row would lose its whole batch, every tenant's calls in it; U+FFFD stands in."""
    return value.replace("\x00", "\ufffd") if "\x00" in value else value


# A NUL character as JSON text writes it: ``\u0000`` after an even number of backslashes (an odd one
# is a backslash escaped, then the text "u0000").
_JSON_NUL = re.compile(r"(?<!\\)((?:\\\\)*)\\u0000")


def _json_text(text: str) -> str:
    """JSON text as a database can keep it (`_text`): PostgreSQL's jsonb refuses ``\\u0000``."""
    return _JSON_NUL.sub(r"\1\\ufffd", text) if "\\u0000" in text else text


def _bounded(value: Any) -> str:
    """A safe argument as recorded, as JSON text (what is not JSON, as its text); by its size
    alone when it is longer than `SAFE_VALUE_MAX`."""
    encoded = json.dumps(value, default=str)
    if len(encoded) > SAFE_VALUE_MAX:
        return json.dumps(f"<{len(encoded)} characters, not recorded>")
    return encoded


writer = AuditWriter.from_settings()
"""This process's writer (every tenant server's layer and every task run records to it)."""
