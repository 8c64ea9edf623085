"""Structured logs: who and what each line was about, and one id per request end to end.

- **The format** is `settings.LOGGING`'s: the plain line by default, one JSON object a line with
  ``MCPSITE_LOG_FORMAT=json`` (python-json-logger's formatter: ``time``, ``level``, ``logger``,
  ``message``, and the context below).
- **The context** of the request being served lives in one context variable: its request id,
  tenant, tool and principal. `LogContextFilter`, on the handler, copies it onto every record, so a
  line logged anywhere in a request (ours, the SDK's, Django's) says which request it belongs to.
- **The request id** comes from `request_ids`, the outermost ASGI layer: the ``X-Request-ID`` a
  trusted proxy sent (nginx's ``$request_id``), when it is well formed, else a new one; it is
  returned in the ``X-Request-ID`` response header of every response, so a caller can quote it.
  A header from anyone else is replaced: a client must not be able to make its lines look like
  another request's, or write what it likes into the logs.
- **Tenant, tool and principal** of an MCP call are set by `LogContextLayer`, the first of the
  tenant server's middlewares (registry; the audit layer, which is one, when the audit is on),
  from what the SDK has parsed and authenticated. The
  principal is a short keyed hash (`principal_hash`), never the subject itself: the logs can be
  searched for one person's calls without holding who they are. Argument values are never logged
  here.

Nothing here imports Django at module level: `settings.LOGGING` names the filter, and logging is
configured before the apps are loaded.
"""

from __future__ import annotations

import contextvars
import functools
import hashlib
import hmac
import logging
import random
import re
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, NamedTuple

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter as _JsonFormatter
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tools_app.principal import Principal

if TYPE_CHECKING:
    from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

REQUEST_ID_HEADER = b"x-request-id"
TRUSTED_PEER = "mcpsite.trusted_peer"
"""Scope key `mcp_server.serve` sets on a request whose connection comes from a trusted proxy
(``MCPSITE_TRUSTED_PROXIES``): only such a request's ``X-Request-ID`` is taken. Served any other way
(bare ``uvicorn``), no peer is trusted and every request gets an id of its own."""
REQUEST_ID = "mcpsite.request_id"
"""Scope key holding the request's id, read by `LogContextLayer`: a 2025-11-25 call runs in its
session's task, whose context variables are the session's, not this request's."""

# Long enough for a UUID, nginx's 32 hex digits or a trace header; nothing a log line could be
# bent by (spaces, quotes, control characters).
_WELL_FORMED = re.compile(rb"[A-Za-z0-9._:+=/-]{8,128}")


class LogContext(NamedTuple):
    request_id: str | None = None
    tenant: str | None = None
    tool: str | None = None
    principal: str | None = None


_NONE = LogContext()
_context: contextvars.ContextVar[LogContext] = contextvars.ContextVar("mcpsite_log_context", default=_NONE)


def current() -> LogContext:
    return _context.get()


class JsonFormatter(_JsonFormatter):
    """python-json-logger's formatter with our field names: ``time`` (UTC, ISO 8601), ``level``,
    ``logger``, ``message``, the log context, and whatever a record carries as ``extra``."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            "%(levelname)s %(name)s %(message)s",
            rename_fields={"levelname": "level", "name": "logger"},
            timestamp="time",
            # uvicorn's copy of its message with terminal colours: the message says it already.
            reserved_attrs=[*RESERVED_ATTRS, "color_message"],
            **kwargs,
        )


class LogContextFilter(logging.Filter):
    """Puts the request's context on every record a handler emits (set as a handler filter, so
    records of every logger pass through it). Keeps what a record already carries."""

    def filter(self, record: logging.LogRecord) -> bool:
        context = _context.get()
        for name, value in zip(LogContext._fields, context, strict=True):
            if not hasattr(record, name):
                setattr(record, name, value)
        return True


def request_id_of(scope: Scope) -> str:
    """The id this request goes by: the trusted proxy's, when well formed, else a new one."""
    if scope.get(TRUSTED_PEER):
        for name, value in scope["headers"]:
            if name == REQUEST_ID_HEADER:
                if _WELL_FORMED.fullmatch(value):
                    return value.decode("ascii")
                break
    # Not a secret (the response carries it, the logs and the audit hold it), only unique: 128 bits
    # of the process's own generator (reseeded in a forked child), without `secrets`' system call.
    return f"{random.getrandbits(128):032x}"


