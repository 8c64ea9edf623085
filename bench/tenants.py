"""Part 6: what a process costs with many tenants in PostgreSQL (issue 26).

1. **Start-up and memory**: with 0, 1,000 and 100,000 tenants seeded (public, toolsets `demo`,
   `payments` and `bench`, as the issue measured), a fresh `python -m mcp_server.serve` is timed from
   its launch to its first `200` on ``/healthz``, and its RSS (``VmRSS``) read then.
2. **The first call of a cold tenant** (100,000 seeded): 200 tenants never called before, one
   `tools/call echo` each, sequentially; p50 / p99 of the client's time per call.
3. **Memory with 1,000 called**: 1,000 tenants called once each (including the 200), then RSS.
4. **Round-robin against one tenant**: the steady call rate over `--concurrency` keep-alive
   connections, every call to the next of the 1,000 (already built) tenants, against every call to
   one of them; the ratio is round-robin / one.
5. **Fairness** (`bench/fairness.py`): a 0-second task at one tenant, from its `tools/call` to
   `tasks/get` saying `completed`, while another tenant runs its cap of long tasks; on the
   embedded default and deployed (Redis, a Celery worker and the beat); p50 / p99 / max.

The server is pinned to `--server-cpu`, this client to the other CPU (`bench/bench.py`). Prints
one line ``BENCH_RESULT {json}``. Runs with mcpsite's settings (``MCPSITE_DATABASE_URL`` a
PostgreSQL):

    python bench/tenants.py --server-cpu 0
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

import httpx2  # noqa: E402
from django.db import connection  # noqa: E402

from bench import fairness  # noqa: E402
from mcpsite.models import Tenant  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PREFIX = "bt-"
TOOLSETS = ["demo", "payments", "bench"]
COUNTS = (0, 1_000, 100_000)
COLD_SAMPLES = 200
CALLED = 1_000
FAIRNESS_SAMPLES = 100
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
ECHO = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}, "_meta": META},
    }
).encode()
EXPECT = b"echo: hi"


def slug(n: int) -> str:
    return f"{PREFIX}{n:06d}"


def seed(count: int, *, batch: int = 10_000) -> int:
    """Exactly `count` benchmark tenants ``bt-000000`` ... (the first ones kept, the rest deleted):
    bulk INSERTs through the ORM, so every column gets its model default as the schema changes."""
    Tenant.objects.filter(slug__startswith=PREFIX, slug__gte=slug(count)).delete()  # zero-padded: in order
    have = Tenant.objects.filter(slug__startswith=PREFIX).count()
    for start in range(have, count, batch):
        Tenant.objects.bulk_create(
            [
                Tenant(slug=slug(n), name=f"Bench tenant {n}", public=True, toolsets=TOOLSETS)
                for n in range(start, min(start + batch, count))
            ],
            batch_size=batch,
        )
    return Tenant.objects.filter(slug__startswith=PREFIX).count()


def settle_table() -> None:
    """VACUUM ANALYZE the tenants table after a bulk seed, so what is measured next is the server
    and not PostgreSQL's autovacuum catching up with 100,000 new rows on the client's CPU."""
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM ANALYZE {Tenant._meta.db_table}")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


class Server:
    def __init__(self, port: int, cpu: str | None, log_path: Path, env: dict[str, str] | None = None) -> None:
        self.port, self.cpu, self.log_path = port, cpu, log_path
        self.url = f"http://127.0.0.1:{port}"
        self.env = {**os.environ, "PORT": str(port), "MCPSITE_SITE_ROOT": self.url, **(env or {})}
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> float:
        """Launch and wait for /healthz; the seconds it took."""
        prefix = ["taskset", "-c", self.cpu] if self.cpu else []  # taskset execs: the pid is the server's
        began = time.perf_counter()
        with self.log_path.open("ab") as out:
            self.process = subprocess.Popen(
                [*prefix, sys.executable, "-m", "mcp_server.serve", "--host", "127.0.0.1", "--port", str(self.port)],
                cwd=ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        with httpx2.Client(timeout=1) as http:
            while time.perf_counter() - began < 600:
                if self.process.poll() is not None:
                    raise RuntimeError(f"the server exited early; log: {self.log_path}")
                try:
                    if http.get(f"{self.url}/healthz").status_code == 200:
                        return time.perf_counter() - began
                except httpx2.TransportError:
                    pass
                time.sleep(0.02)
        raise RuntimeError(f"the server did not start; log: {self.log_path}")

    @property
    def rss_mb(self) -> float:
        assert self.process is not None
        return rss_mb(self.process.pid)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        self.process = None


class Connection:
    """A keep-alive HTTP/1.1 connection posting `echo` calls to any tenant's path (small, so
    the client costs less CPU than the server it drives)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> Connection:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        return self

    async def echo(self, tenant: str) -> None:
        assert self.reader is not None and self.writer is not None
        self.writer.write(
            (
                f"POST /t/{tenant}/mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nContent-Type: application/json\r\n"
                "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
                f"Mcp-Method: tools/call\r\nMcp-Name: echo\r\nContent-Length: {len(ECHO)}\r\n\r\n"
            ).encode()
            + ECHO
        )
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        payload = await self.reader.readexactly(length)
        if status != 200 or EXPECT not in payload:
            raise RuntimeError(f"{tenant}: HTTP {status} {payload[:200]!r}")

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def percentile(values: list[float], p: float) -> float:
    """Nearest rank, as bench/bench.py's: p99 of 100 samples is the 99th smallest (the rounding
    before took the 100th, the max)."""
    ordered = sorted(values)
    return ordered[max(1, min(len(ordered), math.ceil(p * len(ordered) / 100))) - 1]


