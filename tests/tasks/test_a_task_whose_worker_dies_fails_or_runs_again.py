"""A worker killed mid-run (here the embedded default's: the serving process itself) leaves its
lease to run out; the sweep of the restarted process ends the task failed, or runs it again when
its tool declared a retry (``task_retries=1``)."""

from __future__ import annotations

import time
from collections.abc import Callable

from mcp_tasks.models import Task
from tests.conftest import Cast, LiveServer
from tests.tasks.conftest import serve, start, wait_for

FAST_SWEEP = {"MCPSITE_TASKS_LEASE_SECONDS": "1.5", "MCPSITE_TASKS_SWEEP_EVERY_SECONDS": "0.5"}


def kill_mid_run(server: LiveServer, task_id: str) -> None:
    deadline = time.monotonic() + 10
    while not Task.objects.filter(pk=task_id, attempts__gte=1).exclude(worker="").exists():
        assert time.monotonic() < deadline, "no worker claimed the task"
        time.sleep(0.1)
    server.stop(kill=True)
    server.start()


def test_a_task_whose_worker_is_killed_mid_run_ends_failed(
    server_factory: Callable[..., LiveServer], cast: Cast
) -> None:
    server = server_factory(**FAST_SWEEP)
    url = serve(server, "reports", ["alice", "bob"], cast)
    alice = cast.token(server, "alice", "reports")
    task_id = start(url, alice, seconds=60)

    kill_mid_run(server, task_id)

    task = wait_for(url, alice, task_id, "failed", timeout=15)
    assert task["error"] == {
        "code": -32603,
        "message": "The worker running this task was lost",
        "data": {"reason": "worker_lost"},
    }
    assert "result" not in task


def test_a_task_whose_tool_declares_a_retry_runs_again_after_its_worker_is_killed(
    server_factory: Callable[..., LiveServer], cast: Cast
) -> None:
    server = server_factory(**FAST_SWEEP)
    url = serve(server, "reports", ["alice", "bob"], cast)
    alice = cast.token(server, "alice", "reports")
    task_id = start(url, alice, "resilient_report", seconds=2, title="quarterly")

    kill_mid_run(server, task_id)

    task = wait_for(url, alice, task_id, "completed", timeout=20)
    assert task["result"]["content"] == [{"type": "text", "text": "quarterly: done after 2s"}]
    assert Task.objects.get(pk=task_id).attempts == 2
