"""Typed access to ``settings.NOTIFICATIONS``."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from django.conf import settings

if TYPE_CHECKING:
    from mcpsite.settings import NotificationsSettings


def notifications_settings() -> NotificationsSettings:
    return cast("NotificationsSettings", settings.NOTIFICATIONS)
