"""CORS for browser-based MCP clients: the MCP endpoints (ASGI) and the OAuth endpoints (Django).

One policy, one setting (``MCPSITE_CORS_ALLOWED_ORIGINS``). A preflight only says which origins,
methods and headers may be used; it authenticates nothing, so an actual cross-origin request
still needs a member's bearer token. Credentials (cookies) are never allowed cross-origin: MCP
clients send their token in ``Authorization``, and without ``Access-Control-Allow-Credentials``
a browser neither sends our cookies cross-origin nor shows such a response to the page.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_vary_headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Request headers an MCP client sends (both generations, the 2026-07-28 routing headers, OAuth).
ALLOWED_HEADERS = (
    "Authorization",
    "Content-Type",
    "Accept",
    "Last-Event-ID",
    "Mcp-Session-Id",
    "Mcp-Protocol-Version",
    "Mcp-Method",
    "Mcp-Name",
)
# Response headers a page may read: the session id, the negotiated version and the 401 challenge
# (which names the resource metadata the client must fetch to sign in).
EXPOSED_HEADERS = ("Mcp-Session-Id", "Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name", "WWW-Authenticate")
MCP_METHODS = ("GET", "POST", "DELETE")
MAX_AGE = 600  # seconds a browser may cache a preflight answer

# The authorization server's endpoints a browser client calls itself (authorize is a navigation).
OAUTH_PATHS: dict[str, tuple[str, ...]] = {
    "/.well-known/oauth-authorization-server": ("GET",),
    "/o/register/": ("POST",),
    "/o/token/": ("POST",),
    "/o/revoke_token/": ("POST",),
}


def _allowed() -> tuple[frozenset[str], tuple[str, ...]]:
    """(exact origins, ``scheme://host:`` prefixes of ``scheme://host:*`` patterns). Read on each
    call: only requests carrying an ``Origin`` get here, and the lists are a few entries long."""
    origins = [*settings.MCPSITE["CORS_ALLOWED_ORIGINS"], settings.SITE_ROOT]
    exact = frozenset(o.rstrip("/") for o in origins if not o.endswith(":*"))
    ports = tuple(o[:-1] for o in origins if o.endswith(":*"))  # keep the ":" so a port must follow
    return exact, ports


def origin_allowed(origin: str) -> bool:
    exact, ports = _allowed()
    if origin in exact:
        return True
    return any(origin.startswith(prefix) and origin[len(prefix) :].isdigit() for prefix in ports)


def preflight_headers(origin: str, methods: Iterable[str]) -> list[tuple[str, str]]:
    return [
        ("Access-Control-Allow-Origin", origin),
        ("Access-Control-Allow-Methods", ", ".join(methods)),
        ("Access-Control-Allow-Headers", ", ".join(ALLOWED_HEADERS)),
        ("Access-Control-Max-Age", str(MAX_AGE)),
        ("Vary", "Origin"),
    ]


def response_headers(origin: str) -> list[tuple[str, str]]:
    return [
        ("Access-Control-Allow-Origin", origin),
        ("Access-Control-Expose-Headers", ", ".join(EXPOSED_HEADERS)),
        ("Vary", "Origin"),
    ]


def preflight_allowed(origin: str, method: str, methods: Iterable[str]) -> bool:
    return origin_allowed(origin) and method.upper() in methods


# --- ASGI: the MCP endpoints -------------------------------------------------------------------


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


async def _send_preflight(send: Send, status: int, headers: list[tuple[str, str]]) -> None:
    raw = [(k.lower().encode(), v.encode("latin-1")) for k, v in headers] + [(b"content-length", b"0")]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": b""})


async def mcp_preflight(scope: Scope, send: Send) -> bool:
    """Answer a CORS preflight for an MCP path; False (nothing sent) when the request is not one.

    Allowed: 204 with the CORS headers. Refused (origin or method): 403 without them, so the
    browser blocks the request. Either way the tenant app, and so authentication, is not reached.
    """
    if scope["method"] != "OPTIONS":
        return False
    origin = _header(scope, b"origin")
    method = _header(scope, b"access-control-request-method")
    if origin is None or method is None:
        return False
    if preflight_allowed(origin, method, MCP_METHODS):
        await _send_preflight(send, 204, preflight_headers(origin, MCP_METHODS))
    else:
        await _send_preflight(send, 403, [("Vary", "Origin")])
    return True


def with_cors(app: ASGIApp, scope: Scope, origin: str) -> Callable[[Receive, Send], Awaitable[None]]:
    """``app`` answering an actual cross-origin request: the CORS headers on its response, when
    ``origin`` is allowed (otherwise the response is unchanged and the browser hides it)."""

    async def call(receive: Receive, send: Send) -> None:
        if not origin_allowed(origin):
            await app(scope, receive, send)
            return
        extra = [(k.lower().encode(), v.encode("latin-1")) for k, v in response_headers(origin)]

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await app(scope, receive, send_with_cors)

    return call


# --- Django: the OAuth endpoints ---------------------------------------------------------------


class OAuthCorsMiddleware:
    """CORS for the OAuth endpoints in ``OAUTH_PATHS``; every other Django page stays same-origin."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        methods = OAUTH_PATHS.get(request.path_info)
        origin = request.headers.get("Origin")
        if methods is None or origin is None:
            return self.get_response(request)
        requested = request.headers.get("Access-Control-Request-Method")
        if request.method == "OPTIONS" and requested is not None:
            allowed = preflight_allowed(origin, requested, methods)
            response = HttpResponse(status=204 if allowed else 403)
            headers = preflight_headers(origin, methods) if allowed else []
        else:
            response = self.get_response(request)
            headers = response_headers(origin) if origin_allowed(origin) else []
        for key, value in headers:
            if key != "Vary":
                response[key] = value
        patch_vary_headers(response, ["Origin"])
        return response
