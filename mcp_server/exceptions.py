"""The one base of the errors the composition root raises on purpose (a session cap reached, a tenant
that cannot be served now), so a caller can tell them from a bug with one ``except``."""

from __future__ import annotations


class McpServerError(Exception):
    """Base of the composition root's errors."""
