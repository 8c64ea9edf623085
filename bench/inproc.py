"""Per-call cost of a tenant endpoint in process: no sockets, no load generator, no second core.

A quick before/after for a hot-path change (the HTTP runs of `bench/run` swing a few per cent from
run to run on a shared 2-core machine; this swings less). It prepares a throwaway embedded-default
site (SQLite in a temp directory: tenant `bench`, its member, the key ring, a token), starts the
ASGI application's lifespan, then plays 2026-07-28 requests to `/t/bench/mcp` as uvicorn would and
prints the mean time per call of each kind:

- ``plain``: `tools/call` of `echo`;
- ``round1``: `greet`'s first round (asks one form question, seals the state);
- ``retry``: `greet`'s retry with the answer (unseals, claims the state, runs the tool), each with
  a fresh state from an untimed round 1.

    .venv/bin/python bench/inproc.py [--calls 3000] [--only KIND ...] [--gap-us 300]
    .venv/bin/python bench/inproc.py --profile plain|round1|retry [--sort tottime] [--dump F]
    .venv/bin/python bench/inproc.py --toggle-audit --only plain  # the audit log's cost per call
    .venv/bin/python bench/inproc.py --toggle-compiled --only plain  # compiled calls against the SDK's
    .venv/bin/python bench/inproc.py --only plain --gc  # and the garbage collector's passes meanwhile

Each line gives the wall time and the process's CPU time per call: on a shared machine the CPU
figure is the one to compare (another process's load stretches the wall time, and much less the
CPU time).

With ``MCPSITE_REDIS_URL`` set, the single-use claim goes to that Redis as deployed (else to the
database; ``MCPSITE_DATABASE_URL``, if set, is used instead of SQLite). ``--profile`` prints
cProfile's top functions for that kind instead of timing it.

``--gap-us N`` leaves the core idle N µs between calls (``time.sleep``, outside the timed call),
as a server at concurrency 1 waits for its client's next request. Back to back, every call finds
the interpreter's code and data in the CPU's caches; after an idle gap it does not, and the same
call costs more CPU. The figure printed is then the call's own CPU (the gaps are not counted).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import functools
import gc
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from starlette.types import ASGIApp  # noqa: E402

from bench.asgi import Exchange, post_scope  # noqa: E402

SITE_ROOT = "http://127.0.0.1:8000"
PATH = "/t/bench/mcp"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}


def body(params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**params, "_meta": META}}).encode()


PLAIN = body({"name": "echo", "arguments": {"text": "hi"}})
ROUND_1 = body({"name": "greet", "arguments": {"name": "ann"}})


def prepare(var: str) -> str:
    """Migrate, seed and mint a token in a fresh site under `var`; return the token."""
    env = {**os.environ, "MCPSITE_VAR_DIR": var, "MCPSITE_SITE_ROOT": SITE_ROOT}
    run = lambda *argv: subprocess.run([sys.executable, *argv], cwd=ROOT, env=env, check=True, capture_output=True)  # noqa: E731
    run("manage.py", "migrate", "-v0")
    run("bench/seed.py")
    minted = run("manage.py", "mcp_token", "--tenant", "bench", "--user", "bench", "--site-root", SITE_ROOT)
    return minted.stdout.decode().strip().splitlines()[-1]


class Caller:
    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def call(self, tool: str, payload: bytes) -> dict[str, Any]:
        headers = [
            ("host", "127.0.0.1:8000"),
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", tool),
            ("authorization", f"Bearer {self.token}"),
            ("content-length", str(len(payload))),
        ]
        exchange = await Exchange(payload).play(self.app, post_scope(PATH, headers))
        if exchange.status != 200:
            raise RuntimeError(f"{tool}: HTTP {exchange.status}: {exchange.text[:300]!r}")
        result: dict[str, Any] = json.loads(exchange.text)["result"]
        return result

    async def plain(self) -> None:
        if (await self.call("echo", PLAIN))["content"][0]["text"] != "echo: hi":
            raise RuntimeError("wrong answer")

    async def round1(self) -> bytes:
        first = await self.call("greet", ROUND_1)
        (key,) = first["inputRequests"]
        return body(
            {
                "name": "greet",
                "arguments": {"name": "ann"},
                "inputResponses": {key: {"action": "accept", "content": {"colour": "blue"}}},
                "requestState": first["requestState"],
            }
        )

    async def retry_next(self, payloads: Iterator[bytes]) -> None:
        if (await self.call("greet", next(payloads)))["content"][0]["text"] != "hello ann in blue":
            raise RuntimeError("wrong answer")


async def measure(args: argparse.Namespace, token: str) -> None:
    from mcp_server.asgi import application

    lifespan: asyncio.Queue[dict[str, str]] = asyncio.Queue()
    lifespan.put_nowait({"type": "lifespan.startup"})
    started = asyncio.Event()

    async def lifespan_send(message: MutableMapping[str, Any]) -> None:
        if message["type"].endswith("failed"):
            raise RuntimeError(message)
        started.set()

    running = asyncio.create_task(
        application({"type": "lifespan", "asgi": {"version": "3.0"}}, lifespan.get, lifespan_send)
    )
    await started.wait()
    caller = Caller(application, token)
    kinds = [args.profile] if args.profile else args.only or ["plain", "round1", "retry"]
    for kind in kinds:
        n = args.calls
        arms = 2 if args.toggle_audit or args.toggle_compiled else 1  # `alternate` plays n calls in each arm
        retries = [await caller.round1() for _ in range(arms * n + 200)] if kind == "retry" else []
        kinds_of_call: dict[str, Callable[[], Awaitable[Any]]] = {
            "plain": caller.plain,
            "round1": caller.round1,
            "retry": functools.partial(caller.retry_next, iter(retries)),
        }
        one = kinds_of_call[kind]
        for _ in range(200):  # warm-up
            await one()
            await settle()
        if args.toggle_audit:
            await toggle_audit(one, n)
            continue
        if args.toggle_compiled:
            await toggle_compiled(one, n)
            continue
        if args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(n):
                await one()
                await settle()
            profiler.disable()
            if args.dump:
                profiler.dump_stats(args.dump)
            pstats.Stats(profiler).sort_stats(args.sort).print_stats(40)
            continue
        wall = cpu = 0.0
        gap = args.gap_us / 1e6
        collector = CollectorTimes() if args.gc else None
        for _ in range(n):
            if gap:
                time.sleep(gap)  # noqa: ASYNC251  (the whole process idles; uvloop timers round to 1 ms)
            begun, began_cpu = time.perf_counter(), time.process_time()
            await one()
            wall += time.perf_counter() - begun
            cpu += time.process_time() - began_cpu
            await settle()
        after = f", {args.gap_us:g} µs idle before each" if gap else ""
        print(
            f"{kind:8s} {wall / n * 1e6:8.1f} µs per call, {cpu / n * 1e6:8.1f} µs CPU (mean of {n}{after})", flush=True
        )
        if collector is not None:
            print(collector.report(n), flush=True)
    lifespan.put_nowait({"type": "lifespan.shutdown"})
    await running


async def settle() -> None:
    """One turn of the event loop between calls, as a server takes between requests.

    A call that never waits on anything real runs start to end without the loop turning, and a
    timer it cancelled (each call's `_ResponseStream.watch`) is let go only when the loop turns:
    back to back, 20,000 calls kept 160,000 objects alive and the collector made full passes over
    them (~30 ms each), which a server never does (``--gc``: +160k objects tracked, 15 µs of GC a
    call; with this turn, +1k and 5 µs)."""
    await asyncio.sleep(0)


class CollectorTimes:
    """The garbage collector's passes while the calls run (``gc.callbacks``): how many of each
    generation and how long they took, the writer thread's share included (``--gc``)."""

    def __init__(self) -> None:
        self.passes = [0, 0, 0]
        self.seconds = [0.0, 0.0, 0.0]
        self._began = 0.0
        self.tracked = len(gc.get_objects())
        gc.callbacks.append(self._tick)

    def _tick(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.perf_counter()
        else:
            generation = info["generation"]
            self.passes[generation] += 1
            self.seconds[generation] += time.perf_counter() - self._began

    def report(self, calls: int) -> str:
        gc.callbacks.remove(self._tick)
        each = ", ".join(f"gen{g} {self.passes[g]} x {self.seconds[g] * 1e3:.1f} ms" for g in range(3))
        grown = len(gc.get_objects()) - self.tracked
        return f"{'':8s} GC: {each}; {sum(self.seconds) / calls * 1e6:.1f} µs a call; {grown:+d} objects it tracks"


def abba(block: int) -> bool:
    """Whether block `block` of an alternating measurement runs the first arm: A B B A A B B A ...

    The second block of a pair costs more CPU per call whichever arm it runs (seen: ~10 %, with
    the same code in both arms), so each arm goes first in half the pairs."""
    return (block % 2 == 0) == (block % 4 < 2)


async def alternate(
    one: Callable[[], Awaitable[Any]],
    n: int,
    layer_type: type,
    after: Callable[[], Awaitable[Any]] | None = None,
    blocks: int = 20,
) -> tuple[float, float, float, Any]:
    """Mean CPU µs per call of tenant `bench` with its layer of `layer_type` in place and taken out
    (blocks of `n` / `blocks` calls, ABBA), and of that the part `after` took (run at the end of
    each block, counted in its arm); and the layer."""
    from mcp_server.registry import registry

    tenant = registry.get("bench")
    assert tenant is not None, "tenant bench is not served"
    layers = tenant.server.middleware
    layer = next(layer for layer in layers if isinstance(layer, layer_type))
    place = layers.index(layer)
    cpu = {"in": 0.0, "out": 0.0, "after": 0.0}
    per_block = max(1, n // blocks)
    for block in range(blocks * 2):
        arm = "in" if abba(block) else "out"
        if arm == "out":
            layers.remove(layer)
        began = time.process_time()
        for _ in range(per_block):
            await one()
            await settle()
        called = time.process_time()
        if after is not None:
            await after()
        cpu[arm] += time.process_time() - began
        cpu["after"] += time.process_time() - called
        if arm == "out":
            layers.insert(place, layer)
    calls = per_block * blocks
    return cpu["in"] / calls * 1e6, cpu["out"] / calls * 1e6, cpu["after"] / calls * 1e6, layer


async def toggle_audit(one: Callable[[], Awaitable[Any]], n: int) -> None:
    """The CPU per call with the tenant server's audit layer in place against taken out, in one
    process (`alternate`), each block's writer flushed inside it (a separate process per arm swings
    by tens of µs per call on its own). Prints both means and the difference: what the audit costs
    a call, its writer's rows included."""
    from audit.layer import AuditToolCalls
    from audit.writer import writer

    on, off, writing, _ = await alternate(one, n, AuditToolCalls, after=lambda: asyncio.to_thread(writer.flush))
    print(
        f"audit on {on:8.1f} µs CPU, off {off:8.1f} µs CPU per call: {on - off:+.1f} µs ({off / on:.3f} off/on;"
        f" {writing:.1f} µs of it writing the rows, {on - off - writing:.1f} µs on the call's path)"
    )


async def toggle_compiled(one: Callable[[], Awaitable[Any]], n: int) -> None:
    """The CPU per call with the compiled tool calls (`mcp_server.compiled_calls`) against the SDK's
    handler, in one process (`alternate`), and how many calls the compiled layer answered while in
    place (issue 31)."""
    from mcp_server.compiled_calls import CompiledToolCalls

    fast, slow, _, compiled = await alternate(one, n, CompiledToolCalls)
    print(
        f"compiled {fast:8.1f} µs CPU, SDK's handler {slow:8.1f} µs CPU per call: {fast - slow:+.1f} µs"
        f" ({slow / fast:.3f}x); the compiled layer answered {compiled.taken} calls of this process"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--profile", choices=["plain", "round1", "retry"])
    parser.add_argument(
        "--only", action="append", choices=["plain", "round1", "retry"], help="time only this kind (e.g. under py-spy)"
    )
    parser.add_argument(
        "--gap-us", type=float, default=0.0, help="idle the core this long before each timed call (as at c=1)"
    )
    parser.add_argument(
        "--toggle-audit", action="store_true", help="the audit layer's cost: on against off, alternating in one process"
    )
    parser.add_argument(
        "--toggle-compiled",
        action="store_true",
        help="the compiled tool calls against the SDK's handler, alternating in one process (issue 31)",
    )
    parser.add_argument("--gc", action="store_true", help="also time the garbage collector's passes during the calls")
    parser.add_argument("--sort", default="cumulative", help="cProfile's order for --profile (e.g. tottime)")
    parser.add_argument("--dump", help="also write --profile's stats to this file (pstats, e.g. for print_callers)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mcpsite-inproc-") as var:
        token = prepare(var)
        os.environ.update(MCPSITE_VAR_DIR=var, MCPSITE_SITE_ROOT=SITE_ROOT, DJANGO_SETTINGS_MODULE="config.settings")
        # The call quotas count every call, as deployed, but far above this rate: what counting
        # costs is measured, not refusals (set them in the environment to measure otherwise).
        for quota in ("MCPSITE_CALL_QUOTA_PER_TENANT", "MCPSITE_CALL_QUOTA_PER_PERSON"):
            os.environ.setdefault(quota, "1000000000")
        import django

        django.setup()
        import uvloop  # uvicorn's loop when installed, as here

        uvloop.run(measure(args, token))


if __name__ == "__main__":
    main()
