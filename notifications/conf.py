"""Typed access to ``settings.NOTIFICATIONS``."""

from __future__ import annotations

from typing import TypedDict, cast

from django.conf import settings


class NotificationsSettings(TypedDict):
    TIMEOUT_SECONDS: float
    MAX_ATTEMPTS: int
    BACKOFF_BASE_SECONDS: float
    BACKOFF_MAX_SECONDS: float
    BATCH_SIZE: int
    MAX_IN_FLIGHT_PER_ENDPOINT: int
    SEND_EVERY_SECONDS: float
    ALLOW_LOOPBACK: bool


def notifications_settings() -> NotificationsSettings:
    return cast("NotificationsSettings", settings.NOTIFICATIONS)
