"""An idle server on the embedded default logs its beat's bookkeeping (expiry, republish, sends,
sweeps) at DEBUG: Celery's "Task ... succeeded" line for each tick made ~22 INFO lines a minute.
With ``MCPSITE_LOG_LEVEL=DEBUG`` they are there; a job that fails still logs at ERROR."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import pytest
from celery import shared_task

from tests.conftest import LiveServer

FAST_BEAT = {
    "MCPSITE_REDIS_URL": "",  # the embedded default: the beat's jobs run in the serving process
    "MCPSITE_NOTIFICATIONS_SEND_EVERY_SECONDS": "0.2",
    "MCPSITE_TASKS_SWEEP_EVERY_SECONDS": "0.2",
}


def idle_log(server: LiveServer, seconds: float = 2.0) -> str:
    server.mark_log()
    time.sleep(seconds)
    return server.log_since_mark()


def test_an_idle_embedded_server_logs_no_bookkeeping_lines_at_info(server_factory: Callable[..., LiveServer]) -> None:
    server = server_factory(**FAST_BEAT)
    try:
        log = idle_log(server)
    finally:
        server.stop()

    assert "celery.app.trace" not in log, log[-2000:]


def test_at_debug_the_bookkeeping_lines_are_there(server_factory: Callable[..., LiveServer]) -> None:
    server = server_factory(**FAST_BEAT, MCPSITE_LOG_LEVEL="DEBUG")
    try:
        log = idle_log(server)
    finally:
        server.stop()

    assert "DEBUG celery.app.trace: Task notifications.tasks.notifications_send_due" in log, log[-2000:]


@shared_task(name="tests.a_task_off_the_beat_schedule")
def a_task_off_the_beat_schedule() -> str:
    return "done"


def test_a_task_off_the_schedule_still_logs_at_info(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="celery.app.trace"):
        a_task_off_the_beat_schedule.apply()

    assert [r.levelname for r in caplog.records if r.name == "celery.app.trace"] == ["INFO"]


def test_deployed_the_beats_sending_and_the_workers_receiving_of_a_job_are_at_debug_too(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Celery's own calls, as its beat and its worker make them (celery.beat, celery.worker.strategy)."""
    with caplog.at_level(logging.INFO):
        logging.getLogger("celery.beat").info(
            "Scheduler: Sending due task %s (%s)", "audit-drain", "audit.tasks.toolcalls_drain"
        )
        logging.getLogger("celery.beat").info(
            "Scheduler: Sending due task %s (%s)", "other", "tests.a_task_off_the_beat_schedule"
        )
        for name in ("audit.tasks.toolcalls_drain", "tests.a_task_off_the_beat_schedule"):
            context = {"id": "1", "name": name, "args": "()", "kwargs": "{}"}
            logging.getLogger("celery.worker.strategy").info(
                "Task %(name)s[%(id)s] received", context, extra={"data": context}
            )

    assert [(r.name, r.levelname, r.getMessage()) for r in caplog.records] == [
        ("celery.beat", "INFO", "Scheduler: Sending due task other (tests.a_task_off_the_beat_schedule)"),
        ("celery.worker.strategy", "INFO", "Task tests.a_task_off_the_beat_schedule[1] received"),
    ]
