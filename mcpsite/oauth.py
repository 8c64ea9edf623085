"""The authorization server, as django-oauth-toolkit provides it, plus the two things MCP hosting
adds: a token names one tenant (RFC 8707 resource = the tenant's MCP URL), and only that tenant's
members may authorize it. Dynamic client registration is open, rate-limited, and registers public
authorization-code clients with https or loopback redirect URIs only; a client may instead name
itself by the URL of its Client ID Metadata Document (CIMD), held to the same rules.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django.core.cache import cache
from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.log import log_response
from django.utils.module_loading import import_string
from oauth2_provider.cimd import CIMDError
from oauth2_provider.exceptions import FatalClientError, OAuthToolkitError
from oauth2_provider.models import Application
from oauth2_provider.scopes import get_scopes_backend
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.views import (
    AuthorizationView,
    DynamicClientRegistrationManagementView,
    DynamicClientRegistrationView,
)
from oauthlib.oauth2.rfc6749.errors import CustomOAuth2Error

from mcpsite.conf import mcpsite_settings
from mcpsite.exceptions import McpsiteError
from mcpsite.jsonbody import JSONTooDeep, json_loads_bounded
from mcpsite.models import ClientApplicationType, Tenant
from mcpsite.net import address_bucket
from mcpsite.scopes import MCP_SCOPE
from mcpsite.tenancy import tenant_slug_of_resource

logger = logging.getLogger(__name__)


def tenant_for_resource(resource: str) -> Tenant | None:
    """The served tenant whose MCP URL is exactly `resource`, if any."""
    slug = tenant_slug_of_resource(resource)
    return None if slug is None else Tenant.objects.served().filter(slug=slug).first()


class TenantAuthorizationView(AuthorizationView):
    """DOT's consent page, refusing a resource that is not one of our tenants or a user who is not
    a member of it. On the GET (whose redirect URI DOT has checked against the client) the refusal
    goes to the client as an RFC 6749 error on its redirect URI; on the POST, whose fields may
    have been edited, nothing is redirected to before the client and redirect URI are checked
    again, and a refused resource is answered on our own page."""

    template_name = "oauth2_provider/authorize.html"

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            _, credentials = self.validate_authorization_request(request)
        except OAuthToolkitError as error:
            return self.error_response(error, application=None)
        refusal = self._refusal(request.GET.getlist("resource"))
        if refusal is not None:
            redirected = OAuthToolkitError(
                error=CustomOAuth2Error(error=refusal[0], description=refusal[1], state=credentials.get("state")),
                redirect_uri=credentials.get("redirect_uri"),
            )
            return self.error_response(redirected, application=None)
        self.tenant = tenant_for_resource(request.GET["resource"])
        return super().get(request, *args, **kwargs)

    def form_valid(self, form: Any) -> HttpResponse:
        # The hidden fields can be edited: check again what the user actually submits, the
        # redirect URI first (DOT answers a denial, or a malformed resource, by redirecting to
        # it unchecked: an open redirect).
        application = Application.objects.filter(client_id=form.cleaned_data.get("client_id") or "").first()
        if application is None or not application.redirect_uri_allowed(form.cleaned_data.get("redirect_uri") or ""):
            return self._page("invalid_request", "Unknown client, or a redirect URI it did not register.")
        refusal = self._refusal((form.cleaned_data.get("resource") or "").split())
        if refusal is not None:
            return self._page(*refusal)
        form.cleaned_data["scope"] = granted_of(
            (form.cleaned_data.get("scope") or "").split(), self.request.POST.getlist("granted")
        )
        return super().form_valid(form)

    def redirect(self, redirect_to: str, application: Any) -> HttpResponse:
        # RFC 9207: every authorization response names the issuer, errors included (DOT adds it to
        # a code response only; ours are code responses, so it goes in the query).
        issuer = oauth2_settings.oauth2_authorization_server_issuer(self.request)
        return super().redirect(with_issuer(redirect_to, issuer), application)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["tenant"] = getattr(self, "tenant", None)
        # Each scope asked for, in words, with whether the user may leave it out (every one but `mcp`).
        words = get_scopes_backend().get_all_scopes()
        context["scope_choices"] = [
            (scope, words.get(scope, scope), scope != MCP_SCOPE) for scope in context.get("scopes") or ()
        ]
        return context

    def _refusal(self, resources: list[str]) -> tuple[str, str] | None:
        """(error, description) when these resources may not be authorized by this user."""
        tenants = [tenant_for_resource(resource) for resource in resources]
        if len(tenants) != 1 or tenants[0] is None:
            return "invalid_target", "Ask for exactly one resource: a tenant's MCP endpoint URL."
        if not tenants[0].members.filter(pk=self.request.user.pk).exists():
            logger.info("authorization refused: %s is not a member of tenant %s", self.request.user, tenants[0].slug)
            return "access_denied", f"You are not a member of {tenants[0].name}."
        return None

    def _page(self, code: str, description: str) -> HttpResponse:
        # A FatalClientError is what DOT renders on our page instead of redirecting (400).
        return self.error_response(
            FatalClientError(error=CustomOAuth2Error(error=code, description=description)), application=None
        )


def granted_of(requested: list[str], ticked: list[str]) -> str:
    """The scopes a consent grants: `mcp` (a token without it calls nothing, so it is not offered
    as a choice) and the requested ones the user left ticked; a ticked scope that was not asked for
    is not granted."""
    return " ".join([MCP_SCOPE, *(scope for scope in requested if scope != MCP_SCOPE and scope in ticked)])


def with_issuer(uri: str, issuer: str) -> str:
    """`uri` with exactly one ``iss`` query parameter, `issuer`."""
    parts = urlsplit(uri)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "iss"]
    return urlunsplit(parts._replace(query=urlencode([*query, ("iss", issuer)])))


LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
REGISTRABLE_GRANT_TYPES = frozenset({"authorization_code", "refresh_token"})
# OpenID Connect Registration's two kinds; MCP (SEP-837) asks every registering client to say which
# (one that does not is given the kind its redirect URIs show: `application_type_infer`).
APPLICATION_TYPES = frozenset({"native", "web"})


class RegistrationRefused(McpsiteError):
    """Client metadata we do not register (RFC 7591 section 3.2.2 error code and description)."""

    def __init__(self, *, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


def redirect_uri_registrable(uri: str) -> bool:
    """https, or http on a loopback host (RFC 8252 section 7.3: a native client's local listener)."""
    try:
        parts = urlsplit(uri)
        host = parts.hostname
    except ValueError:
        return False
    if not host:
        return False
    return parts.scheme == "https" or (parts.scheme == "http" and host in LOOPBACK_HOSTS)


def client_metadata_vet(metadata: dict[str, Any]) -> None:
    """`RegistrationRefused` unless these are the metadata of a client we serve: authorization code
    (and refresh token) only, since client_credentials would mint tokens for no user, and https or
    loopback redirect URIs. Shapes DOT itself refuses (a non-list, a non-string) are left to it."""
    grant_types = metadata.get("grant_types", ["authorization_code"])
    if isinstance(grant_types, list) and all(isinstance(grant, str) for grant in grant_types):
        if "authorization_code" not in grant_types or not set(grant_types) <= REGISTRABLE_GRANT_TYPES:
            raise RegistrationRefused(
                error="invalid_client_metadata",
                description="Only authorization_code clients (with refresh_token) may register.",
            )
    redirect_uris = metadata.get("redirect_uris", [])
    if isinstance(redirect_uris, list):
        for uri in redirect_uris:
            if isinstance(uri, str) and not redirect_uri_registrable(uri):
                raise RegistrationRefused(
                    error="invalid_redirect_uri",
                    description=f"Redirect URIs must be https, or http on a loopback address: {uri!r} is neither.",
                )
            # OpenID Connect Registration: a web client redirects to a host of its own, never to
            # the user's machine (a loopback listener is a native app's, RFC 8252 section 7.3).
            if metadata.get("application_type") == "web" and isinstance(uri, str) and _on_loopback(uri):
                raise RegistrationRefused(
                    error="invalid_redirect_uri",
                    description=(
                        f"{uri!r} is a loopback address, which only a native client listens on:"
                        ' register with application_type "native".'
                    ),
                )


def _on_loopback(uri: str) -> bool:
    try:
        return urlsplit(uri).hostname in LOOPBACK_HOSTS
    except ValueError:
        return False


def application_type_infer(redirect_uris: list[str]) -> str:
    """The kind of client that registers these redirect URIs without saying which it is (clients
    predating SEP-837), as the official SDKs choose it: ``native`` when a redirect URI is on a
    loopback host (a listener on the user's machine, RFC 8252 section 7.3), else ``web`` (https on
    a host of its own). A mix of loopback and https is ``native``: a native app may also claim an
    https URI (RFC 8252 section 7.2; VS Code registers both), a web client may not listen on
    loopback."""
    return "native" if any(_on_loopback(uri) for uri in redirect_uris) else "web"


def registration_vet(metadata: Any) -> Any:
    """The metadata to hand DOT's registration, or `RegistrationRefused`.

    Held to `client_metadata_vet`. The client should say what it is (``application_type``, MCP
    2025-11-25 and 2026-07-28, SEP-837); one that does not (absent or null: many deployed clients
    predate SEP-837) is given the kind its redirect URIs show (`application_type_infer`), and a
    value other than ``native`` or ``web`` is refused. It is registered as public (``none``)
    whatever authentication it asked for (RFC 7591 section 3.2.1 lets the server replace a value;
    the response says which). Shapes DOT itself refuses (not a JSON object, redirect URIs that are
    not a list of strings, none at all) are left to it.
    """
    if not isinstance(metadata, dict):
        return metadata
    client_metadata_vet(metadata)
    vetted = {**metadata, "token_endpoint_auth_method": "none"}
    stated = metadata.get("application_type")
    if stated is None:
        redirect_uris = metadata.get("redirect_uris")
        if isinstance(redirect_uris, list) and redirect_uris and all(isinstance(uri, str) for uri in redirect_uris):
            vetted["application_type"] = application_type_infer(redirect_uris)
        else:
            vetted.pop("application_type", None)
    elif stated not in APPLICATION_TYPES:
        raise RegistrationRefused(
            error="invalid_client_metadata",
            description='application_type is "native" or "web" (or left out, to be read from the redirect URIs).',
        )
    return vetted


class VettedMetadataFetcher:
    """DOT's CIMD fetcher (``CIMD_METADATA_FETCHER``): the fetcher ``MCPSITE_OAUTH_CIMD_FETCHER``
    names (DOT's SSRF-guarded `SafeMetadataFetcher` unless a test says otherwise), then the rules a
    registration is held to, so a document cannot get what registration refuses. DOT itself then
    requires the document's ``client_id`` to be its URL and a public client (no secret)."""

    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        metadata, max_age = import_string(mcpsite_settings()["OAUTH_CIMD_FETCHER"])().fetch(client_id)
        try:
            client_metadata_vet(metadata)
        except RegistrationRefused as refused:
            raise CIMDError(refused.description) from None  # DOT logs it; the client is unknown
        return metadata, max_age


@dataclass(frozen=True)
class _Vetted:
    """What `_vetted` made of a registration: the refusal, or the kind of client it registers."""

    refusal: JsonResponse | None = None
    application_type: str | None = None  # None: DOT refuses the metadata itself
    inferred: bool = False


def _vetted(request: HttpRequest) -> _Vetted:
    """Replace the request's metadata with what may be registered; the refusal if nothing may."""
    try:
        metadata = json_loads_bounded(request.body)
        vetted = registration_vet(metadata)
        request._body = json.dumps(vetted).encode()  # what DOT's view reads
    except JSONTooDeep as too_deep:
        return _Vetted(_refusal(RegistrationRefused(error="invalid_client_metadata", description=f"{too_deep}.")))
    except ValueError:
        return _Vetted()  # DOT answers a malformed body itself
    except RegistrationRefused as refused:
        return _Vetted(_refusal(refused))
    if not isinstance(vetted, dict):
        return _Vetted()
    return _Vetted(application_type=vetted.get("application_type"), inferred=metadata.get("application_type") is None)


def _application_type_record(response: HttpResponse, vetted: _Vetted) -> HttpResponse:
    """Keep the kind of client DOT just registered or updated (DOT's application has no field for
    it) and name it in the response, as RFC 7591 section 3.2.1 returns every registered value."""
    if response.status_code not in (200, 201) or vetted.application_type is None:
        return response
    body = json.loads(response.content)
    application = Application.objects.get(client_id=body["client_id"])
    ClientApplicationType.objects.update_or_create(
        application=application,
        defaults={"application_type": vetted.application_type, "inferred": vetted.inferred},
    )
    if vetted.inferred:
        kind = vetted.application_type
        logger.info("client %s registered as %s (inferred from its redirect URIs)", application.client_id, kind)
    response.content = json.dumps({**body, "application_type": vetted.application_type}).encode()
    return response


def _refusal(refused: RegistrationRefused) -> JsonResponse:
    response = JsonResponse({"error": refused.error, "error_description": refused.description}, status=400)
    # One line that says why; Django's own "Bad Request" line is then not written.
    log_response("client registration refused: %s", refused.description, response=response, logger=logger)
    return response


def client_creation_counted(*, way: str, address: str) -> bool:
    """Count one new client from `address` by `way` (``dcr`` or ``cimd``, each its own budget);
    False past ``MCPSITE_DCR_PER_HOUR`` this hour. An IPv6 client is counted by its /64
    (`mcpsite.net.address_bucket`): it may send from any of 2**64 addresses."""
    key = f"mcpsite:{way}:{address_bucket(address)}"
    cache.add(key, 0, timeout=3600)
    return bool(cache.incr(key) <= mcpsite_settings()["DCR_PER_HOUR"])


class RateLimitedCIMDPermission:
    """DOT's CIMD registration permission (``CIMD_REGISTRATION_PERMISSION_CLASSES``). A document
    seen for the first time creates a client as a registration does, so it is held to the same
    hourly limit per client address (DOT asks before it fetches anything); without it, CIMD would
    be a way around the registration limit."""

    def has_permission(self, request: Any, client_id: str) -> bool:
        address = request.headers.get("REMOTE_ADDR", "-")  # DOT passes Django's META as headers
        if client_creation_counted(way="cimd", address=address):
            return True
        logger.info("client metadata document refused: too many new clients from %s", address_bucket(address))
        return False


class RateLimitedRegistrationView(DynamicClientRegistrationView):
    """RFC 7591 registration, open to anyone, at most ``MCPSITE_DCR_PER_HOUR`` per client address
    (an IPv6 client's /64)."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not client_creation_counted(way="dcr", address=request.META.get("REMOTE_ADDR", "-")):
            response = JsonResponse(
                {"error": "slow_down", "error_description": "Too many client registrations; try again later."},
                status=429,
            )
            response["Retry-After"] = "3600"
            return response
        vetted = _vetted(request)
        if vetted.refusal is not None:
            return vetted.refusal
        with transaction.atomic():  # the client and its kind, together
            return _application_type_record(super().post(request, *args, **kwargs), vetted)


class VettedRegistrationManagementView(DynamicClientRegistrationManagementView):
    """RFC 7592 client configuration: an update is held to the rules of a registration, and a read
    names the client's kind as the registration did."""

    def get(self, request: HttpRequest, client_id: str, *args: Any, **kwargs: Any) -> HttpResponse:
        response = super().get(request, client_id, *args, **kwargs)
        kind = ClientApplicationType.objects.filter(application__client_id=client_id).first()
        if response.status_code == 200 and kind is not None:
            response.content = json.dumps({**json.loads(response.content), "application_type": kind.application_type})
        return response

    def put(self, request: HttpRequest, client_id: str, *args: Any, **kwargs: Any) -> HttpResponse:
        vetted = _vetted(request)
        if vetted.refusal is not None:
            return vetted.refusal
        with transaction.atomic():
            return _application_type_record(super().put(request, client_id, *args, **kwargs), vetted)
