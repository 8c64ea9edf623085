"""The authorization server, as django-oauth-toolkit provides it, plus the two things MCP hosting
adds: a token names one tenant (RFC 8707 resource = the tenant's MCP URL), and only that tenant's
members may authorize it. Dynamic client registration is open to public clients but rate-limited.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, JsonResponse
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.views import AuthorizationView, DynamicClientRegistrationView
from oauthlib.oauth2.rfc6749.errors import CustomOAuth2Error

from mcpsite.models import Tenant

logger = logging.getLogger(__name__)


def tenant_for_resource(resource: str) -> Tenant | None:
    """The served tenant whose MCP URL is exactly `resource`, if any."""
    prefix = f"{settings.SITE_ROOT}/t/"
    if not resource.startswith(prefix) or not resource.endswith("/mcp"):
        return None
    slug = resource[len(prefix) : -len("/mcp")]
    return Tenant.objects.served().filter(slug=slug).first()


class TenantAuthorizationView(AuthorizationView):
    """DOT's consent page, refusing a resource that is not one of our tenants or a user who is not
    a member of it (both answered to the client as RFC 6749 errors on its redirect URI)."""

    template_name = "oauth2_provider/authorize.html"

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            _, credentials = self.validate_authorization_request(request)
        except OAuthToolkitError as error:
            return self.error_response(error, application=None)
        refusal = self._refuse(request.GET.getlist("resource"), credentials)
        if refusal is not None:
            return refusal
        self.tenant = tenant_for_resource(request.GET["resource"])
        return super().get(request, *args, **kwargs)

    def form_valid(self, form: Any) -> HttpResponse:
        # The hidden field can be edited: check again what the user actually submits.
        credentials = {"redirect_uri": form.cleaned_data.get("redirect_uri"), "state": form.cleaned_data.get("state")}
        refusal = self._refuse((form.cleaned_data.get("resource") or "").split(), credentials)
        return refusal or super().form_valid(form)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["tenant"] = getattr(self, "tenant", None)
        return context

    def _refuse(self, resources: list[str], credentials: dict[str, Any]) -> HttpResponse | None:
        tenants = [tenant_for_resource(resource) for resource in resources]
        if len(tenants) != 1 or tenants[0] is None:
            return self._error(
                credentials, "invalid_target", "Ask for exactly one resource: a tenant's MCP endpoint URL."
            )
        if not tenants[0].members.filter(pk=self.request.user.pk).exists():
            logger.info("authorization refused: %s is not a member of tenant %s", self.request.user, tenants[0].slug)
            return self._error(credentials, "access_denied", f"You are not a member of {tenants[0].name}.")
        return None

    def _error(self, credentials: dict[str, Any], code: str, description: str) -> HttpResponse:
        error = OAuthToolkitError(
            error=CustomOAuth2Error(error=code, description=description, state=credentials.get("state")),
            redirect_uri=credentials.get("redirect_uri"),
        )
        return self.error_response(error, application=None)


class RateLimitedRegistrationView(DynamicClientRegistrationView):
    """RFC 7591 registration, open to anyone, at most ``MCPSITE_DCR_PER_HOUR`` per client address."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        key = f"mcpsite:dcr:{request.META.get('REMOTE_ADDR', '-')}"
        cache.add(key, 0, timeout=3600)
        if cache.incr(key) > settings.MCPSITE_DCR_PER_HOUR:
            response = JsonResponse(
                {"error": "slow_down", "error_description": "Too many client registrations; try again later."},
                status=429,
            )
            response["Retry-After"] = "3600"
            return response
        return super().post(request, *args, **kwargs)
