"""2025-11-25 sessions: a cap per person, so one member cannot lock the others out.

The SDK's session manager caps the sessions one tenant server holds (``max_sessions``, 10,000),
but that budget is shared by everyone the tenant serves: one member opening sessions in a loop
fills it, and from then on every ``initialize`` of every member answers 503. `CappedSessionManager`
adds a second budget per person, in this process (a session lives in the process that opened
it; the proxy keeps it there), decided under the SDK's own session-creation lock so concurrent
openings cannot overshoot it:

- the person is the token's user (issuer, subject), whichever of their OAuth clients opens the
  session: a fresh client registration is not a fresh budget (the SDK still binds each session
  to the full (client id, issuer, subject)); on a public tenant there is no token, so anonymous
  sessions are counted per client address (uvicorn's, which honours ``X-Forwarded-For`` from a
  trusted proxy; an IPv6 client by its /64, `mcpsite.net.address_bucket`);
- a session counts from its admission until the SDK discards it (its opening request failed,
  the client DELETEd it, it idled out after ``MCPSITE_SESSION_IDLE_SECONDS``, or it crashed);
- beyond the cap the opening request gets 429 with the SDK's own error shape (a JSON-RPC error
  without an id, as for its 503 at ``max_sessions``) and a message naming the cap and how to
  free a slot.

A POST's body is read whole before the SDK sees it (the SDK's body limit has already buffered it,
so this costs no extra copy): a client that leaves mid-body is answered nothing and logged on one
INFO line, as on the 2026-07-28 entry. The SDK's transport would log the `ClientDisconnect` as an
ERROR with a traceback, and for an ``initialize`` open a session only to terminate it.

The whole body also names the tool a ``tools/call`` calls before the SDK dispatches it: a call
whose token lacks a scope the tool needs (`mcpsite.scopes`) is answered 403 ``insufficient_scope``
here, as on the 2026-07-28 entry.

A private tenant's handshake declares ``listChanged`` for tools and resources
(`tools_app.sdk.declare_lists_changed`): when staff change a member's role, what they may list
changes, and `tell_lists_changed` sends each of that member's sessions here
``notifications/tools/list_changed`` and ``notifications/resources/list_changed`` on its standalone
stream. A session is reachable from its ``notifications/initialized`` (`on_initialized`) until the
SDK discards it.

Only requests that open a session reach the cap code; requests of an open session pay one
``try``, and 2026-07-28 requests never reach the session manager (`mcp_server.endpoint`).

The SDK builds its manager inside ``streamable_http_app`` with no factory to pass, and the app's
route and ``server.session_manager`` both hold that instance, so it is adopted in place
(`CappedSessionManager.adopt`). The two methods overridden, ``_admit_session`` and
``_discard_session``, are the SDK's single points where a session starts and stops being
tracked; the SDK is pinned in ``requirements.lock`` and ``tests/mcp/test_sessions_per_principal.py``
plays them through a real server.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Mapping
from contextvars import ContextVar
from typing import Any, cast

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types import INVALID_REQUEST, NotificationParams
from mcp_types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from mcp_server import quotas
from mcp_server.endpoint import RefusalHook
from mcp_server.exceptions import McpServerError
from mcpsite import broadcast
from mcpsite.auth import granted_scopes, insufficient_scope
from mcpsite.net import address_bucket
from mcpsite.roles import tools_allowed
from mcpsite.scopes import scopes_missing
from tools_app import sdk

logger = logging.getLogger(__name__)

Person = tuple[str | None, str | None] | str
"""Who a session is counted against: the token's user (issuer, subject), or a client address bucket."""

_client_address: ContextVar[str] = ContextVar("mcpsite_session_client_address", default="?")


class SessionCapReached(McpServerError):
    """A person already holds their cap of open sessions; nothing was admitted."""

    def __init__(self, *, person: Person, cap: int, idle_seconds: float | None) -> None:
        self.person = person
        self.cap = cap
        self.idle_seconds = idle_seconds
        who = "this client address" if isinstance(person, str) else "this user (all their OAuth clients)"
        idle = f" or let it idle out ({idle_seconds:g} s)" if idle_seconds else ""
        super().__init__(
            f"Too many open sessions for {who}: at most {cap} at a time on this server "
            f"(MCPSITE_MAX_SESSIONS_PER_PRINCIPAL). End one you no longer use (DELETE it with its "
            f"Mcp-Session-Id){idle}, then initialize again."
        )


