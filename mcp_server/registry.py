"""The tenant registry: a running `MCPServer` per enabled tenant in use, built from the database.

A tenant is built on its first request and let go when idle or pushed out by more recently used
ones (`TenantRegistry`); after that the hot path (`TenantRegistry.serve`) is a dict lookup. A
tenant created, changed or disabled in the admin is served, rebuilt or dropped without a restart:
the change is broadcast with the tenant's slug and the poll re-reads the loaded tenants' rows.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio
from anyio.abc import TaskGroup, TaskStatus
from channels.db import database_sync_to_async
from django.conf import settings
from mcp.server.mcpserver import MCPServer
from mcp.server.subscriptions import ResourcesListChanged, ToolsListChanged
from mcp_types import INTERNAL_ERROR
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_server.compose import build_server, serving
from mcp_server.exceptions import McpServerError
from mcp_server.sessions import CappedSessionManager
from tools_app import sdk
from tools_app.tenant import TenantInfo

if TYPE_CHECKING:
    from mcpsite.models import Tenant

logger = logging.getLogger(__name__)

# How long a replaced tenant server keeps running, so requests already inside it can finish.
REPLACED_SERVER_GRACE_SECONDS = 30.0
# How many slugs with no served tenant are remembered (until the next poll) without a query.
UNKNOWN_SLUGS_KEPT = 4096


def _info(tenant: Tenant) -> TenantInfo:
    return TenantInfo(
        id=tenant.pk,
        slug=tenant.slug,
        name=tenant.name,
        public=tenant.public,
        toolsets=tuple(tenant.toolsets or ()),
        version=tenant.updated_at.isoformat(),
        call_quota=tenant.call_quota,
        call_quota_per_person=tenant.call_quota_per_person,
    )


def load_tenant(slug: str) -> TenantInfo | None:
    """The served tenant with this slug (one indexed row), or None."""
    from mcpsite.models import Tenant

    tenant = Tenant.objects.served().filter(slug=slug).first()
    return _info(tenant) if tenant is not None else None


def load_tenants(slugs: Collection[str]) -> dict[str, TenantInfo]:
    """The served tenants among these slugs (the ones a process has loaded, never all)."""
    from mcpsite.models import Tenant

    return {t.slug: _info(t) for t in Tenant.objects.served().filter(slug__in=list(slugs))}


@dataclass(eq=False)
class TenantServer:
    info: TenantInfo
    server: MCPServer[TenantInfo]
    endpoint: ASGIApp
    stop: anyio.Event = field(default_factory=anyio.Event)
    in_flight: int = 0
    last_used: float = field(default_factory=time.monotonic)

    async def app(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The tenant's endpoint, counting the request as in flight (a held round, a standing
        stream) so the registry never lets this server go under it."""
        self.in_flight += 1
        try:
            await self.endpoint(scope, receive, send)
        finally:
            self.in_flight -= 1
            self.last_used = time.monotonic()

    @property
    def busy(self) -> bool:
        """A request in flight or a 2025-11-25 session open: letting it go would drop them."""
        sessions = self.server.session_manager
        return self.in_flight > 0 or (isinstance(sessions, CappedSessionManager) and sessions.open_sessions > 0)


class TenantUnavailable(McpServerError):
    """The tenant's row could not be read or its server not built (logged); the next request tries again."""


# Answered while a tenant cannot be built: the SDK's JSON-RPC error shape, and a retry soon.
UNAVAILABLE = sdk.error_response("This endpoint cannot be served right now; try again shortly.", 503, INTERNAL_ERROR)
UNAVAILABLE.headers["Retry-After"] = "1"


@dataclass(eq=False)
class _Loading:
    """One tenant being built: every request that arrives meanwhile waits for the same build."""

    done: anyio.Event = field(default_factory=anyio.Event)
    tenant: TenantServer | None = None
    failed: bool = False  # the row could not be read or the server not built (logged): answer 503
    changed: bool = False  # the tenant changed while its row was being read: read it again once built


