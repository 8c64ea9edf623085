"""Every operator API action needs two things: a token carrying the action's operator scope
(`OperatorScope`, DOT's `TokenHasScope`), and an active staff user, the token's or the machine
client's operator, holding the Django permission the admin requires for it (`StaffMayAct`).

A view names both per action in ``operator_rules``: ``{action: (scope, permission)}``.
"""

from __future__ import annotations

from typing import Any

from oauth2_provider.contrib.rest_framework import TokenHasScope
from rest_framework.exceptions import MethodNotAllowed, PermissionDenied
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from operator_api.exceptions import OperatorApiError


class InsufficientScope(OperatorApiError, PermissionDenied):
    """403 with ``WWW-Authenticate: Bearer error="insufficient_scope"`` (RFC 6750 section 3.1)."""

    def __init__(self, *, scope: str) -> None:
        super().__init__(f"This needs a token with the {scope!r} scope.")
        self.scope = scope


def rule_of(view: Any) -> tuple[str, str]:
    rules: dict[str, tuple[str, str]] = view.operator_rules
    action = getattr(view, "action", None) or view.request.method.lower()
    rule = rules.get(action)
    if rule is None:  # a method the endpoint does not take (PUT of a tenant, GET of a member's role)
        raise MethodNotAllowed(view.request.method)
    return rule


class OperatorScope(TokenHasScope):
    def has_permission(self, request: Request, view: Any) -> bool:
        if request.auth is None:
            return False  # DRF answers 401 with the Bearer challenge
        if super().has_permission(request, view):
            return True
        raise InsufficientScope(scope=rule_of(view)[0])

    def get_scopes(self, request: Request, view: Any) -> list[str]:
        return [rule_of(view)[0]]


class StaffMayAct(BasePermission):
    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        if user is None or not user.is_authenticated:
            return False
        permission = rule_of(view)[1]
        if not (user.is_active and user.is_staff):
            raise PermissionDenied(f"{user.get_username()} is not an active staff user.")
        if not user.has_perm(permission):
            raise PermissionDenied(f"{user.get_username()} lacks the {permission!r} permission.")
        return True
