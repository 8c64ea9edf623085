"""One principal may hold ``MCPSITE_TASKS_MAX_LIVE_PER_PRINCIPAL`` unfinished tasks at a tenant;
the next ``tools/call`` that would start one is refused before any row exists, and another
principal is not held back by it."""

from __future__ import annotations

from collections.abc import Callable

from mcp_tasks.models import Task
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
