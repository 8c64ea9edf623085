"""The one ASGI entry: ``uvicorn mcp_server.asgi:application``.

MCP paths (``/t/<slug>/mcp`` and its RFC 9728 metadata) go to the tenant's MCP app, the
lifespan runs the tenant registry and its loops, and everything else goes to Django. Django
middleware never sees an MCP request; the MCP apps enforce their own transport security, and CORS
for them is answered here (``mcpsite.cors``).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.asgi import get_asgi_application

from mcpsite import tracing

tracing.install()  # issue 29: OTLP traces when OTEL_* asks; before Django's handler reads its middleware list

# Static files (the admin's CSS) are served by Django's own handler, so the embedded default needs
# no extra server; deployed behind a proxy, the proxy serves STATIC_ROOT (`collectstatic`) first.
django_application = ASGIStaticFilesHandler(get_asgi_application())

from starlette.types import Receive, Scope, Send  # noqa: E402

from mcp_server import background  # noqa: E402
from mcp_server.compose import stand_in  # noqa: E402
from mcp_server.registry import registry  # noqa: E402
from mcpsite import cors, logs  # noqa: E402
from mcpsite.tenancy import tenant_slug_of_path  # noqa: E402

logger = logging.getLogger(__name__)

_METADATA_PREFIX = "/.well-known/oauth-protected-resource"


def tenant_slug(path: str) -> str | None:
    """``/t/<slug>/mcp`` (or its protected-resource metadata path) -> slug; anything else -> None."""
    if path.startswith(_METADATA_PREFIX):
        path = path[len(_METADATA_PREFIX) :]
    return tenant_slug_of_path(path)


async def _lifespan(scope: Scope, receive: Receive, send: Send) -> None:
    await receive()  # lifespan.startup
    started = False
    try:
        async with background.running():
            # Everything built at start-up (Django, the apps; tenants are built on first use) lives as long
            # as the process: move it out of the collector's reach. Otherwise each full collection
            # walks those ~140k objects, a ~60 ms pause every few hundred calls under load
            # (measured with bench/run: p99 and throughput). Unreachable cycles made later are
            # still collected; only start-up objects are never revisited.
            gc.collect()
            gc.freeze()
            loop = type(asyncio.get_running_loop())
            logger.info("serving on the event loop %s.%s", loop.__module__, loop.__qualname__)
            await send({"type": "lifespan.startup.complete"})
            started = True
            await receive()  # lifespan.shutdown
    except Exception as exc:
        logger.exception("lifespan failed")
        await send({"type": "lifespan.shutdown.failed" if started else "lifespan.startup.failed", "message": str(exc)})
        return
    await send({"type": "lifespan.shutdown.complete"})


async def route(scope: Scope, receive: Receive, send: Send) -> None:
    kind = scope["type"]
    if kind == "http":
        slug = tenant_slug(scope["path"])
        if slug is not None:
            # The tenant's app, built here on its first request. No tenant served here: a stand-in
            # answers as a private tenant answers a stranger, so whether a tenant exists is told
            # only to its members (`compose.build_stand_in`).
            app = await registry.app_for(slug) or stand_in(slug)
            if scope["path"][1] == "t":
                # Browsers: a CORS preflight is answered here, before the tenant app (it
                # authenticates nothing), and a cross-origin response gets its CORS headers.
                # Requests without an Origin (SDK clients, curl) pay one scan of the header list.
                # (The RFC 9728 metadata is public: the SDK serves it to any origin itself.)
                for name, value in scope["headers"]:
                    if name == b"origin":
                        if not await cors.mcp_preflight(scope, send):
                            await cors.with_cors(app, scope, value.decode("latin-1"))(receive, send)
                        return
            await app(scope, receive, send)
            return
    elif kind == "lifespan":
        await _lifespan(scope, receive, send)
        return
    # Django's handler is annotated with narrower ASGI types than the spec's; the objects are the same.
    await django_application(scope, receive, send)  # type: ignore[arg-type]


# issue 29: outermost, a request id per request (the log context, the X-Request-ID response header).
application = logs.request_ids(route, tenant_of=tenant_slug)
