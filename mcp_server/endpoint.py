"""The tenant endpoint's entry: 2026-07-28 POSTs on a short path, everything else to the SDK's app.

The SDK's Streamable HTTP app serves both protocol generations through a Starlette router and,
for a 2026-07-28 request in SSE mode (which we need: a tool may report progress or log to a
client that asked for it), runs each handler as a sibling task in an anyio task group, with a
memory stream to carry notifications and a second task watching for the client leaving. That
machinery costs more than the call it serves: about 40 % of a plain `tools/call` (bench/run,
plain call, profiled with py-spy).

`TenantEndpoint` keeps every piece that decides what a request means and runs the SDK's own
parts for it: the same auth middlewares (bearer verification, the auth context, the scope check and
its ``WWW-Authenticate`` answer), then, once the body is read, the scopes the called tool needs
(`mcpsite.scopes`; 403 ``insufficient_scope``, as the 2025-11-25 sessions answer), the body limit,
transport security, the SDK's inbound ladder (`classify_inbound_request`, routing-header and
``Mcp-Param-*`` checks, the notification and malformed-body answers), its single-exchange dispatch
context and `serve_one`. Only the response orchestration differs: the handler runs in the request's
own task, a notification it emits is written straight to the response (committing
``text/event-stream`` the first time, as the SDK does), a request still running after the SDK's ping
interval commits SSE and pings, and the client leaving cancels the handler (one anyio cancel scope,
as the SDK's task group does). Handshake-era requests, GETs of other paths and the
protected-resource metadata go to the SDK's app unchanged.

The SDK's pieces used here live in its private module ``mcp.server._streamable_http_modern``
(there is no public seam for its ladder without the task group), reached through `tools_app.sdk`; the SDK is pinned in
``requirements.lock``, and `tests/mcp/test_modern_entry.py` plays every answer this entry gives
(success, streamed notifications, each refusal) through both this entry and the SDK's app and
requires them to be the same.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

import anyio
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend
from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.routes import build_resource_metadata_url
from mcp.server.auth.settings import AuthSettings
from mcp.server.connection import Connection
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http import check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import (
    RequestBodyLimitMiddleware,
    TransportSecurityMiddleware,
    TransportSecuritySettings,
)
from mcp.shared.inbound import (
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_PROTOCOL_VERSION_HEADER,
    InboundLadderRejection,
    classify_inbound_request,
    find_duplicated_routing_header,
)
from mcp.shared.jsonrpc_dispatcher import progress_token_from_params
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import HEADER_MISMATCH, PARSE_ERROR, ErrorData, JSONRPCError, JSONRPCRequest, JSONRPCResponse
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import AnyHttpUrl, ValidationError
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_server import quotas
from mcpsite.auth import BearerChallenge, granted_scopes, insufficient_scope
from mcpsite.roles import outside_role, tools_allowed
from mcpsite.scopes import scopes_missing
from tools_app import sdk
from tools_app.sdk import (
    _INVALID_BODY,
    _SSE_HEADERS,
    _SSE_PING_INTERVAL,
    _acknowledge_notification,
    _is_notification_shaped,
    _mcp_param_rejection,
    _SingleExchangeDispatchContext,
    _sse_event,
    _to_jsonrpc_response,
    _write,
    _write_rejection,
)

logger = logging.getLogger(__name__)

RefusalHook = Callable[[Scope, Any, "str | None"], None]
"""Told of a ``tools/call`` an entry refuses before the SDK (scope, decoded body, protocol version):
the audit log's `audit.layer.AuditToolCalls.refused_scope`."""

_VERSION_HEADER = MCP_PROTOCOL_VERSION_HEADER.lower().encode("ascii")
_PING = b": ping\r\n\r\n"
_WATCH_AFTER = 0.05
"""Seconds a request runs before anything watches its connection (see `_ResponseStream.watch`)."""


