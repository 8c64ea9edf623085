"""Typed access to ``settings.APPROVALS``."""

from __future__ import annotations

from typing import TypedDict, cast

from django.conf import settings


class ApprovalsSettings(TypedDict):
    HOLD_SECONDS: float
    LEGACY_WAIT_SECONDS: float
    EXPIRES_SECONDS: float
    EXPIRE_EVERY_SECONDS: float
    REPUBLISH_EVERY_SECONDS: float
    EXPIRE_BATCH_SIZE: int
    EXPIRE_TICK_SECONDS: float
    MAX_PENDING_PER_PRINCIPAL: int
    WEBHOOK_TOLERANCE_SECONDS: int
    SANDBOX_WEBHOOK_SECRET: str


def approvals_settings() -> ApprovalsSettings:
    return cast("ApprovalsSettings", settings.APPROVALS)