ASGICoroutine = Callable[[Scope, Receive, Send], Coroutine[Any, Any, None]]


def request_ids(app: ASGIApp, *, tenant_of: Callable[[str], str | None] | None = None) -> ASGICoroutine:
    """`app` with a request id per HTTP request: in the log context (with the tenant `tenant_of`
    reads from the path, for the lines logged before an MCP call is parsed) and in the
    ``X-Request-ID`` header of the response."""

    async def with_request_id(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        request_id = request_id_of(scope)
        scope[REQUEST_ID] = request_id
        header = (REQUEST_ID_HEADER, request_id.encode("ascii"))

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                # Appended: nothing behind this layer sets the header (tests/operate says so).
                message["headers"] = [*message.get("headers", ()), header]
            await send(message)

        tenant = tenant_of(scope["path"]) if tenant_of is not None else None
        token = _context.set(LogContext(request_id=request_id, tenant=tenant))
        try:
            await app(scope, receive, send_with_id)
        finally:
            _context.reset(token)

    return with_request_id


@functools.lru_cache(maxsize=1)
def _hash_key() -> bytes:
    from django.conf import settings

    # A key of its own, derived from the secret key every process of a deployment shares: the same
    # person hashes alike on every process, and nobody without the key can test a guess.
    return hashlib.sha256(b"mcpsite.logs.principal\x00" + settings.SECRET_KEY.encode()).digest()


@functools.lru_cache(maxsize=4096)
def principal_hash(principal: Principal) -> str | None:
    """A short keyed hash (HMAC-SHA256, 16 hex digits) of the OAuth client, issuer and subject; None
    for an anonymous caller. Remembered per principal: the hot path hashes each caller once."""
    if not any(principal):
        return None
    message = "\x00".join(principal).encode()
    return hmac.new(_hash_key(), message, hashlib.sha256).hexdigest()[:16]


def principal_of(ctx: ServerRequestContext[Any, Any]) -> Principal:
    """Who makes the call being served (also what the audit log records, `audit.layer`)."""
    # The request's authenticated user (Starlette's scope["user"], set by the SDK's bearer auth):
    # right for both generations, where the auth context variable may be another request's.
    user = ctx.request.scope.get("user") if ctx.request is not None else None
    token = getattr(user, "access_token", None)
    return Principal.of_token(token) if token is not None else Principal.current()


def call_context(ctx: ServerRequestContext[Any, Any], principal: Principal) -> LogContext:
    """The log context of the call `ctx`, made by `principal`. Its request id is read from the
    HTTP request the call came in."""
    request_id = getattr(ctx.request, "scope", {}).get(REQUEST_ID) or _context.get().request_id
    tool = None
    if ctx.method == "tools/call" and ctx.params:
        name = ctx.params.get("name")
        tool = name[:128] if isinstance(name, str) else None  # the caller's text: bounded
    return LogContext(
        request_id=request_id,
        tenant=getattr(ctx.lifespan_context, "slug", None),
        tool=tool,
        principal=principal_hash(principal),
    )


def enter(context: LogContext) -> contextvars.Token[LogContext]:
    """Make `context` the log context until `leave` is handed what this returns."""
    return _context.set(context)


def leave(entered: contextvars.Token[LogContext]) -> None:
    _context.reset(entered)


class LogContextLayer:
    """The tenant server's first middleware: the call's tenant, tool and principal (hashed) in
    the log context while it runs (`call_context`). When the audit is on, the audit layer stands
    first in its place and is one of these (`audit.layer.AuditToolCalls`)."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        entered = enter(call_context(ctx, principal_of(ctx)))
        try:
            return await call_next(ctx)
        finally:
            leave(entered)


log_context_layer = LogContextLayer()
