"""The one base of the errors notifications raises on purpose, so a caller can tell "notifications
refused" from a bug with one ``except``. Each error keeps its standard-library base as well
(`EndpointRefused` is still a `ValueError`), so no existing handler changes."""

from __future__ import annotations


class NotificationsError(Exception):
    """Base of notifications' errors (an endpoint refused, with its reason)."""
