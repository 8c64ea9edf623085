"""Typed access to ``settings.TASKS``."""

from __future__ import annotations

from typing import TypedDict, cast

from django.conf import settings


class TasksSettings(TypedDict):
    TTL_SECONDS: int
    POLL_INTERVAL_MS: int
    MAX_LIVE_PER_PRINCIPAL: int
    LEASE_SECONDS: float
    WORKERS: int
    MAX_RUNNING_PER_TENANT: int
    MAX_RUNNING_PER_PRINCIPAL: int
    SWEEP_EVERY_SECONDS: float
    IN_PROCESS: bool
    SERVER_FOR: str
    FINISHED_KEEP_SECONDS: int
    DELETE_BATCH_SIZE: int
    DELETE_BATCHES_PER_SWEEP: int


def tasks_settings() -> TasksSettings:
    return cast("TasksSettings", settings.TASKS)
