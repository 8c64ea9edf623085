"""On the embedded default (no Redis: task bodies run on the serving process's own task runner),
one member running their cap of long tasks, and their tenant its cap, leaves another tenant's
0-second task done within 2 s; runs over a limit wait as ``working`` (none is refused), and
when every place is taken, tenants take turns starting their waiting runs."""

from __future__ import annotations

import time
from collections.abc import Callable

from oauth2_provider.models import Application

from mcp_tasks.models import Task
from tests.conftest import Cast, LiveServer
from tests.tasks.conftest import result, rpc, serve, start, wait_for

LIMITS = {
    "MCPSITE_REDIS_URL": "",  # the embedded default: in-memory channel layer, beat and tasks in process
    "MCPSITE_TASKS_WORKERS": "4",
    "MCPSITE_TASKS_MAX_RUNNING_PER_TENANT": "3",
    "MCPSITE_TASKS_MAX_RUNNING_PER_PRINCIPAL": "2",
}


def running(task_ids: list[str]) -> int:
    return Task.objects.filter(pk__in=task_ids, status=Task.Status.WORKING).exclude(worker="").count()


def wait_until_running(task_ids: list[str], count: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while running(task_ids) < count:
        assert time.monotonic() < deadline, f"{running(task_ids)} of {count} runs started within {timeout}s"
        time.sleep(0.05)


def cancel_all(url: str, token: str, task_ids: list[str]) -> None:
    for task_id in task_ids:
        rpc(url, "tasks/cancel", {"taskId": task_id}, token)


def test_a_members_long_tasks_leave_another_tenants_0_second_task_done_within_2_seconds(
    server_factory: Callable[..., LiveServer], cast: Cast
) -> None:
    server = server_factory(**LIMITS)
    busy = serve(server, "fair-busy", ["alice", "bob"], cast)
    quiet = serve(server, "fair-quiet", ["mallory"], cast)
    alice, bob = cast.token(server, "alice", "fair-busy"), cast.token(server, "bob", "fair-busy")
    mallory = cast.token(server, "mallory", "fair-quiet")
    alices = [start(busy, alice, seconds=120) for _ in range(6)]
    bobs = [start(busy, bob, seconds=120) for _ in range(2)]
    try:
        wait_until_running(alices + bobs, 3)

        begun = time.monotonic()
        quick = start(quiet, mallory, seconds=0, title="quick")
        task = wait_for(quiet, mallory, quick, "completed", timeout=2.0)
        took = time.monotonic() - begun

        assert task["result"]["content"] == [{"type": "text", "text": "quick: done after 0s"}]
        assert took < 2.0
        assert running(alices) == 2  # alice's limit
        assert running(alices + bobs) == 3  # the tenant's
        statuses = {result(rpc(busy, "tasks/get", {"taskId": t}, alice))["status"] for t in alices}
        assert statuses == {"working"}  # the waiting ones too: queued, not refused
    finally:
        cancel_all(busy, alice, alices)
        cancel_all(busy, bob, bobs)


def test_when_every_place_is_taken_tenants_take_turns_starting_their_waiting_runs(
    server_factory: Callable[..., LiveServer], cast: Cast
) -> None:
    server = server_factory(**{**LIMITS, "MCPSITE_TASKS_WORKERS": "1", "MCPSITE_TASKS_MAX_RUNNING_PER_TENANT": "1"})
    busy = serve(server, "turns-busy", ["alice"], cast)
    quiet = serve(server, "turns-quiet", ["mallory"], cast)
    alice, mallory = cast.token(server, "alice", "turns-busy"), cast.token(server, "mallory", "turns-quiet")
    first, *waiting = [start(busy, alice, seconds=3, title=f"a{n}") for n in range(4)]
    try:
        wait_until_running([first], 1)
        quick = start(quiet, mallory, seconds=0, title="quick")

        wait_for(quiet, mallory, quick, "completed", timeout=5.0)  # when the one place frees, at ~3 s

        assert result(rpc(busy, "tasks/get", {"taskId": first}, alice))["status"] == "completed"
        # alice's second run, waiting since before mallory's, starts after it: mallory's turn came first
        assert {result(rpc(busy, "tasks/get", {"taskId": t}, alice))["status"] for t in waiting} == {"working"}
        assert running(waiting) <= 1
    finally:
        cancel_all(busy, alice, [first, *waiting])


def test_a_persons_running_limit_counts_their_runs_from_every_oauth_client(
    server_factory: Callable[..., LiveServer], cast: Cast
) -> None:
    server = server_factory(**LIMITS)
    url = serve(server, "fair-clients", ["alice"], cast)
    phone, laptop = (
        Application.objects.create(
            name=name,
            client_type=Application.CLIENT_PUBLIC,
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            redirect_uris="http://127.0.0.1/callback",
        )
        for name in ("alice's phone", "alice's laptop")
    )
    from_phone = cast.token(server, "alice", "fair-clients", application=phone)
    from_laptop = cast.token(server, "alice", "fair-clients", application=laptop)
    phones = [start(url, from_phone, seconds=120) for _ in range(3)]
    laptops = [start(url, from_laptop, seconds=120) for _ in range(3)]
    try:
        wait_until_running(phones + laptops, 2)
        time.sleep(1.0)  # time for a third to start, were it allowed

        assert running(phones + laptops) == 2  # her limit, across both clients (the tenant's is 3)
    finally:
        cancel_all(url, from_phone, phones)
        cancel_all(url, from_laptop, laptops)
