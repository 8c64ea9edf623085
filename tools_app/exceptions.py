"""The one base of the errors the tool framework raises on purpose, so a caller can tell "the
framework refused" from a bug with one ``except``. Each error keeps its standard-library base as
well (`WireNameConflict` is still a `ValueError`), so no existing handler changes."""

from __future__ import annotations


class ToolsAppError(Exception):
    """Base of the framework's errors (a refused tool definition or URL-mode step)."""
