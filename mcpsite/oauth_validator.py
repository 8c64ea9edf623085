"""DOT's request validator with the rule a tenant applies to bearer tokens, applied where tokens are
minted too: a code or refresh token is honoured only while its user is active and a member of every
tenant it names, and only the grants that act for a user are served (no client_credentials)."""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from oauth2_provider.models import Grant
from oauth2_provider.oauth2_validators import OAuth2Validator

from mcpsite.oauth import tenant_for_resource

logger = logging.getLogger(__name__)

# Every token acts for a person who consented at one tenant. client_credentials would mint a token
# with no user (no tenant accepts one), password and device grants are not offered.
GRANTS_SERVED = frozenset({"authorization_code", "refresh_token"})


def may_act_at(user: AbstractBaseUser | AnonymousUser | None, resources: list[str] | None) -> bool:
    """Whether `user` is active and a member of the served tenant behind every resource (at least one)."""
    if user is None or not user.is_active or not resources:
        return False
    for resource in resources:
        tenant = tenant_for_resource(resource)
        if tenant is None or not tenant.members.filter(pk=user.pk).exists():
            return False
    return True


class TenantOAuth2Validator(OAuth2Validator):
    def validate_grant_type(
        self, client_id: str, grant_type: str, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        if grant_type not in GRANTS_SERVED:
            logger.info("token request refused: grant %s is not served (client %s)", grant_type, client_id)
            return False
        return bool(super().validate_grant_type(client_id, grant_type, client, request, *args, **kwargs))

    def validate_code(self, client_id: str, code: str, client: Any, request: Any, *args: Any, **kwargs: Any) -> bool:
        if not super().validate_code(client_id, code, client, request, *args, **kwargs):
            return False
        # The member who consented may have been removed (or deactivated) since.
        resources = Grant.objects.filter(code=code, application=client).values_list("resource", flat=True).first()
        return self._may_act(request.user, resources, "code")

    def validate_refresh_token(self, refresh_token: str, client: Any, request: Any, *args: Any, **kwargs: Any) -> bool:
        if not super().validate_refresh_token(refresh_token, client, request, *args, **kwargs):
            return False
        return self._may_act(request.user, request.refresh_token_instance.resource, "refresh token")

    def _may_act(self, user: AbstractBaseUser | AnonymousUser | None, resources: list[str] | None, what: str) -> bool:
        if may_act_at(user, resources):
            return True
        logger.info("%s refused: %s is not an active member of every tenant in %s", what, user, resources)
        return False
