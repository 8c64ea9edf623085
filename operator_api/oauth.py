"""The tenant validator, plus the one grant the operator API adds: client_credentials, for an
operator machine client whose operator is an active staff user, and for no other client.

DOT mints a client_credentials token with no user; the API acts for the application's user
(`operator_api.auth`). No tenant accepts such a token (a tenant needs the ``mcp`` scope and an
active member: `mcpsite.auth`).
"""

from __future__ import annotations

import logging
from typing import Any

from oauth2_provider.oauth2_validators import OAuth2Validator

from mcpsite.oauth_validator import TenantOAuth2Validator
from operator_api.models import OperatorClient

logger = logging.getLogger(__name__)


class OperatorOAuth2Validator(TenantOAuth2Validator):
    def validate_grant_type(
        self, client_id: str, grant_type: str, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        if grant_type != "client_credentials":
            return super().validate_grant_type(client_id, grant_type, client, request, *args, **kwargs)
        if not OperatorClient.objects.acting().filter(application_id=client.pk).exists():
            logger.info("token request refused: %s is not an operator client of an active staff user", client_id)
            return False
        # Past the tenant rule on purpose: this token acts for the operator at no tenant.
        return bool(OAuth2Validator.validate_grant_type(self, client_id, grant_type, client, request, *args, **kwargs))