def _says_missing(rejection: InboundLadderRejection, headers: Mapping[str, str]) -> InboundLadderRejection:
    """The SDK words an absent routing header as "does not match"; a client author then hunts
    for a wrong value that is not there. Ours says the header is missing (same code, same 400):
    where our entry deliberately differs from the SDK's app (tests/mcp/test_modern_entry.py)."""
    if rejection.code != HEADER_MISMATCH:
        return rejection
    for header, what in (
        (MCP_PROTOCOL_VERSION_HEADER, "the request envelope's protocol version"),
        (MCP_METHOD_HEADER, "the request body's method"),
        (MCP_NAME_HEADER, "the request body's name"),
    ):
        if rejection.message.startswith(f"{header} header does not match") and header not in headers:
            return InboundLadderRejection(
                code=rejection.code, message=f"{header} header is missing (it repeats {what})"
            )
    return rejection


async def _write_answer(msg: JSONRPCResponse | JSONRPCError, scope: Scope, receive: Receive, send: Send) -> None:
    """The SDK's `_write`, without dumping a success's result a second time.

    The runner hands back the result already shaped for the wire (`model_dump(mode="json")` of the
    handler's model, or a copy of the dict a middleware returned), and `_write` dumps the
    `JSONRPCResponse` around it again in JSON mode, walking the whole result (~10 µs a call,
    `bench/inproc.py`). A JSON-mode dump leaves a dict's entries as they are (``exclude_none``
    drops model fields only), so `json.dumps` of the same three keys is the same bytes. Anything
    `json.dumps` refuses (a value that is not JSON: an object, NaN) goes to `_write`, which
    answers as it always did; errors always do.
    """
    if isinstance(msg, JSONRPCResponse):
        try:
            data = json.dumps(
                {"jsonrpc": msg.jsonrpc, "id": msg.id, "result": msg.result}, separators=(",", ":"), allow_nan=False
            )
        except (TypeError, ValueError):
            pass
        else:
            await Response(data, status_code=200, media_type="application/json")(scope, receive, send)
            return
    await _write(msg, scope, receive, send)


class _BearerAuthBackend(BearerAuthBackend):
    """The SDK's backend, remembering its answer on whether a token names this resource.

    The SDK parses the token's resource as a URL on every request to compare it with the
    server's; the answer depends only on that string, and our verifier reports one of two (the
    tenant's URL or None). The comparison itself stays the SDK's.
    """

    def __init__(self, token_verifier: TokenVerifier, *, resource_server_url: AnyHttpUrl | None) -> None:
        super().__init__(token_verifier, resource_server_url=resource_server_url)
        self._issued: dict[str | None, bool] = {}

    def _issued_for_this_resource(self, resource: str | None) -> bool:
        known = self._issued.get(resource)
        if known is None:
            if len(self._issued) > 64:  # bounded whatever a verifier reports
                self._issued.clear()
            known = self._issued[resource] = super()._issued_for_this_resource(resource)
        return known


