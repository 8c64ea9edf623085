"""Celery tasks of the Tasks extension: a run, and the beat's sweep (schedule in settings)."""

from __future__ import annotations

from celery import shared_task

from mcp_tasks import dispatch, services


@shared_task
def task_run(task_id: str) -> None:
    """Queue one run on this worker process's runner (a run already finished, or another worker's,
    is not claimed and does nothing)."""
    dispatch.run_here(task_id)


@shared_task
def tasks_sweep() -> dict[str, int]:
    """Delete expired tasks; retry or fail the ones whose worker was lost."""
    sweep = services.tasks_sweep()
    return {"deleted": sweep.deleted, "retried": sweep.retried, "failed": sweep.failed}
