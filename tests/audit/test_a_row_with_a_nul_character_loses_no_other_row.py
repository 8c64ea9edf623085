"""One caller cannot make the audit lose other callers' rows: a NUL character in a tool's name or
in an argument a tool marks safe (PostgreSQL refuses NUL in text and JSON, and one refused row
used to fail its whole batch) is written as U+FFFD, and a batch the database still refuses for one
row's value is written in halves, losing that row only (counted ``reason="write_failed"``). A row
that cannot even be built (arguments nested past the interpreter's limit) loses only itself too."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.db import DataError

from audit import writer as audit_writer
from audit.models import ToolCall
from audit.writer import AuditWriter, Call
from mcpsite import metrics
from tools_app.principal import Principal


def call(tool: str, arguments: Any, safe: tuple[str, ...] = ()) -> Call:
    return Call(
        time.time(),
        None,
        Principal("c", "i", "s"),
        tool,
        arguments,
        safe,
        "result",
        None,
        0.001,
        "r" * 16,
        "2026-07-28",
    )


def keep_the_tests_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    """Flushed here in the test's transaction, not the writer's thread: its stale-connection check
    (which closes a connection inside an atomic block) stays out of the way."""
    monkeypatch.setattr(audit_writer, "close_old_connections", lambda: None)


@pytest.mark.django_db
def test_nul_characters_are_replaced_and_every_row_of_the_batch_is_written(monkeypatch: pytest.MonkeyPatch) -> None:
    keep_the_tests_connection(monkeypatch)
    writer = AuditWriter(capacity=100, batch_size=100, interval=3600)
    for one in (call("a\x00b", {}), call("echo", {"text": "x\x00y"}, ("text",)), call("echo", {"text": "ok"})):
        writer.record(one)

    assert writer.flush() == 3

    rows = list(ToolCall.objects.order_by("id").values_list("tool", "arguments"))[-3:]
    assert rows == [("a\ufffdb", {}), ("echo", {"text": "x\ufffdy"}), ("echo", {})]


@pytest.mark.django_db
def test_a_row_the_database_refuses_loses_only_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    keep_the_tests_connection(monkeypatch)
    real = audit_writer.insert

    def refusing(rows: list[Any]) -> None:  # stands for any value the database refuses
        if any(row[6] == "poison" for row in rows):
            raise DataError("refused")
        real(rows)

    monkeypatch.setattr(audit_writer, "insert", refusing)
    writer = AuditWriter(capacity=100, batch_size=100, interval=3600)
    for n in range(9):
        writer.record(call("poison" if n == 4 else f"tool{n}", {}))
    before = ToolCall.objects.count()

    assert writer.flush() == 8

    assert ToolCall.objects.count() - before == 8
    assert not ToolCall.objects.filter(tool="poison").exists()


@pytest.mark.django_db
def test_a_row_that_cannot_be_built_loses_only_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    keep_the_tests_connection(monkeypatch)
    deep: Any = []
    for _ in range(100_000):  # its digest's JSON recurses past the interpreter's limit
        deep = [deep]
    writer = AuditWriter(capacity=100, batch_size=100, interval=3600)
    for n in range(5):
        writer.record(call(f"tool{n}", {"x": deep} if n == 2 else {}))
    before, dropped = ToolCall.objects.count(), metrics.AUDIT_DROPPED_WRITE._value.get()

    assert writer.flush() == 4

    assert ToolCall.objects.count() - before == 4
    assert not ToolCall.objects.filter(tool="tool2").exists()
    assert metrics.AUDIT_DROPPED_WRITE._value.get() - dropped == 1