class TenantRegistry:
    """The tenants this process serves, built on first use and let go when idle.

    - A tenant's server is built by the first request to its path (one row read and one build,
      however many requests arrive meanwhile: they wait for the same build) and then found by a
      dict lookup. Start-up builds nothing, so it costs the same with 0 or 100,000 tenants.
    - At most ``MCPSITE_TENANTS_MAX_LOADED`` stay loaded (least recently used let go first), and
      one unused for ``MCPSITE_TENANT_IDLE_SECONDS`` is let go. A tenant with a request in flight
      (a held round, a standing stream) or an open 2025-11-25 session is never let go: it stays
      past the cap until it is idle. Its next request builds it again.
    - A change to one tenant (broadcast with its slug, or found by the poll among the loaded
      ones) drops that tenant only; its next request builds the new version. The one it replaced
      keeps running for `REPLACED_SERVER_GRACE_SECONDS` for requests already inside it.
    - A slug with no served tenant is remembered as such until the next poll (a bounded few),
      so a caller inventing paths costs no query per request.
    """

    def __init__(self) -> None:
        self._servers: OrderedDict[str, TenantServer] = OrderedDict()  # least recently used first
        self._loading: dict[str, _Loading] = {}
        self._unknown: OrderedDict[str, None] = OrderedDict()
        self._task_group: TaskGroup | None = None

    def get(self, slug: str) -> TenantServer | None:
        """The tenant's server if this process has it loaded (no build, no LRU touch)."""
        return self._servers.get(slug)

    async def lists_changed(self, tenant_id: int, subjects: Collection[str] = ()) -> None:
        """Tell the clients of this tenant's server, if this process has it loaded, that its tools
        and resources lists changed: the role of the members named by `subjects` (our users' ids)
        did, and with it which tools and views they see.

        - 2026-07-28: the ``subscriptions/listen`` streams. The SDK's bus knows no principal, so
          every stream of the tenant that asked for these events hears it and lists again (the
          same lists, for everyone else).
        - 2025-11-25: those members' open sessions, and only theirs (the session manager knows
          whose each is, `mcp_server.sessions.CappedSessionManager.tell_lists_changed`)."""
        issuer = settings.MCPSITE["ISSUER"]
        people = {(issuer, subject) for subject in subjects}
        for tenant in [t for t in self._servers.values() if t.info.id == tenant_id]:
            bus = sdk.subscriptions(tenant.server)
            await bus.publish(ToolsListChanged())
            await bus.publish(ResourcesListChanged())
            sessions = tenant.server.session_manager
            if people and isinstance(sessions, CappedSessionManager):
                await sessions.tell_lists_changed(people)

    @property
    def slugs(self) -> list[str]:
        return sorted(self._servers)

    async def start(self, task_group: TaskGroup) -> None:
        self._task_group = task_group
        task_group.start_soon(self._let_go_of_idle)

    async def app_for(self, slug: str) -> ASGIApp | None:
        """What answers at the tenant's paths: its server's app (built now if need be), a 503
        while it cannot be built (the database unreachable), None when no tenant is served there."""
        try:
            tenant = await self.serve(slug)
        except TenantUnavailable:
            return UNAVAILABLE
        return tenant.app if tenant is not None else None

    async def serve(self, slug: str) -> TenantServer | None:
        """The tenant's server, built now if this process has not loaded it; None if no
        enabled tenant has this slug."""
        tenant = self._servers.get(slug)
        if tenant is not None:
            self._servers.move_to_end(slug)
            tenant.last_used = time.monotonic()
            return tenant
        if slug in self._unknown:
            return None
        loading = self._loading.get(slug)
        if loading is None:
            assert self._task_group is not None, "start() the registry inside the lifespan first"
            loading = self._loading[slug] = _Loading()
            # In the registry's task group, not the request's: a first caller who leaves does
            # not cancel the build the others wait for.
            self._task_group.start_soon(self._load, slug, loading)
        await loading.done.wait()
        if loading.failed:
            raise TenantUnavailable(slug)
        return loading.tenant

    async def _load(self, slug: str, loading: _Loading) -> None:
        try:
            info = await database_sync_to_async(load_tenant)(slug)
            if info is None:
                self._remember_unknown(slug)
                return
            server, endpoint = build_server(info)
            tenant = TenantServer(info=info, server=server, endpoint=endpoint)
            assert self._task_group is not None
            await self._task_group.start(self._run, tenant)
            self._servers[slug] = tenant
            logger.info("tenant %s built, served at /t/%s/mcp (toolsets: %s)", slug, slug, ", ".join(info.toolsets))
            loading.tenant = tenant
            self._over_the_cap()
            if loading.changed:
                self._task_group.start_soon(functools.partial(self.refresh, slug=slug))
        except Exception:
            logger.exception("tenant %s could not be built", slug)
            loading.failed = True
        finally:
            del self._loading[slug]
            loading.done.set()

    def _remember_unknown(self, slug: str) -> None:
        self._unknown[slug] = None
        while len(self._unknown) > UNKNOWN_SLUGS_KEPT:
            self._unknown.popitem(last=False)

    def _over_the_cap(self) -> None:
        cap = settings.MCPSITE["TENANTS_MAX_LOADED"]
        excess = len(self._servers) - cap
        if excess <= 0:
            return
        # Least recently used first; never the most recent, which a request is about to enter.
        for slug, tenant in list(self._servers.items())[:-1]:
            if excess <= 0:
                break
            if not tenant.busy:
                self._let_go(slug, f"over the cap of {cap} loaded tenants")
                excess -= 1

    def _let_go(self, slug: str, why: str) -> None:
        assert self._task_group is not None
        tenant = self._servers.pop(slug)
        logger.info("tenant %s let go (%s)", slug, why)
        self._task_group.start_soon(self._retire_when_idle, tenant)

    async def _let_go_of_idle(self) -> None:
        idle = settings.MCPSITE["TENANT_IDLE_SECONDS"]
        while True:
            await anyio.sleep(max(0.05, min(idle / 4, 5.0)))
            now = time.monotonic()
            for slug, tenant in list(self._servers.items()):
                if now - tenant.last_used >= idle and not tenant.busy:
                    self._let_go(slug, f"idle for {idle:g} s")
            self._over_the_cap()  # a busy tenant kept past the cap may have become idle

    async def refresh(self, *, slug: str | None = None, tenant_id: int | None = None) -> None:
        """Re-read the loaded tenants (or the one named, by slug or id) and drop those that
        changed or are no longer served; forget the unknown slugs (one may exist now)."""
        if slug is not None or tenant_id is not None:
            if slug is not None:
                self._unknown.pop(slug, None)
                if (loading := self._loading.get(slug)) is not None:
                    loading.changed = True
            names = {s for s, t in self._servers.items() if s == slug or t.info.id == tenant_id}
        else:
            self._unknown.clear()
            names = set(self._servers)
        if not names:
            return
        infos = await database_sync_to_async(load_tenants)(names)
        for name in names:
            current = self._servers.get(name)
            if current is None or infos.get(name) == current.info:
                continue
            self._servers.pop(name)
            assert self._task_group is not None
            if name in infos:
                logger.info("tenant %s changed; its next request builds the new version", name)
                self._task_group.start_soon(self._retire, current)
            else:
                logger.info("tenant %s is no longer served", name)
                self._task_group.start_soon(self._retire, current, 0.0)

    async def _run(self, tenant: TenantServer, *, task_status: TaskStatus[None]) -> None:
        async with tenant.server.session_manager.run():
            task_status.started()
            await tenant.stop.wait()

    async def _retire(self, tenant: TenantServer, grace: float = REPLACED_SERVER_GRACE_SECONDS) -> None:
        await anyio.sleep(grace)
        tenant.stop.set()

    async def _retire_when_idle(self, tenant: TenantServer) -> None:
        # A request may have been handed this server just before it was let go (it is entered a
        # moment later): wait a little, then until nothing runs in it.
        await anyio.sleep(0.5)
        while True:
            await anyio.sleep(0.5)
            if not tenant.busy:
                break
        tenant.stop.set()


registry = TenantRegistry()

_built: OrderedDict[str, tuple[TenantInfo, MCPServer[TenantInfo]]] = OrderedDict()
_built_lock = threading.Lock()


def tenant_server_for(slug: str) -> tuple[TenantInfo | None, MCPServer[TenantInfo] | None]:
    """The tenant's server at its current version, outside any request (a task's run): the one
    this process serves, else one built here (a Celery worker serves nothing) and kept, as the
    registry keeps its own, until the tenant changes or ``MCPSITE_TENANTS_MAX_LOADED`` more
    recently used ones push it out. Named to `mcp_tasks` by ``settings.TASKS["SERVER_FOR"]``."""
    info = load_tenant(slug)
    if info is None:
        return None, None
    loaded = registry.get(slug)
    if loaded is not None and loaded.info == info:
        return serving(info), loaded.server
    with _built_lock:
        built = _built.get(slug)
        if built is None or built[0] != info:
            built = (info, build_server(info)[0])
        _built[slug] = built
        _built.move_to_end(slug)
        while len(_built) > settings.MCPSITE["TENANTS_MAX_LOADED"]:
            _built.popitem(last=False)
    return serving(built[0]), built[1]
