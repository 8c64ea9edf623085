"""Typed access to ``settings.APPROVALS``."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from django.conf import settings

if TYPE_CHECKING:
    from mcpsite.settings import ApprovalsSettings


def approvals_settings() -> ApprovalsSettings:
    return cast("ApprovalsSettings", settings.APPROVALS)
