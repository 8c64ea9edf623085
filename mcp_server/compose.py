"""How a tenant's MCP server is put together: `build_server`, read top to bottom.

Everything a tenant's server is made of is handed in here, in one place: the SDK's `MCPServer`
with the tenant's lifespan state and its sealed requestState, the one ordered list of layers
every message passes (`layers`: ours around the SDK's, checked against the SDK's own list), the
toolsets the tenant enables, the spec methods no toolset provides, the Streamable HTTP app of
both protocol generations with its challenge and metadata, the capped 2025-11-25 sessions and
the 2026-07-28 entry. Nothing registers itself: what a part needs, it is given here.

An unknown or disabled tenant answers from a stand-in built of the same parts (`stand_in`).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

from django.conf import settings
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend
from mcp.server.auth.routes import build_resource_metadata_url, create_protected_resource_routes
from mcp.server.auth.settings import AuthSettings
from mcp.server.context import ServerMiddleware
from mcp.server.mcpserver import MCPServer
from mcp.server.request_state import RequestStateSecurity
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import NotificationParams
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from approvals.step_store import ElicitationStepStore
from audit import layer as audit_layer
from audit.layer import AuditToolCalls
from mcp_server.compiled_calls import CompiledToolCalls
from mcp_server.endpoint import TenantEndpoint
from mcp_server.sessions import CappedSessionManager
from mcp_tasks.extension import TasksExtension
from mcpsite import logs, protocol_methods, toolcall_metrics
from mcpsite.auth import BearerChallenge, TenantTokenVerifier, challenge_sdk_route
from mcpsite.keyring import PayloadNotingCodec, RefuseReplayedState, remember_wire_state, ring
from mcpsite.roles import OnlyTheRolesTools
from mcpsite.scopes import MCP_SCOPE, scopes_supported, tool_needs
from mcpsite.tenancy import tenant_mcp_path, tenant_resource_url
from mcpsite.toolcall_metrics import CountToolCalls
from tools_app import sdk
from tools_app.discovery import toolsets
from tools_app.mcp_apps import HideAppsFromPlainClients, apps_extension
from tools_app.rounds import RoundMiddleware
from tools_app.tenant import TenantInfo
from tools_app.toolsets import Toolset, is_rendered_once

logger = logging.getLogger(__name__)


def build_server(info: TenantInfo) -> tuple[MCPServer[TenantInfo], ASGIApp]:
    """The tenant's `MCPServer` and its Streamable HTTP app (both protocol generations)."""
    site = settings.MCPSITE
    resource_url = tenant_resource_url(info.slug)
    served = _served_toolsets(info)

    # 1. Who may call: a private tenant's bearer tokens (a public tenant answers anyone).
    verifier: TenantTokenVerifier | None = None
    auth: AuthSettings | None = None
    if not info.public:
        verifier = TenantTokenVerifier(resource_url=resource_url, issuer=site["ISSUER"], tenant_id=info.id)
        auth = auth_settings(resource_url)

    # 2. The SDK's server: the tenant as its lifespan state, its requestState sealed under the key
    #    ring for its audience, the toolsets' tool records (built once per process, shared by every
    #    tenant serving the toolset), durable tasks when a toolset declares task tools, and MCP
    #    Apps when a toolset declares views.
    state = serving(info)

    @asynccontextmanager
    async def lifespan(_: MCPServer[TenantInfo]) -> AsyncIterator[TenantInfo]:
        yield state

    sdk.memoize_form_questions(fixed=is_rendered_once)  # the SDK's form questions rendered once per schema
    sdk.decode_state_directly()  # and the resolver's state coded without a model on the way
    tasks = TasksExtension.for_toolsets(served)
    apps = apps_extension(served)
    extensions = [e for e in (tasks, apps) if e]
    server: MCPServer[TenantInfo] = MCPServer(
        name=info.audience,
        title=info.name,
        version=info.version,  # 2026-07-28 clients expect serverInfo.version: the tenant's config revision
        lifespan=lifespan,
        request_state_security=RequestStateSecurity(
            codec=PayloadNotingCodec(ring), ttl=site["REQUEST_STATE_TTL"], audience=info.audience
        ),
        log_level=settings.LOG_LEVEL,
        extensions=extensions or None,
        tools=[tool for toolset in served for tool in toolset.tools()],
        token_verifier=verifier,
        auth=auth,
    )
    if tasks is not None:
        tasks.server = server

    # 3. The layers every message passes, in their one order (`layers`).
    rounds = RoundMiddleware()
    replay_guard = RefuseReplayedState(redis_url=settings.REDIS_URL)
    hide_apps = HideAppsFromPlainClients() if apps is not None else None  # only where there is something to hide
    audit = audit_layer.for_server(tenant_id=info.id, toolsets=served)
    server.middleware[:] = layers(
        server,
        count_calls=toolcall_metrics.for_server(server),
        audit=audit,
        rounds=rounds,
        replay_guard=replay_guard,
        hide_apps=hide_apps,
        # A public tenant's callers have no role; a refusal by role is the audit's to record.
        member_roles=None
        if info.public
        else OnlyTheRolesTools(views=_views_shown_by(served), on_refused=audit_layer.refused_by_role),
        compiled_calls=CompiledToolCalls.for_server(server, extensions) if site["COMPILED_CALLS"] else None,
    )

    # 4. What the tenant serves: the spec methods no toolset provides, then its toolsets. Last, once
    #    every handler is registered: they wait for the replay claim sent ahead of them.
    protocol_methods.install(server)
    for toolset in served:
        toolset.install(server, rounds)
    replay_guard.guard_handlers(sdk.lowlevel_server(server))

    # 5. The HTTP side: the SDK's Streamable HTTP app (both generations; a private tenant's
    #    challenge and RFC 9728 metadata listing every scope its tools need), its sessions capped per
    #    person, and the 2026-07-28 entry in front.
    path = tenant_mcp_path(info.slug)
    security = transport_security()
    sdk_app = server.streamable_http_app(
        streamable_http_path=path,
        transport_security=security,
        max_request_body_size=site["MAX_REQUEST_BODY"],
        session_idle_timeout=site["SESSION_IDLE_SECONDS"],
    )
    metadata_url = None
    if auth is not None:
        assert auth.resource_server_url is not None
        challenge_sdk_route(sdk_app, path)  # the same challenge as the 2026-07-28 entry's
        _replace_route(sdk_app, resource_metadata_routes(auth))
        metadata_url = build_resource_metadata_url(auth.resource_server_url)
    needs = tool_needs(info.toolsets) if auth is not None else {}  # both entries check a call's scopes
    refused_scope = audit.refused_scope if audit is not None else None  # and audit what they refuse
    manager = CappedSessionManager.adopt(
        server.session_manager,
        max_sessions_per_principal=site["MAX_SESSIONS_PER_PRINCIPAL"],
        tool_needs=needs,
        resource_metadata_url=metadata_url,
        on_refused_scope=refused_scope,
    )
    if not info.public:
        # Its members' roles decide what they list: a role changed tells their 2025-11-25
        # sessions to list again (`CappedSessionManager.tell_lists_changed`), as the handshake says.
        sdk.declare_lists_changed(server)
        lowlevel = sdk.lowlevel_server(server)
        assert lowlevel.get_notification_handler("notifications/initialized") is None, "not ours to replace"
        lowlevel.add_notification_handler("notifications/initialized", NotificationParams, manager.on_initialized)
    app = TenantEndpoint(
        sdk_app,
        manager,
        path=path,
        security=security,
        max_body=site["MAX_REQUEST_BODY"],
        auth=auth,
        verifier=verifier,
        tool_needs=needs,
        on_refused_scope=refused_scope,
    )
    return server, app


