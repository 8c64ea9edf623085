"""Deployed (``MCPSITE_AUDIT_WRITER=redis``, the default with Redis), the serving process builds and
writes no row: it hands its calls to a Redis list, and the beat's drain job (`audit.handoff.drain`,
run here as the beat runs it) writes them, each as the process's own writer would have. While the
database is down the drain leaves the calls queued, in order, and a later run writes them all; when
the list is full (no drain running), a call is dropped and counted, and the call is answered as
ever; ``/metrics`` shows what waits. Real server, real Redis, real PostgreSQL; the drain runs in
this process or, with no database to reach, in a process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any
from typing import cast as typed

import pytest
from django.conf import settings
from redis import Redis

from audit.handoff import drain, unpack
from audit.models import ToolCall
from mcpsite.models import Tenant
from tests.audit.conftest import last_id, rows_after
from tests.conftest import ROOT, Cast, LiveServer, free_port
from tests.mcp.clients import modern_post
from tests.operate.scrape import scrape, value
from tools_app.urlmode.fulfil import canonical_digest

OPEN = "open"  # a public tenant: `book_table` answers a bad date as a tool error


@pytest.fixture
def redis() -> Iterator[Redis]:
    with Redis.from_url(os.environ["MCPSITE_REDIS_URL"]) as client:
        yield client


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch, redis: Redis, cast: Cast) -> Iterator[str]:
    """A list of this test's own, which this process's drain reads too."""
    name = f"test:audit:{uuid.uuid4().hex}"
    monkeypatch.setitem(settings.AUDIT, "QUEUE_KEY", name)
    yield name
    redis.delete(name)


def handing_off(server_factory: Callable[..., LiveServer], key: str, **env: str) -> LiveServer:
    return server_factory(
        MCPSITE_AUDIT_WRITER="redis", MCPSITE_AUDIT_QUEUE_KEY=key, MCPSITE_AUDIT_FLUSH_SECONDS="0.1", **env
    )


def book(server: LiveServer, arguments: dict[str, Any]) -> Any:
    params = {"name": "book_table", "arguments": arguments}
    answer = modern_post(server.mcp_url(OPEN), "tools/call", params, **{"Mcp-Name": "book_table"})
    assert answer.status_code == 200, answer.text
    return answer


def entries(redis: Redis, key: str) -> list[bytes]:
    return typed("list[bytes]", redis.lrange(key, 0, -1))  # the client decodes no responses


def queued_calls(redis: Redis, key: str, count: int) -> list[Any]:
    """The calls in the list once `count` are there (the server's writer flushes every 0.1 s)."""
    deadline = time.monotonic() + 10
    while True:
        calls = [call for entry in entries(redis, key) for call in unpack(entry)]
        if len(calls) >= count:
            return calls
        assert time.monotonic() < deadline, f"{len(calls)} of {count} calls queued"
        time.sleep(0.05)


def test_the_drain_writes_what_the_server_queued_and_the_server_writes_nothing(
    server_factory: Callable[..., LiveServer], key: str, redis: Redis
) -> None:
    server = handing_off(server_factory, key)
    mark = last_id()
    # Valid JSON that a careless encoding would not carry: an integer past 64 bits, a lone surrogate.
    sent = [
        {"date": "2026-02-30", "party_size": 2},
        {"date": "\ud800", "party_size": 2**70},
        {"date": "2026-03-01", "party_size": 4},
    ]
    answers = [book(server, arguments) for arguments in sent]

    assert len(queued_calls(redis, key, 3)) == 3
    time.sleep(0.3)  # three flushes more: the server writes no row of its own
    assert ToolCall.objects.filter(id__gt=mark).count() == 0

    assert drain() == 3

    rows = rows_after(mark, 3, timeout=0)
    assert redis.llen(key) == 0
    tenant = Tenant.objects.get(slug=OPEN).pk
    assert [(r.tenant_id, r.tool, r.request_id, r.generation) for r in rows] == [
        (tenant, "book_table", a.headers["x-request-id"], "2026-07-28") for a in answers
    ]
    assert [r.outcome for r in rows] == [
        "result" if not a.json()["result"]["isError"] else "tool_error" for a in answers
    ]
    assert [r.arguments_digest for r in rows] == [canonical_digest(arguments) for arguments in sent]
    assert [r.arguments for r in rows] == [{}, {}, {}]  # book_table marks no argument safe


def test_with_the_database_down_the_drain_leaves_every_call_queued_in_order(
    server_factory: Callable[..., LiveServer], key: str, redis: Redis
) -> None:
    server = handing_off(server_factory, key, MCPSITE_AUDIT_BATCH_SIZE="1")  # an entry a call
    mark = last_id()
    answers = []
    for size in (1, 2, 3):
        answers.append(book(server, {"date": "2026-02-30", "party_size": size}))
        queued_calls(redis, key, size)
    queued = entries(redis, key)
    assert len(queued) == 3

    # The beat's job, in a process whose database refuses connections (nothing listens there).
    nowhere = f"postgres://postgres@127.0.0.1:{free_port()}/mcpsite"
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from audit.tasks import toolcalls_drain as d; print(d())",
        ],
        cwd=ROOT,
        env={**server.env, "MCPSITE_DATABASE_URL": nowhere, "MCPSITE_AUDIT_QUEUE_KEY": key},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["0"]
    assert "audit: the database cannot take rows; 3 batches left queued" in run.stderr
    assert entries(redis, key) == queued  # the same entries, in the same order

    assert drain() == 3
    assert [r.request_id for r in rows_after(mark, 3, timeout=0)] == [a.headers["x-request-id"] for a in answers]


def test_a_full_list_drops_and_counts_the_call_and_answers_it(
    server_factory: Callable[..., LiveServer], key: str, redis: Redis
) -> None:
    server = handing_off(server_factory, key, MCPSITE_AUDIT_QUEUE_MAX_BATCHES="1")
    mark = last_id()
    first = book(server, {"date": "2026-02-30", "party_size": 2})
    queued_calls(redis, key, 1)

    second = book(server, {"date": "2026-02-30", "party_size": 3})

    assert second.json()["result"]["isError"] is True  # answered as ever
    deadline = time.monotonic() + 10
    while value(scrape(server.url), "mcpsite_audit_dropped_total", reason="buffer_full") != 1:
        assert time.monotonic() < deadline, "the dropped call was not counted"
        time.sleep(0.05)
    assert redis.llen(key) == 1
    assert value(scrape(server.url), "mcpsite_audit_queued_batches") == 1  # what an operator sees
    assert drain() == 1
    assert value(scrape(server.url), "mcpsite_audit_queued_batches") == 0
    assert [r.request_id for r in rows_after(mark, 1, timeout=0)] == [first.headers["x-request-id"]]
