"""Who an operator API request acts for: DOT's bearer authentication, with a machine client's
token (client_credentials: DOT stores no user) acting for its operator, the application's user."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from oauth2_provider.contrib.rest_framework import OAuth2Authentication
from rest_framework.request import Request

from operator_api.models import OperatorClient


class OperatorAuthentication(OAuth2Authentication):
    www_authenticate_realm = "api"

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        result = super().authenticate(request)
        if result is None:
            return None
        user, token = result
        if user is None:
            user = token.application.user if token.application is not None else None
            if user is None or not OperatorClient.objects.filter(application_id=token.application_id).exists():
                # A userless token of another client (none is minted today) acts for no one.
                request.oauth2_error = OrderedDict(
                    [("error", "invalid_token"), ("error_description", "The token acts for no user.")]
                )
                return None
        return user, token
