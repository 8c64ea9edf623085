"""Typed access to ``settings.AUDIT``."""

from __future__ import annotations

from typing import TypedDict, cast

from django.conf import settings


class AuditSettings(TypedDict):
    ENABLED: bool
    RETENTION_DAYS: int
    BUFFER: int
    BATCH_SIZE: int
    FLUSH_SECONDS: float
    WRITER: str
    QUEUE_KEY: str
    QUEUE_MAX_BATCHES: int
    DRAIN_EVERY_SECONDS: float
    DRAIN_BATCHES_PER_RUN: int
    DELETE_BATCH_SIZE: int
    DELETE_BATCHES_PER_RUN: int
    PURGE_EVERY_SECONDS: float
    STREAM_BATCH_SIZE: int


def audit_settings() -> AuditSettings:
    return cast("AuditSettings", settings.AUDIT)
