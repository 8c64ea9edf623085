"""What metrics and traces cost (issue 29): the plain call rate of ours with metrics off, on, on in
multiprocess mode, and on with traces exported, in one run.

    BENCH_SCRIPT=bench/metrics.py bench/run                  # ~2.5 min
    BENCH_SCRIPT=bench/metrics.py bench/run --reps 5 --concurrency 1

Each configuration is the deployed server (`python -m mcp_server.serve`, tenant `bench`, PostgreSQL
and Redis from `bench/run`), started alone, pinned to `--server-cpu`, warmed for 1 s, then driven
by wrk with the plain 2026-07-28 `tools/call` of `echo` (`bench.bench.wrk_plain`, every body
checked) on the other CPU; the order of the configurations rotates every repetition and medians
are reported:

- **off**: ``MCPSITE_METRICS=0``, no ``OTEL_*``: nothing counted, nothing traced;
- **on**: the default (metrics on, one process: prometheus-client's in-memory values);
- **on-mp**: metrics on with ``PROMETHEUS_MULTIPROC_DIR`` (several workers on a host: values in
  shared files);
- **traced**: metrics on and ``OTEL_EXPORTER_OTLP_ENDPOINT`` set: the SDK's span per message,
  batched and exported over OTLP/HTTP to a receiver in this process that answers 200.

The target is on / off >= 0.97. Prints a table and one line ``BENCH_RESULT {json}``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench import PY, Server, free_port, last_line, wrk_plain  # noqa: E402

MIN_ON_VS_OFF = 0.97
CONFIGS = ("off", "on", "on-mp", "traced")


class Sink:
    """An OTLP/HTTP endpoint that reads each export and answers 200 (what a collector does first)."""

    def __init__(self) -> None:
        sink = self
        self.exports = 0
        self.bytes = 0

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                sink.exports += 1
                sink.bytes += len(body)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


def servers(args: argparse.Namespace, workdir: Path, sink: Sink) -> dict[str, Server]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_") and k != "PROMETHEUS_MULTIPROC_DIR"}
    env.pop("MCPSITE_OTEL_SPANS", None)
    port = free_port()
    root = f"http://127.0.0.1:{port}"
    subprocess.run([PY, "bench/seed.py"], cwd=ROOT, env=env, check=True)
    minted = subprocess.run(
        [PY, "manage.py", "mcp_token", "--tenant", "bench", "--user", "bench", "--site-root", root],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    token = last_line(minted.stdout)
    multiproc = workdir / "prometheus"
    extra = {
        "off": {"MCPSITE_METRICS": "0"},
        "on": {"MCPSITE_METRICS": "1"},
        "on-mp": {"MCPSITE_METRICS": "1", "PROMETHEUS_MULTIPROC_DIR": str(multiproc)},
        "traced": {"MCPSITE_METRICS": "1", "OTEL_EXPORTER_OTLP_ENDPOINT": sink.endpoint},
    }
    cpu = None if args.no_pin else args.server_cpu
    argv = [PY, "-m", "mcp_server.serve", "--host", "127.0.0.1", "--port", str(port)]
    base = {**env, "PORT": str(port), "MCPSITE_SITE_ROOT": root}
    return {
        name: Server(name, argv, {**base, **extra[name]}, f"{root}/t/bench/mcp", token, cpu, workdir / f"{name}.log")
        for name in CONFIGS
    }


def fresh_multiproc_dir(server: Server) -> None:
    directory = server.env.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        path = Path(directory)
        path.mkdir(exist_ok=True)
        for stale in path.glob("*.db"):
            stale.unlink()  # emptied before the process starts, as deployed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per measurement")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--server-cpu", default="0")
    parser.add_argument("--load-cpu", default="1")
    parser.add_argument("--no-pin", action="store_true")
    args = parser.parse_args()
    if (os.cpu_count() or 1) < 2:
        args.no_pin = True
    load_cpu = None if args.no_pin else args.load_cpu
    workdir = Path(tempfile.mkdtemp(prefix="metrics-", dir=os.environ.get("BENCH_TMP")))
    sink = Sink()
    configs = servers(args, workdir, sink)
    rates: dict[str, list[float]] = {name: [] for name in CONFIGS}
    for rep in range(args.reps):
        order = CONFIGS[rep % len(CONFIGS) :] + CONFIGS[: rep % len(CONFIGS)]
        for name in order:
            server = configs[name]
            fresh_multiproc_dir(server)
            server.start()
            try:
                wrk_plain(server, args.concurrency, 1.0, load_cpu)  # warm: token, tenant, imports
                result = wrk_plain(server, args.concurrency, args.duration, load_cpu)
            finally:
                server.stop()
            rates[name].append(result["throughput"])
            print(f"rep {rep + 1} {name:>6}: {result['throughput']:8.1f} calls/s", flush=True)
    median = {name: statistics.median(values) for name, values in rates.items()}
    ratios = {f"{name}/off": median[name] / median["off"] for name in CONFIGS if name != "off"}
    print(f"\nplain tools/call, c={args.concurrency}, {args.reps} reps x {args.duration:g} s (median, min-max)")
    for name in CONFIGS:
        print(f"  {name:>6}: {median[name]:8.1f} calls/s  ({min(rates[name]):.1f}-{max(rates[name]):.1f})")
    for label, ratio in ratios.items():
        verdict = ""
        if label == "on/off":
            verdict = "  pass" if ratio >= MIN_ON_VS_OFF else f"  SHORT of {MIN_ON_VS_OFF}"
        print(f"  {label:>13}: {ratio:.3f}{verdict}")
    print(f"  OTLP exports received while traced: {sink.exports} ({sink.bytes} bytes)")
    summary = {"concurrency": args.concurrency, "rates": rates, "median": median, "ratios": ratios}
    summary["target_on_vs_off"] = MIN_ON_VS_OFF
    summary["otlp_exports"] = sink.exports
    print("BENCH_RESULT " + json.dumps(summary), flush=True)
    if sink.exports == 0:
        raise SystemExit("the traced server exported nothing: the traced figure measured no tracing")


if __name__ == "__main__":
    main()
