"""One principal may hold ``MCPSITE_TASKS_MAX_LIVE_PER_PRINCIPAL`` unfinished tasks at a tenant;
the next ``tools/call`` that would start one is refused before any row exists, and another
principal is not held back by it."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.db import connection, transaction

from mcp_tasks.models import Task
from mcpsite.models import Tenant
from tests.conftest import Cast, LiveServer
from tests.tasks.conftest import error, result, rpc, serve, start


def test_a_principal_past_its_cap_of_live_tasks_is_refused_until_one_ends(
    server_factory: Callable[..., LiveServer], cast: Cast
) -> None:
    server = server_factory(MCPSITE_TASKS_MAX_LIVE_PER_PRINCIPAL="2")
    url = serve(server, "reports-capped", ["alice", "bob"], cast)
    alice, bob = cast.token(server, "alice", "reports-capped"), cast.token(server, "bob", "reports-capped")
    first, _ = start(url, alice, seconds=30), start(url, alice, seconds=30)
    rows = Task.objects.count()

    refused = rpc(url, "tools/call", {"name": "long_report", "arguments": {"seconds": 30}}, alice)

    assert error(refused) == {
        "code": -32600,
        "message": "You have 2 unfinished tasks here, the most allowed at once. "
        "Wait for one to end or cancel one (tasks/cancel), then call again.",
        "data": {"reason": "too_many_tasks", "limit": 2},
    }
    assert Task.objects.count() == rows
    start(url, bob, seconds=0)
    result(rpc(url, "tasks/cancel", {"taskId": first}, alice))
    start(url, alice, seconds=0)


def test_two_processes_deciding_at_once_cannot_both_take_the_last_place(
    server_factory: Callable[..., LiveServer], cast: Cast
) -> None:
    """The cap is decided under a lock on the tenant row, so two processes counting at once cannot
    both see room. The test holds that row (FOR UPDATE) while one call reaches each process and
    lets go once both wait on it: counted without the lock, both would have counted none and
    then both inserted."""
    first = server_factory(MCPSITE_TASKS_MAX_LIVE_PER_PRINCIPAL="1")
    second = server_factory(MCPSITE_TASKS_MAX_LIVE_PER_PRINCIPAL="1", MCPSITE_SITE_ROOT=first.url)
    urls = [serve(first, "reports-raced", ["alice"], cast)]
    urls.append(urls[0].replace(first.url, second.url))
    alice = cast.token(first, "alice", "reports-raced")
    assert rpc(urls[1], "tools/list", token=alice).status_code == 200

    def call(url: str) -> dict[str, Any]:
        response = rpc(url, "tools/call", {"name": "long_report", "arguments": {"seconds": 30}}, alice)
        message: dict[str, Any] = json.loads(response.text)
        return message

    with ThreadPoolExecutor(2) as pool:
        with transaction.atomic():
            Tenant.objects.select_for_update().get(slug="reports-raced")
            answers = [pool.submit(call, url) for url in urls]
            deadline = time.monotonic() + 10
            while _lock_waiters() < 2:
                assert time.monotonic() < deadline, "the two calls never waited on the tenant row"
                time.sleep(0.02)
        replies = [answer.result(timeout=10) for answer in answers]

    started = [r["result"]["taskId"] for r in replies if "result" in r]
    assert sorted(r["error"]["data"]["reason"] for r in replies if "error" in r) == ["too_many_tasks"], replies
    assert Task.objects.filter(tenant__slug="reports-raced").count() == len(started) == 1
    result(rpc(urls[0], "tasks/cancel", {"taskId": started[0]}, alice))


def _lock_waiters() -> int:
    """Backends waiting for a lock now (pg_locks is read afresh on every query, even in a transaction)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE NOT granted")
        (waiting,) = cursor.fetchone()
    return int(waiting)
