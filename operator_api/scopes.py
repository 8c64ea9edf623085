"""DOT's scopes backend: which scopes a client may ask for.

Operator scopes go only to an operator machine client (`OperatorClient`), and only the ones it
was created with; every other client (a DCR registration, the scripts' client) may ask for the
rest (``mcp`` and the scopes toolsets declare, `mcpsite.scopes.ToolScopes`), exactly as before.
The authorization server's metadata lists only those.
"""

from __future__ import annotations

from typing import Any

from mcpsite.scopes import ToolScopes

OPERATOR_SCOPES = frozenset(
    {"approvals:read", "approvals:write", "keys:rotate", "tenants:write", "tasks:read", "tasks:write", "audit:read"}
)


def operator_scopes_of(application: Any) -> list[str] | None:
    """The scopes of `application` if it is an operator machine client, else None."""
    if application is None or application.pk is None:
        return None
    from operator_api.models import OperatorClient

    scopes = OperatorClient.objects.filter(application_id=application.pk).values_list("scopes", flat=True).first()
    return None if scopes is None else [scope for scope in scopes if scope in OPERATOR_SCOPES]


class OperatorScopes(ToolScopes):
    def get_available_scopes(
        self, application: Any = None, request: Any = None, *args: Any, **kwargs: Any
    ) -> list[str]:
        operator = operator_scopes_of(application)
        if operator is not None:
            return operator
        return [scope for scope in super().get_available_scopes(application, request) if scope not in OPERATOR_SCOPES]

    def get_default_scopes(self, application: Any = None, request: Any = None, *args: Any, **kwargs: Any) -> list[str]:
        operator = operator_scopes_of(application)
        if operator is not None:
            return operator
        return list(super().get_default_scopes(application, request))
