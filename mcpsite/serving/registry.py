"""The tenant registry: one running `MCPServer` per enabled tenant, built from the database.

The hot path (`TenantRegistry.get`) is a dict lookup. The registry is rebuilt from the database
when a tenant changes (broadcast) and on the poll, so a tenant created, changed or disabled in
the admin is served, rebuilt or dropped without a restart.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import TaskGroup, TaskStatus
from channels.db import database_sync_to_async
from django.conf import settings
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend
from mcp.server.auth.routes import build_resource_metadata_url, create_protected_resource_routes
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.request_state import RequestStateSecurity
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from mcpsite import protocol_methods, sdk
from mcpsite.auth import BearerChallenge, TenantTokenVerifier, challenge_sdk_route
from mcpsite.keyring import PayloadNotingCodec, RefuseReplayedState, remember_wire_state, ring
from mcpsite.serving.endpoint import TenantEndpoint
from mcpsite.serving.sessions import CappedSessionManager
from mcpsite.tenancy import TenantInfo, tenant_mcp_path, tenant_resource_url

logger = logging.getLogger(__name__)

# How long a replaced tenant server keeps running, so requests already inside it can finish.
REPLACED_SERVER_GRACE_SECONDS = 30.0


def load_tenants() -> dict[str, TenantInfo]:
    from mcpsite.models import Tenant

    return {
        t.slug: TenantInfo(
            id=t.pk,
            slug=t.slug,
            name=t.name,
            public=t.public,
            toolsets=tuple(t.toolsets or ()),
            version=t.updated_at.isoformat(),
            call_quota=t.call_quota,
            call_quota_per_person=t.call_quota_per_person,
        )
        for t in Tenant.objects.served()
    }


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
            "required_scopes": ["mcp"],
            "validate_token_resource": True,
        }
    )


def build_server(info: TenantInfo) -> tuple[MCPServer[TenantInfo], ASGIApp]:
    """The tenant's `MCPServer` and its Streamable HTTP app (both protocol generations)."""
    from mcp_tasks.extension import TasksExtension
    from tools_app.discovery import toolsets

    mcpsite = settings.MCPSITE
    resource_url = tenant_resource_url(info.slug)

    @asynccontextmanager
    async def lifespan(_: MCPServer[TenantInfo]) -> AsyncIterator[TenantInfo]:
        yield info

    auth_kwargs: dict[str, Any] = {}
    if not info.public:
        auth_kwargs = {
            "token_verifier": TenantTokenVerifier(
                resource_url=resource_url, issuer=mcpsite["ISSUER"], tenant_id=info.id
            ),
            "auth": auth_settings(resource_url),
        }
    # Durable tasks, for a tenant whose toolsets declare task tools (`mcp_tasks`); none otherwise.
    tasks = TasksExtension.for_toolsets([toolsets[n] for n in info.toolsets if n in toolsets])
    replay_guard = RefuseReplayedState(redis_url=settings.REDIS_URL)
    server: MCPServer[TenantInfo] = MCPServer(
        name=info.audience,
        title=info.name,
        version=info.version,  # 2026-07-28 clients expect serverInfo.version: the tenant's config revision
        lifespan=lifespan,
        request_state_security=RequestStateSecurity(
            codec=PayloadNotingCodec(ring), ttl=mcpsite["REQUEST_STATE_TTL"], audience=info.audience
        ),
        log_level=settings.LOG_LEVEL,
        # Innermost: runs only once the SDK's request-state boundary has verified the state.
        middleware=[replay_guard],
        extensions=[tasks] if tasks is not None else None,
        **auth_kwargs,
    )
    if tasks is not None:
        tasks.server = server
    if not mcpsite["OTEL_SPANS"]:
        # The SDK ships an OpenTelemetry span per message, a no-op without an exporter that still
        # costs every request; its documented opt-out is dropping it from this list.
        sdk.drop_otel_spans(server)
    # Outermost, ahead of the SDK's built-ins (it sees the sealed token); `middleware=` only
    # appends inside them, so this one is inserted.
    server.middleware.insert(0, remember_wire_state)
    protocol_methods.install(server)
    for name in info.toolsets:
        toolset = toolsets.get(name)
        if toolset is None:
            logger.warning("tenant %s enables unknown toolset %r; skipped", info.slug, name)
            continue
        toolset.install(server)
    # Last, once every handler is registered: they wait for the replay claim sent ahead of them.
    replay_guard.guard_handlers(sdk.lowlevel_server(server))
    path = tenant_mcp_path(info.slug)
    security = transport_security()
    sdk_app = server.streamable_http_app(
        streamable_http_path=path,
        transport_security=security,
        max_request_body_size=mcpsite["MAX_REQUEST_BODY"],
        session_idle_timeout=mcpsite["SESSION_IDLE_SECONDS"],
    )
    if not info.public:
        challenge_sdk_route(sdk_app, path)  # the same challenge as the 2026-07-28 entry's
    manager = CappedSessionManager.adopt(
        server.session_manager, max_sessions_per_principal=mcpsite["MAX_SESSIONS_PER_PRINCIPAL"]
    )
    app = TenantEndpoint(
        sdk_app,
        manager,
        path=path,
        security=security,
        max_body=mcpsite["MAX_REQUEST_BODY"],
        auth=auth_kwargs.get("auth"),
        verifier=auth_kwargs.get("token_verifier"),
    )
    return server, app


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
            *create_protected_resource_routes(
                resource_url=auth.resource_server_url,
                authorization_servers=[auth.issuer_url],
                scopes_supported=auth.required_scopes,
            ),
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