def layers(
    server: MCPServer[Any],
    *,
    count_calls: CountToolCalls | None,
    audit: AuditToolCalls | None,
    rounds: RoundMiddleware,
    replay_guard: RefuseReplayedState,
    hide_apps: HideAppsFromPlainClients | None,
    member_roles: OnlyTheRolesTools | None = None,
    compiled_calls: CompiledToolCalls | None = None,
) -> list[ServerMiddleware[Any]]:
    """Every layer a message passes, outermost first: ours around the SDK's, written once.

    The SDK's own (`sdk.built_in_layers`: its OpenTelemetry spans, then its requestState
    boundary) are read from the server it just built and checked, so an SDK that adds, drops or
    reorders one fails here, at the first build, instead of running in a different order.
    """
    spans, boundary = sdk.built_in_layers(server)
    return [
        # First: the call's log context (tenant, tool, principal hash), so every line of it says so.
        # When the audit is on, the audit layer is this layer and records every tools/call too,
        # with the request id the lines carry; outside the boundary, so a refused requestState is
        # recorded too.
        audit if audit is not None else logs.log_context_layer,
        # Then: times and counts every request (`/metrics`), when metrics are on.
        *([count_calls] if count_calls is not None else []),
        # Outside the boundary: notes the sealed requestState the codec will open (replay claims).
        remember_wire_state,
        # The SDK's span per message: only when spans are exported (a no-op that still costs).
        *([spans] if settings.MCPSITE["OTEL_SPANS"] else []),
        # The SDK's requestState boundary: the layers below read and write the plaintext state.
        boundary,
        # A private tenant's member's role: a tool outside it is unlisted and answered as unknown
        # (inside the boundary, so a retry's state is judged as an unknown tool's would be).
        *([member_roles] if member_roles is not None else []),
        # Our round: public names of questions and URL-mode steps, in one typed layer of the state;
        # ahead of the guard, so a retry it refuses keeps its state. A call that asks nothing
        # passes with one lookup.
        rounds,
        # A round's state is spent once (claimed in Redis, or in-process on the embedded default).
        replay_guard,
        # No MCP Apps views, ui metadata or app-only tools for a client without the extension.
        *([hide_apps] if hide_apps is not None else []),
        # Last, where the SDK's handler would be next: a plain 2026-07-28 call of a compiled tool
        # is answered here, anything else goes on to the SDK's (`mcp_server.compiled_calls`).
        *([compiled_calls] if compiled_calls is not None else []),
    ]