class CappedSessionManager(StreamableHTTPSessionManager):
    """The SDK's session manager with a cap of open sessions per person."""

    max_sessions_per_principal: int
    tool_needs: Mapping[str, tuple[str, ...]]
    resource_metadata_url: Any
    on_refused_scope: RefusalHook | None
    _open: dict[Person, int]
    _person_of: dict[str, Person]
    _reach: dict[str, ServerSession]

    @classmethod
    def adopt(
        cls,
        manager: StreamableHTTPSessionManager,
        *,
        max_sessions_per_principal: int,
        tool_needs: Mapping[str, tuple[str, ...]] | None = None,
        resource_metadata_url: Any = None,
        on_refused_scope: RefusalHook | None = None,
    ) -> CappedSessionManager:
        """`manager` as a capped one; with `tool_needs` (`mcpsite.scopes.tool_needs`), a
        ``tools/call`` whose tool needs a scope the token lacks is answered 403 before the SDK sees it."""
        if max_sessions_per_principal <= 0:
            raise ValueError("max_sessions_per_principal must be a positive number of sessions")
        manager.__class__ = cls
        capped = cast(CappedSessionManager, manager)
        capped.max_sessions_per_principal = max_sessions_per_principal
        capped.tool_needs = tool_needs or {}
        capped.resource_metadata_url = resource_metadata_url
        capped.on_refused_scope = on_refused_scope
        capped._open = {}
        capped._person_of = {}
        capped._reach = {}
        return capped

    @property
    def open_sessions(self) -> int:
        """Sessions admitted and not yet discarded (the registry keeps a tenant with any loaded)."""
        return len(self._person_of)

    async def on_initialized(self, ctx: ServerRequestContext[Any, Any], params: NotificationParams) -> None:
        """The SDK's handler for ``notifications/initialized``: from now on the session can be told
        its lists changed (its `ServerSession` sends an unrelated notification on the session's
        standalone stream, whichever request it came with)."""
        session_id = ctx.request.headers.get(MCP_SESSION_ID_HEADER) if isinstance(ctx.request, Request) else None
        if session_id is not None and session_id in self._person_of:  # admitted here, not yet discarded
            self._reach[session_id] = ctx.session

    async def tell_lists_changed(self, people: Collection[Person]) -> int:
        """Tell each open session of `people` that its tools and resources lists changed; the number
        of sessions told. All at once, each within `broadcast.notify_within`'s bound: a client not
        reading its stream holds up neither the broadcast listener this runs in nor the others."""
        told: list[str] = []

        async def tell(session_id: str, session: ServerSession) -> None:
            async def both() -> None:
                await session.send_tool_list_changed()
                await session.send_resource_list_changed()

            if await broadcast.notify_within(both, f"lists changed for session {session_id[:8]}"):
                told.append(session_id)

        async with anyio.create_task_group() as group:
            for session_id, person in list(self._person_of.items()):
                session = self._reach.get(session_id)
                if session is not None and person in people:
                    group.start_soon(tell, session_id, session)
        return len(told)

    async def _handle_stateful_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Authenticated by now (the SDK's middlewares run outside this): the call quotas know the person.
        if not await quotas.admit(scope, receive, send, tenant=sdk.lifespan_state(self)):
            return
        client = scope.get("client")
        if scope["method"] == "POST":
            whole = await _whole_body(receive)
            if whole is None:
                logger.info(
                    "client %s left mid-body on POST %s; nothing answered", client[0] if client else "?", scope["path"]
                )
                return
            receive, body = whole
            if self.tool_needs:
                # The body names the tool before the SDK dispatches it: refuse a call the token's
                # scopes do not cover, as the 2026-07-28 entry does.
                granted = granted_scopes(scope)
                decoded = _decoded(body)
                needed = scopes_missing(self.tool_needs, decoded, granted, tools_allowed(scope))
                if needed is not None:
                    if self.on_refused_scope is not None:
                        self.on_refused_scope(scope, decoded, Headers(scope=scope).get(MCP_PROTOCOL_VERSION_HEADER))
                    await insufficient_scope(
                        send, needed=needed, granted=granted, resource_metadata_url=self.resource_metadata_url
                    )
                    return
            headers = Headers(scope=scope)
            if not (
                MCP_SESSION_ID_HEADER in headers or MCP_PROTOCOL_VERSION_HEADER in headers or _opens_a_session(body)
            ):
                # The SDK would open a session for it only to answer "Missing session ID", which
                # sends a 2026-07-28 client that forgot its version header looking for sessions.
                await sdk.error_response(_NO_VERSION_NOR_SESSION, 400, INVALID_REQUEST)(scope, receive, send)
                return
        # Who an anonymous admission counts against.
        token = _client_address.set(address_bucket(client[0]) if client else "?")
        try:
            await super()._handle_stateful_request(scope, receive, send)
        except SessionCapReached as refused:
            logger.warning(
                "Refusing a new session for %s: %d already open (MCPSITE_MAX_SESSIONS_PER_PRINCIPAL)",
                refused.person,
                refused.cap,
            )
            await sdk.error_response(str(refused), 429, INVALID_REQUEST)(scope, receive, send)
        finally:
            _client_address.reset(token)

    def _admit_session(self, requestor: AuthorizationContext | None) -> StreamableHTTPServerTransport | None:
        # Runs under the SDK's session-creation lock: the count and the admission are one step.
        # The person, not the client: the client id is left out of the count on purpose.
        person: Person = (requestor["issuer"], requestor["subject"]) if requestor is not None else _client_address.get()
        if self._open.get(person, 0) >= self.max_sessions_per_principal:
            raise SessionCapReached(
                person=person, cap=self.max_sessions_per_principal, idle_seconds=self.session_idle_timeout
            )
        transport = super()._admit_session(requestor)
        if transport is not None and transport.mcp_session_id is not None:
            self._person_of[transport.mcp_session_id] = person
            self._open[person] = self._open.get(person, 0) + 1
        return transport

    async def _discard_session(self, session_id: str, transport: StreamableHTTPServerTransport) -> None:
        # The SDK may discard one session twice (the DELETE, then its server task ending); the
        # pop makes the release happen once, before any await, as the SDK forgets it.
        person = self._person_of.pop(session_id, None)
        self._reach.pop(session_id, None)
        if person is not None:
            left = self._open[person] - 1
            if left:
                self._open[person] = left
            else:
                del self._open[person]
        await super()._discard_session(session_id, transport)


_NO_VERSION_NOR_SESSION = (
    f"Bad Request: the MCP-Protocol-Version header is missing. A {LATEST_MODERN_VERSION} request sends "
    f"`MCP-Protocol-Version: {LATEST_MODERN_VERSION}` (and Mcp-Method, with Mcp-Name for a tools/call); "
    f"a {LATEST_HANDSHAKE_VERSION} client sends `initialize` first, then its Mcp-Session-Id on every request."
)


def _decoded(body: bytes) -> Any:
    """The body as JSON, or None when it does not parse (the SDK answers that)."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def _opens_a_session(body: bytes) -> bool:
    """Whether the SDK would take this body as a session's opening: ``initialize``, alone or in a batch.
    Anything else without a session (a body that does not parse included) is answered by us."""
    decoded = _decoded(body)
    messages = decoded if isinstance(decoded, list) else [decoded]
    return any(isinstance(m, dict) and m.get("method") == "initialize" for m in messages)


async def _whole_body(receive: Receive) -> tuple[Receive, bytes] | None:
    """``receive`` replaying the request's body read to its end, and that body; None when the client
    left first.

    Bounded: the SDK's `RequestBodyLimitMiddleware` (outside us) has already refused a body over
    ``MCPSITE_MAX_REQUEST_BODY``, and hands what it read on in one message.
    """
    read: list[Message] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        read.append(message)
        if message["type"] != "http.request" or not message.get("more_body", False):
            break

    body = b"".join(m.get("body", b"") for m in read if m["type"] == "http.request")

    async def replay() -> Message:
        return read.pop(0) if read else await receive()

    return replay, body
