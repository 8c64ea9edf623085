"""Typed access to ``settings.MCPSITE`` (mypy sees a plain dict of objects through ``settings``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from django.conf import settings

if TYPE_CHECKING:
    from mcpsite.settings import McpsiteSettings


def mcpsite_settings() -> McpsiteSettings:
    return cast("McpsiteSettings", settings.MCPSITE)
