"""OpenAPI: our authentication is DOT's (drf-spectacular documents it as OAuth2 with the
operator scope of each operation), and the scope and Django permission go in each description."""

from __future__ import annotations

from drf_spectacular.contrib.django_oauth_toolkit import DjangoOAuthToolkitScheme
from drf_spectacular.openapi import AutoSchema

from operator_api.permissions import rule_of


class OperatorScheme(DjangoOAuthToolkitScheme):
    target_class = "operator_api.auth.OperatorAuthentication"


class OperatorAutoSchema(AutoSchema):
    def get_description(self) -> str:
        scope, permission = rule_of(self.view)
        who = f"Needs a token with scope `{scope}`, acting for an active staff user with `{permission}`."
        return f"{super().get_description()}\n\n{who}".strip()