class TenantEndpoint:
    """ASGI app for one tenant's MCP path (and its protected-resource metadata)."""

    def __init__(
        self,
        sdk_app: ASGIApp,
        manager: StreamableHTTPSessionManager,
        *,
        path: str,
        security: TransportSecuritySettings,
        max_body: int,
        auth: AuthSettings | None,
        verifier: TokenVerifier | None,
        tool_needs: Mapping[str, tuple[str, ...]] | None = None,
        on_refused_scope: RefusalHook | None = None,
    ) -> None:
        self.sdk_app = sdk_app
        self.on_refused_scope = on_refused_scope
        self.manager = manager
        self.path = path
        self.security = TransportSecurityMiddleware(security)
        self._param_headers: dict[str, tuple[Mapping[str, Any], bool]] = {}
        # The same chain, in the same order, as the SDK's app puts around its handler.
        modern: ASGIApp = RequestBodyLimitMiddleware(self._serve, max_body)
        # The tools that need scopes beyond `mcp` (`mcpsite.scopes.tool_needs`): checked per call.
        self.tool_needs = tool_needs or {}
        self.metadata_url: AnyHttpUrl | None = None
        if verifier is not None:
            assert auth is not None
            metadata_url = build_resource_metadata_url(auth.resource_server_url) if auth.resource_server_url else None
            self.metadata_url = metadata_url
            modern = BearerChallenge(modern, auth.required_scopes or [], metadata_url)
            modern = AuthContextMiddleware(modern)
            resource = auth.resource_server_url if auth.validate_token_resource else None
            modern = AuthenticationMiddleware(
                modern, backend=_BearerAuthBackend(verifier, resource_server_url=resource)
            )
        self.modern = modern

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"] == self.path and scope["method"] == "POST":
            # The SDK's own routing rule: a version header that is not a handshake version is the
            # stateless era's (an unknown value included: the ladder answers it).
            version = next((v for k, v in scope["headers"] if k == _VERSION_HEADER), None)
            if version is not None and version.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS:
                await self.modern(scope, receive, send)
                return
        await self.sdk_app(scope, receive, send)

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        """One 2026-07-28 POST: the SDK's inbound ladder, then its runner in this task."""
        if not await quotas.admit(scope, receive, send, tenant=sdk.lifespan_state(self.manager)):
            return
        request = Request(scope, receive)
        err = await self.security.validate_request(request, is_post=True)
        if err is not None:
            await err(scope, receive, send)
            return
        # Any call may turn into a stream here, so both are required, as in the SDK's SSE mode
        # (which then needs no separate check for `subscriptions/listen`).
        has_json, has_sse = check_accept_headers(request)
        if not has_json or not has_sse:
            await Response(status_code=406)(scope, receive, send)
            return

        try:
            body = await request.body()
        except ClientDisconnect:
            # The client left before its body ended: nobody is there to answer, and it is not a
            # server fault (uncaught, uvicorn logs "Exception in ASGI application" with a traceback).
            client = scope.get("client")
            logger.info("client %s left mid-body on POST %s; nothing answered", client[0] if client else "?", self.path)
            return
        try:
            decoded = json.loads(body)
        except (ValueError, RecursionError):
            rej = JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=PARSE_ERROR, message="Parse error"))
            await _write(rej, scope, receive, send)
            return
        if _is_notification_shaped(decoded):
            await _acknowledge_notification(decoded, request, scope, receive, send)
            return
        try:
            req = JSONRPCRequest.model_validate(decoded)
        except ValidationError:
            await _write(_INVALID_BODY, scope, receive, send)
            return
        duplicated = find_duplicated_routing_header(request.headers.items())
        if duplicated is not None:
            rejection = InboundLadderRejection(
                code=HEADER_MISMATCH, message=f"{duplicated} header appears more than once"
            )
            await _write_rejection(rejection, req.id, scope, receive, send)
            return
        verdict = classify_inbound_request(decoded, headers=dict(request.headers))
        if isinstance(verdict, InboundLadderRejection):
            await _write_rejection(_says_missing(verdict, request.headers), req.id, scope, receive, send)
            return
        # The caller's role: a tool outside it is unknown to every check below.
        allowed = tools_allowed(scope) if req.method == "tools/call" else None
        if self.tool_needs and req.method == "tools/call":
            granted = granted_scopes(scope)
            needed = scopes_missing(self.tool_needs, decoded, granted, allowed)
            if needed is not None:
                if self.on_refused_scope is not None:
                    self.on_refused_scope(scope, decoded, verdict.protocol_version)
                await insufficient_scope(send, needed=needed, granted=granted, resource_metadata_url=self.metadata_url)
                return
        app: Server[Any] = self.manager.app
        lifespan_state = sdk.lifespan_state(self.manager)  # what the tenant's lifespan yielded (its TenantInfo)
        if self._declares_param_headers(app, req) and not outside_role(allowed, (req.params or {}).get("name")):
            param_rejection = await _mcp_param_rejection(app, request, req, verdict, lifespan_state)
            if param_rejection is not None:
                await _write_rejection(param_rejection, req.id, scope, receive, send)
                return

        connection = Connection.from_envelope(
            verdict.protocol_version, verdict.client_info, verdict.client_capabilities
        )
        stream = _ResponseStream(send, receive)
        dctx = _SingleExchangeDispatchContext(
            transport=TransportContext(kind="streamable-http", can_send_request=False, headers=request.headers),
            request_id=req.id,
            message_metadata=ServerMessageMetadata(request_context=request),
            progress_token=progress_token_from_params(req.params),
            sink=stream,  # type: ignore[arg-type]  # the one method the context calls: `send(bytes)`
        )
        handling = sdk.serve_one(
            app, dctx, req.method, req.params, connection=connection, lifespan_state=lifespan_state
        )
        with anyio.CancelScope() as cancel_scope:
            stream.watch(cancel_scope)
            try:
                msg = await _to_jsonrpc_response(req.id, handling)
            finally:
                stream.stop_watching()
        if cancel_scope.cancelled_caught:
            logger.debug("client left before %s answered; handler cancelled", req.method)
            return
        if stream.started:
            await stream.emit(_sse_event(msg), more_body=False)
        else:
            await _write_answer(msg, scope, receive, send)

    def _declares_param_headers(self, app: Server[Any], req: JSONRPCRequest) -> bool:
        """Whether the SDK's ``Mcp-Param-*`` check has anything to compare for this request.

        The check walks the called tool's input schema on every call (a tenth of a plain call,
        bench/run with py-spy), but it only compares the properties the schema marks with
        ``x-mcp-header``; a schema without that key can fail nothing. Remembered per tool schema.
        Anything unusual (no name, no lookup, an unknown tool) is left to the SDK's check.
        """
        if req.method != "tools/call" or app.get_tool_input_schema is None:
            return True
        name = (req.params or {}).get("name")
        if not isinstance(name, str):
            return True
        try:
            schema = app.get_tool_input_schema(name)
        except Exception:
            return True  # the SDK's check logs it and fails open
        if schema is None:
            return True
        known = self._param_headers.get(name)
        if known is None or known[0] is not schema:
            known = self._param_headers[name] = (schema, "x-mcp-header" in json.dumps(schema))
        return known[1]


