"""The shape of ``settings.OPERATOR_API`` (read by the REST framework's settings: throttle rate and
page size)."""

from __future__ import annotations

from typing import TypedDict


class OperatorApiSettings(TypedDict):
    RATE: str
    PAGE_SIZE: int