@dataclass
class TenantServer:
    info: TenantInfo
    server: MCPServer[TenantInfo]
    app: ASGIApp
    stop: anyio.Event = field(default_factory=anyio.Event)


class TenantRegistry:
    def __init__(self) -> None:
        self._servers: dict[str, TenantServer] = {}
        self._task_group: TaskGroup | None = None
        self._lock = anyio.Lock()

    def get(self, slug: str) -> TenantServer | None:
        return self._servers.get(slug)

    @property
    def slugs(self) -> list[str]:
        return sorted(self._servers)

    async def start(self, task_group: TaskGroup) -> None:
        self._task_group = task_group
        await self.refresh()

    async def refresh(self) -> None:
        infos = await database_sync_to_async(load_tenants)()
        await self.apply(infos)

    async def apply(self, infos: dict[str, TenantInfo]) -> None:
        assert self._task_group is not None, "start() the registry inside the lifespan first"
        async with self._lock:
            for slug, info in infos.items():
                current = self._servers.get(slug)
                if current is not None and current.info == info:
                    continue
                try:
                    server, app = build_server(info)
                except Exception:
                    logger.exception("tenant %s could not be built; still serving its previous version", slug)
                    continue
                replacement = TenantServer(info=info, server=server, app=app)
                try:
                    await self._task_group.start(self._run, replacement)
                except Exception:
                    logger.exception("tenant %s could not be started; still serving its previous version", slug)
                    continue
                self._servers[slug] = replacement
                logger.info("tenant %s served at /t/%s/mcp (toolsets: %s)", slug, slug, ", ".join(info.toolsets))
                if current is not None:
                    self._task_group.start_soon(self._retire, current)
            for slug in set(self._servers) - set(infos):
                logger.info("tenant %s is no longer served", slug)
                self._task_group.start_soon(self._retire, self._servers.pop(slug), 0.0)

    async def _run(self, tenant: TenantServer, *, task_status: TaskStatus[None]) -> None:
        async with tenant.server.session_manager.run():
            task_status.started()
            await tenant.stop.wait()

    async def _retire(self, tenant: TenantServer, grace: float = REPLACED_SERVER_GRACE_SECONDS) -> None:
        await anyio.sleep(grace)
        tenant.stop.set()


registry = TenantRegistry()

_built: dict[str, tuple[TenantInfo, MCPServer[TenantInfo]]] = {}
_built_lock = threading.Lock()


def tenant_server_for(slug: str) -> tuple[TenantInfo | None, MCPServer[TenantInfo] | None]:
    """The tenant's server at its current version, outside any request (a task's run): the one
    this process serves, else one built here (a Celery worker serves nothing) and kept until the
    tenant changes. Named to `mcp_tasks` by ``settings.TASKS["SERVER_FOR"]``."""
    serving = registry.get(slug)
    info = load_tenants().get(slug)
    if info is None:
        return None, None
    if serving is not None and serving.info == info:
        return info, serving.server
    with _built_lock:
        built = _built.get(slug)
        if built is None or built[0] != info:
            built = _built[slug] = (info, build_server(info)[0])
    return built
