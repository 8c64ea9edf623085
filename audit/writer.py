"""Writing audit rows off the request's path: a bounded buffer, one writer thread per process.

1. A call hands `AuditWriter.record` a `Call`: plain values taken from the request, nothing
   computed (the arguments as sent, the tool's server for their digest). When the buffer holds
   ``AUDIT["BUFFER"]`` calls, the call is dropped and ``mcpsite_audit_dropped_total{reason=
   "buffer_full"}`` counts it: recording never waits, whatever the database does.
2. The writer thread wakes every ``FLUSH_SECONDS``, or as soon as a batch's worth is waiting, and
   writes what is buffered in ``bulk_create`` batches of at most ``BATCH_SIZE`` rows. The digest of
   each call's arguments is taken here, off the request's path.
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
from django.db import close_old_connections, connection

from audit.conf import audit_settings
from audit.models import ToolCall
from mcpsite import metrics
from tools_app.principal import Principal
from tools_app.urlmode import arguments_digest, canonical_digest

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
    server: Any  # the tenant's MCPServer, to digest the arguments as the tool validates them (or None)
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
            ToolCall.objects.bulk_create([to_row(call) for call in batch], batch_size=self.batch_size)
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


def to_row(call: Call) -> ToolCall:
    """The row of one call: its arguments as a digest, and only the safe ones in full."""
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    client_id, issuer, subject = call.principal
    return ToolCall(
        at=datetime.fromtimestamp(call.at, UTC),
        tenant_id=call.tenant_id,
        user_id=user_id_of(call.principal),
        client_id=client_id[:255],
        issuer=issuer[:255],
        subject=subject[:255],
        tool=call.tool,
        arguments_digest=digest_of(call),
        arguments={name: _bounded(arguments[name]) for name in call.safe if name in arguments},
        outcome=call.outcome,
        error_code=call.error_code,
        duration_ms=call.seconds * 1000,
        request_id=call.request_id,
        generation=call.generation,
        task_id=call.task_id,
    )


def digest_of(call: Call) -> str:
    """The digest the tool's own model gives its arguments (so ``1`` and ``"1"`` for an ``int`` are
    one, and it equals the digest a URL-mode step's row is kept under); for arguments no tool
    validated (an unknown tool, arguments it refused), the digest of the arguments as sent."""
    if call.server is not None and isinstance(call.arguments, dict):
        try:
            digest = arguments_digest(call.server, call.tool, call.arguments)
        except Exception:  # pydantic refused them: the call was answered as such
            digest = None
        if digest is not None:
            return digest
    return canonical_digest(call.arguments)


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
