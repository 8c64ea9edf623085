"""Deployed (Redis broker, ``celery -A config worker``), a 30-second task runs in the worker: the
web process restarting in the middle loses nothing, and the client polling the new process gets
the result from the row."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT, Cast, LiveServer
from tests.tasks.conftest import result, rpc, serve, start, wait_for


@pytest.fixture
def web(server_factory: Callable[..., LiveServer]) -> LiveServer:
    return server_factory(MCPSITE_TASKS_IN_PROCESS="0")  # runs go to the broker


@pytest.fixture
def worker(web: LiveServer, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    log = (tmp_path / "worker.log").open("ab")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool=solo",
            "--without-gossip",
            "--without-mingle",
            "--loglevel=INFO",
        ],
        cwd=ROOT,
        env={**web.env, "MCPSITE_TASKS_IN_PROCESS": "0"},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    yield process
    process.terminate()
    process.wait(timeout=15)


def test_a_30_second_task_completes_across_a_restart_of_the_web_process(
    web: LiveServer, worker: subprocess.Popen[bytes], cast: Cast
) -> None:
    url = serve(web, "reports", ["alice", "bob"], cast)
    alice = cast.token(web, "alice", "reports")
    begun = time.monotonic()
    task_id = start(url, alice, seconds=30, title="annual")
    wait_for(url, alice, task_id, "working")

    time.sleep(10)
    web.stop()
    assert worker.poll() is None
    web.start()
    assert result(rpc(url, "tasks/get", {"taskId": task_id}, alice))["status"] == "working"

    task = wait_for(url, alice, task_id, "completed", timeout=40)
    assert task["result"]["content"] == [{"type": "text", "text": "annual: done after 30s"}]
    assert time.monotonic() - begun >= 30
