"""Typed access to ``settings.TASKS``."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from django.conf import settings

if TYPE_CHECKING:
    from mcpsite.settings import TasksSettings


def tasks_settings() -> TasksSettings:
    return cast("TasksSettings", settings.TASKS)