async def cold_calls(port: int, tenants: list[str]) -> list[float]:
    conn = await Connection(port).open()
    times = []
    try:
        for tenant in tenants:
            began = time.perf_counter()
            await conn.echo(tenant)
            times.append((time.perf_counter() - began) * 1000)
    finally:
        await conn.close()
    return times


async def call_rate(port: int, tenants: list[str], *, concurrency: int, duration: float, warmup: float = 1.0) -> float:
    """Calls a second over `duration`, each connection taking the next tenant of the list in turn."""
    conns = [await Connection(port).open() for _ in range(concurrency)]
    counter = 0
    done = 0
    start = time.perf_counter() + warmup
    end = start + duration

    async def caller(conn: Connection) -> None:
        nonlocal counter, done
        while (now := time.perf_counter()) < end:
            tenant = tenants[counter % len(tenants)]
            counter += 1
            await conn.echo(tenant)
            if now >= start:
                done += 1

    try:
        await asyncio.gather(*(caller(c) for c in conns))
    finally:
        for c in conns:
            await c.close()
    return done / duration


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server-cpu", default=None, help="pin the server to this CPU (taskset)")
    parser.add_argument("--counts", default=",".join(map(str, COUNTS)))
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per call-rate measurement")
    parser.add_argument("--rate-reps", type=int, default=3, help="call-rate measurements of each kind, alternating")
    parser.add_argument("--starts", type=int, default=3, help="start-ups timed per tenant count (median)")
    parser.add_argument("--logs", default="/tmp", help="where each server's log goes")
    parser.add_argument("--fairness-samples", type=int, default=FAIRNESS_SAMPLES,
                        help="0-second tasks timed per configuration (0: no fairness figure)")  # fmt: skip
    parser.add_argument("--fairness-only", action="store_true", help="only the fairness figure")
    args = parser.parse_args()
    counts = [] if args.fairness_only else [int(c) for c in args.counts.split(",")]

    startup: dict[str, dict[str, Any]] = {}
    result: dict[str, Any] = {"startup": startup, "toolsets": TOOLSETS}
    for count in counts:
        began = time.perf_counter()
        seeded = seed(count)
        assert seeded == count, (seeded, count)
        settle_table()
        print(f"tenants: seeded {count} in {time.perf_counter() - began:.1f} s", file=sys.stderr)
        log_path = Path(args.logs) / f"bench-tenants-{count}.log"
        log_path.unlink(missing_ok=True)
        # Start-up is mostly imports, which other load on the machine stretches: the median of a few.
        starts: list[float] = []
        for _ in range(args.starts - 1):
            server = Server(free_port(), args.server_cpu, log_path)
            try:
                starts.append(server.start())
            finally:
                server.stop()
        server = Server(free_port(), args.server_cpu, log_path)
        try:
            starts.append(server.start())
            seconds = statistics.median(starts)
            startup[str(count)] = {"seconds": seconds, "all_seconds": starts, "rss_mb": server.rss_mb}
            print(f"tenants: {count:>6} tenants: start-up {seconds:.2f} s, RSS {server.rss_mb:.0f} MB", file=sys.stderr)
            if count < max(COLD_SAMPLES, CALLED):
                continue
            # Spread over the table: the cold ones are not neighbours of each other.
            called = [slug(n * (count // CALLED)) for n in range(CALLED)]
            cold = asyncio.run(cold_calls(server.port, called[:COLD_SAMPLES]))
            result["cold_first_call_ms"] = {
                "samples": len(cold),
                "p50": statistics.median(cold),
                "p99": percentile(cold, 99),
                "max": max(cold),
                "raw": cold,
            }
            asyncio.run(cold_calls(server.port, called[COLD_SAMPLES:]))
            result["rss_with_called_mb"] = {"called": CALLED, "rss_mb": server.rss_mb}
            # Alternating, so drift and other load on the machine fall on both alike; medians.
            rates: dict[str, list[float]] = {"one": [], "round_robin": []}
            for _ in range(args.rate_reps):
                for name, tenants in (("one", called[:1]), ("round_robin", called)):
                    calls = call_rate(server.port, tenants, concurrency=args.concurrency, duration=args.duration)
                    rate = asyncio.run(calls)
                    rates[name].append(rate)
                    print(f"tenants: {name}: {rate:.0f} calls/s", file=sys.stderr)
            one, round_robin = statistics.median(rates["one"]), statistics.median(rates["round_robin"])
            result["call_rate"] = {
                "one": one,
                "round_robin": round_robin,
                "all": rates,
                "concurrency": args.concurrency,
                "tenants": CALLED,
                "ratio": round_robin / one,
            }
            built = log_path.read_text(errors="replace").count(" built, served at ")
            result["built_in_last_server"] = built
        finally:
            server.stop()
    if args.fairness_samples:
        result["fairness"] = fairness.measure(samples=args.fairness_samples, cpu=args.server_cpu, logs=Path(args.logs))
    print("BENCH_RESULT " + json.dumps(result))


if __name__ == "__main__":
    main()