STEP_STORE = ElicitationStepStore()
"""Where every tenant's URL-mode steps are kept (approvals' rows), handed to the framework here."""


def serving(info: TenantInfo) -> TenantInfo:
    """The tenant as its server's lifespan state: with what the framework is handed (the store
    of its URL-mode steps). A task's run, outside any request, is handed the same."""
    return replace(info, url_steps=STEP_STORE)


def _views_shown_by(served: list[Toolset]) -> dict[str, frozenset[str]]:
    """Each MCP Apps view the tenant serves, by address: the tools that show it."""
    views: dict[str, frozenset[str]] = {}
    for toolset in served:
        for uri, tools in toolset.views_shown_by().items():
            views[uri] = views.get(uri, frozenset()) | tools
    return views


def _served_toolsets(info: TenantInfo) -> list[Toolset]:
    served = []
    for name in info.toolsets:
        toolset = toolsets.get(name)
        if toolset is None:
            logger.warning("tenant %s enables unknown toolset %r; skipped", info.slug, name)
            continue
        served.append(toolset)
    return served


def transport_security() -> TransportSecuritySettings:
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(settings.MCPSITE["MCP_ALLOWED_HOSTS"]),
        # An origin allowed for CORS is one staff chose to trust, so it passes this check too.
        allowed_origins=[*settings.MCPSITE["MCP_ALLOWED_ORIGINS"], *settings.MCPSITE["CORS_ALLOWED_ORIGINS"]],
    )


def auth_settings(resource_url: str) -> AuthSettings:
    # Validated from strings so a path-less issuer keeps its exact form (no trailing slash):
    # RFC 8414 compares issuers as strings.
    return AuthSettings.model_validate(
        {
            "issuer_url": settings.MCPSITE["ISSUER"],
            "resource_server_url": resource_url,
            "required_scopes": [MCP_SCOPE],
            "validate_token_resource": True,
        }
    )


def resource_metadata_routes(auth: AuthSettings) -> list[Route]:
    """The RFC 9728 document of a private tenant (or a stand-in): its ``scopes_supported`` names
    every scope a tool may need (`mcpsite.scopes.scopes_supported`), not only ``mcp``, which is all
    the SDK's own document lists (its ``required_scopes``)."""
    assert auth.resource_server_url is not None
    return create_protected_resource_routes(
        resource_url=auth.resource_server_url,
        authorization_servers=[auth.issuer_url],
        scopes_supported=scopes_supported(),
    )


def _replace_route(app: Starlette, routes: list[Route]) -> None:
    """Put `routes` in place of the SDK's app's routes at the same paths (the SDK builds its own
    metadata route inside ``streamable_http_app`` with no parameter for the scopes it lists)."""
    for new in routes:
        for index, route in enumerate(app.routes):
            if isinstance(route, Route) and route.path == new.path:
                app.routes[index] = new
                break
        else:
            raise RuntimeError(f"the SDK's app has no route {new.path}: its layout changed")


NO_TENANT = 0
"""The tenant id a stand-in verifies tokens for: no tenant row has it (ids start at 1), so no
token's user is a member of it."""


def build_stand_in(slug: str) -> ASGIApp:
    """What answers at ``/t/<slug>/mcp`` (and its RFC 9728 metadata) when no tenant is served
    there: a private tenant that has no members, built from the same parts as a tenant's app.

    So an unknown or disabled tenant answers exactly what a private tenant answers anyone but its
    members: the same challenge for every method (bare without a token, ``invalid_token`` with
    one, after the same token lookup), the same public metadata document. Whether a tenant
    exists is told only to its members (a public tenant answers anyone, by design). No MCP
    server is built: nothing gets past the challenge.
    """
    resource_url = tenant_resource_url(slug)
    auth = auth_settings(resource_url)
    assert auth.resource_server_url is not None
    verifier = TenantTokenVerifier(resource_url=resource_url, issuer=settings.MCPSITE["ISSUER"], tenant_id=NO_TENANT)

    async def unreachable(scope: Scope, receive: Receive, send: Send) -> None:
        raise AssertionError("a stand-in's challenge let a request through")

    return Starlette(
        routes=[
            Route(
                tenant_mcp_path(slug),
                endpoint=BearerChallenge(
                    unreachable, auth.required_scopes or [], build_resource_metadata_url(auth.resource_server_url)
                ),
            ),
            *resource_metadata_routes(auth),
        ],
        middleware=[
            Middleware(
                AuthenticationMiddleware,
                backend=BearerAuthBackend(verifier, resource_server_url=auth.resource_server_url),
            ),
            Middleware(AuthContextMiddleware),
        ],
    )


# Stand-ins are cheap to build but are asked for by any path a caller makes up: a bounded few are
# kept, so a flood of made-up slugs costs a build each and no memory.
stand_in = functools.lru_cache(maxsize=256)(build_stand_in)
