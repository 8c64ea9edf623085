"""The one base of the errors approvals raises on purpose, so a caller can tell "approvals refused"
from a bug with one ``except``. Each error keeps its standard-library base as well (`WrongKind` is
still a `ValueError`), so no existing handler changes."""

from __future__ import annotations


class ApprovalsError(Exception):
    """Base of approvals' errors (each carries its data: the row, the limit, the reason...)."""
