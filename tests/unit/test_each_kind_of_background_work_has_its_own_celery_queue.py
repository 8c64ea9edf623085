"""Deployed, task runs, outgoing notifications and the beat's own jobs go to Celery queues of
their own (`CELERY_TASK_ROUTES`), so a worker taking task runs never holds expiry or a
notification back; and a worker started without -Q still takes all three."""

from __future__ import annotations

from django.conf import settings

from config.celery import app

BEATS_OWN = {
    "approvals.tasks.elicitations_expire",
    "approvals.tasks.elicitations_republish",
    "mcp_tasks.tasks.tasks_sweep",
    "audit.tasks.toolcalls_purge",
}


def queue_of(task_name: str) -> str:
    return str(app.amqp.router.route({}, task_name)["queue"].name)


def test_a_task_run_goes_to_the_tasks_queue() -> None:
    assert queue_of("mcp_tasks.tasks.task_run") == "tasks"


def test_notifications_go_to_the_notifications_queue_whether_sent_after_commit_or_by_the_beat() -> None:
    assert queue_of("notifications.tasks.deliveries_send") == "notifications"
    assert queue_of("notifications.tasks.notifications_send_due") == "notifications"


def test_every_other_beat_job_goes_to_the_housekeeping_queue() -> None:
    scheduled = {str(entry["task"]) for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    others = {name for name in scheduled if not name.startswith("notifications.")}
    assert BEATS_OWN <= others
    assert {name: queue_of(name) for name in others} == dict.fromkeys(others, "housekeeping")


def test_a_worker_started_without_a_queue_takes_all_three() -> None:
    assert set(app.amqp.queues) == {"tasks", "notifications", "housekeeping"}