class _ResponseStream:
    """The response of one request: JSON unless something is emitted before the answer, then SSE.

    Stands in for the SDK's memory-stream sink (`_SingleExchangeDispatchContext.notify` calls
    ``await sink.send(frame)``), writing each frame to the client as it comes.
    """

    def __init__(self, send: Send, receive: Receive) -> None:
        self._send = send
        self._receive = receive
        self._lock = asyncio.Lock()
        self._timer: asyncio.TimerHandle | None = None
        self._watcher: asyncio.Future[None] | None = None
        self.started = False

    async def send(self, frame: bytes) -> None:
        await self.emit(frame)

    async def emit(self, frame: bytes, *, more_body: bool = True) -> None:
        async with self._lock:
            if not self.started:
                self.started = True
                await self._send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
            await self._send({"type": "http.response.body", "body": frame, "more_body": more_body})

    def watch(self, cancel_scope: anyio.CancelScope) -> None:
        """From `_WATCH_AFTER` on, cancel the handler when the client leaves and keep a quiet
        response alive behind proxies.

        Most calls answer well before then and never pay for a watching task; a disconnect in the
        meantime is seen as soon as the watch starts. A request still running after the SDK's
        ping interval commits ``text/event-stream`` and pings every interval, as the SDK does, so
        a proxy's idle-read timeout cannot close it.
        """
        self._timer = asyncio.get_running_loop().call_later(_WATCH_AFTER, self._start_watching, cancel_scope)

    def stop_watching(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._watcher is not None:
            self._watcher.cancel()

    def _start_watching(self, cancel_scope: anyio.CancelScope) -> None:
        self._watcher = asyncio.ensure_future(self._watch(cancel_scope))

    async def _watch(self, cancel_scope: anyio.CancelScope) -> None:
        wait = _SSE_PING_INTERVAL - _WATCH_AFTER  # the first ping: one interval after the request began
        while True:
            try:
                async with asyncio.timeout(wait):
                    message = await self._receive()
            except TimeoutError:
                await self.emit(_PING)
                wait = _SSE_PING_INTERVAL
                continue
            if message["type"] == "http.disconnect":
                cancel_scope.cancel()
                return
