"""What the request id and the log context cost a request, in process (issue 29).

    .venv/bin/python bench/logs_overhead.py [--n 200000]

Times, per request, best of 5 rounds of N:

- ``request_ids``: the ASGI wrapper around an app that answers at once (id made or taken, context
  set and reset, the response header added), minus the same app unwrapped;
- ``LogContextLayer``: the tenant server's first middleware around a handler that returns at once
  (tool name, tenant, the principal's keyed hash, remembered), minus calling the handler directly;
- a log line through the filter and the JSON formatter (only paid when a line is written).

The whole call path is measured by ``bench/inproc.py`` (before/after: run it on both trees).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import logging
import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("MCPSITE_SECRET_KEY", "bench-only")

from mcpsite import logs
from mcpsite.logs import LogContextFilter, LogContextLayer, request_ids


async def answer(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"ok"})


async def discard(message: Any) -> None:
    pass


async def per_request(app: Any, n: int, trusted: bool) -> float:
    headers = [(b"host", b"x"), (b"x-request-id", b"5f0c6a3e2b7d4f1a9c8e0b6d2a4f7c13")]
    start = time.perf_counter()
    for _ in range(n):
        scope: dict[str, Any] = {"type": "http", "path": "/t/demo/mcp", "headers": headers}
        if trusted:
            scope[logs.TRUSTED_PEER] = True
        await app(scope, None, discard)
    return (time.perf_counter() - start) / n


async def per_call(layer: Any, n: int) -> float:
    request = SimpleNamespace(scope={logs.REQUEST_ID: "abc", "user": None})
    ctx = SimpleNamespace(
        request=request, method="tools/call", params={"name": "echo"}, lifespan_context=SimpleNamespace(slug="demo")
    )

    async def handler(ctx: Any) -> str:
        return "done"

    start = time.perf_counter()
    if layer is None:
        for _ in range(n):
            await handler(ctx)
    else:
        for _ in range(n):
            await layer(ctx, handler)
    return (time.perf_counter() - start) / n


def best(rounds: int, fn: Any) -> float:
    return min(fn() for _ in range(rounds))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=200_000)
    n = parser.parse_args().n
    import django

    django.setup()
    loop = asyncio.new_event_loop()
    run = loop.run_until_complete
    bare = best(5, lambda: run(per_request(answer, n, False)))
    made = best(5, lambda: run(per_request(request_ids(answer, tenant_of=lambda p: "demo"), n, False)))
    taken = best(5, lambda: run(per_request(request_ids(answer, tenant_of=lambda p: "demo"), n, True)))
    plain_call = best(5, lambda: run(per_call(None, n)))
    layered = best(5, lambda: run(per_call(LogContextLayer(), n)))

    handler = logging.StreamHandler(io.StringIO())
    handler.addFilter(LogContextFilter())
    handler.setFormatter(logs.JsonFormatter())
    logger = logging.getLogger("bench.logs")
    logger.handlers, logger.propagate = [handler], False
    lines = n // 10

    def one_line() -> float:
        start = time.perf_counter()
        for _ in range(lines):
            logger.warning("Tool %r rejected arguments: %r", "echo", ["date"])
        return (time.perf_counter() - start) / lines

    line = best(5, one_line)
    us = 1e6
    print(f"request_ids, id made here:      {(made - bare) * us:6.2f} µs a request")
    print(f"request_ids, proxy's id taken:  {(taken - bare) * us:6.2f} µs a request")
    print(f"LogContextLayer:                {(layered - plain_call) * us:6.2f} µs an MCP call")
    print(f"a JSON log line (when written): {line * us:6.2f} µs")


if __name__ == "__main__":
    main()
