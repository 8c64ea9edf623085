"""The one base of the errors the operator API raises on purpose, so a caller can tell "the API
refused" from a bug with one ``except``. Each error keeps its own base as well (`InsufficientScope`
is still DRF's `PermissionDenied`), so no existing handler changes. `operator_api.errors` maps
them to the wire; this module imports nothing, because `permissions` is loaded while DRF itself is."""

from __future__ import annotations


class OperatorApiError(Exception):
    """Base of the operator API's errors (a refused client, a missing scope...)."""
