"""What the tool-call audit log costs (issue 28 item 3): the plain and the two-round call rates of
ours with the audit on against off, in one run.

    BENCH_SCRIPT=bench/audit.py bench/run                  # ~3 min
    BENCH_SCRIPT=bench/audit.py bench/run --reps 5 --duration 8

Each configuration is the deployed server (`python -m mcp_server.serve`, tenant `bench`, PostgreSQL
and Redis from `bench/run`), started alone, pinned to `--server-cpu`, warmed for 1 s, then driven on
the other CPU by wrk with the plain 2026-07-28 `tools/call` of `echo` (`bench.bench.wrk_plain`) and
by the two-round caller (`bench/two_round.py`: `greet` asks a form question, the client answers and
retries: two audit rows a call), every answer checked. The order of the configurations rotates
every repetition; medians are reported:

- **off**: ``MCPSITE_AUDIT=0``: no audit layer, no rows;
- **on**: the default: a row per call (per round), buffered and written by the writer thread in
  batches (``MCPSITE_AUDIT_BATCH_SIZE``, ``MCPSITE_AUDIT_FLUSH_SECONDS``).

Beside each rate, the server's requests per CPU-second (its process's CPU time over the run, the
writer thread's included): on a machine shared with other work the rates swing by a third from
run to run, the CPU cost per request much less. The rows each run wrote are counted from the
database after it stops (the writer flushes at shutdown): at least one per request measured, or
the figure says rows were dropped. Each repetition's line also gives the CPU the server's other
threads than the event loop's used per request ("aside": the audit writer's, when on). The target
is on / off >= 0.95 for both rates. Prints a table and one line ``BENCH_RESULT {json}``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench import PY, Server, free_port, last_line, two_round, wrk_plain  # noqa: E402

MIN_ON_VS_OFF = 0.95
CONFIGS = ("off", "on")
WORKLOADS = {"plain": wrk_plain, "two-round": two_round}
COUNT_ROWS = "from audit.models import ToolCall; print(ToolCall.objects.count())"


def servers(args: argparse.Namespace, workdir: Path) -> dict[str, Server]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPSITE_AUDIT")}
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
    extra = {"off": {"MCPSITE_AUDIT": "0"}, "on": {"MCPSITE_AUDIT": "1"}}
    cpu = None if args.no_pin else args.server_cpu
    argv = [PY, "-m", "mcp_server.serve", "--host", "127.0.0.1", "--port", str(port)]
    base = {**env, "PORT": str(port), "MCPSITE_SITE_ROOT": root}
    return {
        name: Server(name, argv, {**base, **extra[name]}, f"{root}/t/bench/mcp", token, cpu, workdir / f"{name}.log")
        for name in CONFIGS
    }


def cpu_seconds(server: Server) -> tuple[float, float]:
    """CPU time the serving process has used: all its threads (the audit writer's included), and
    its other threads than the event loop's (the writer's, and any executor's)."""
    pid = server.pids()[0]
    total = other = 0.0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
        seconds = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        total += seconds
        if task.name != str(pid):
            other += seconds
    return total, other


def audit_rows() -> int:
    out = subprocess.run([PY, "manage.py", "shell", "-c", COUNT_ROWS], cwd=ROOT, capture_output=True, text=True)
    return int(last_line(out.stdout))


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
    workdir = Path(tempfile.mkdtemp(prefix="audit-", dir=os.environ.get("BENCH_TMP")))
    configs = servers(args, workdir)
    rates: dict[str, dict[str, list[float]]] = {w: {c: [] for c in CONFIGS} for w in WORKLOADS}
    per_cpu: dict[str, dict[str, list[float]]] = {w: {c: [] for c in CONFIGS} for w in WORKLOADS}
    measured_on = rows_on = 0
    for rep in range(args.reps):
        order = CONFIGS[rep % len(CONFIGS) :] + CONFIGS[: rep % len(CONFIGS)]
        for name in order:
            server = configs[name]
            before = audit_rows()
            server.start()
            try:
                wrk_plain(server, args.concurrency, 1.0, load_cpu)  # warm: token, tenant, imports
                results = {}
                for workload, run in WORKLOADS.items():
                    used, used_aside = cpu_seconds(server)
                    results[workload] = run(server, args.concurrency, args.duration, load_cpu)
                    total, aside = cpu_seconds(server)
                    results[workload]["cpu_s"] = total - used
                    results[workload]["aside_s"] = aside - used_aside
            finally:
                server.stop()  # the rows still buffered are written at shutdown
            written = audit_rows() - before
            for workload, result in results.items():
                rates[workload][name].append(result["throughput"])
                # Requests per CPU-second of the server: what its rate would be with its core to itself.
                per_cpu[workload][name].append(result["requests"] / result["cpu_s"])
            line = "  ".join(
                f"{w} {r['throughput']:8.1f} calls/s ({r['aside_s'] / r['requests'] * 1e6:4.1f} µs aside)"
                for w, r in results.items()
            )
            print(f"rep {rep + 1} {name:>3}: {line}  ({written} audit rows)", flush=True)
            if name == "off" and written:
                raise SystemExit(f"the audit was off, yet {written} rows were written")
            if name == "on":
                measured_on += sum(r["requests"] for r in results.values())
                rows_on += written
    median = {w: {c: statistics.median(v) for c, v in by.items()} for w, by in rates.items()}
    ratios = {w: median[w]["on"] / median[w]["off"] for w in WORKLOADS}
    cpu_median = {w: {c: statistics.median(v) for c, v in by.items()} for w, by in per_cpu.items()}
    cpu_ratios = {w: cpu_median[w]["on"] / cpu_median[w]["off"] for w in WORKLOADS}
    print(f"\naudit on vs off, c={args.concurrency}, {args.reps} reps x {args.duration:g} s (median, min-max)")
    for workload in WORKLOADS:
        for name in CONFIGS:
            values = rates[workload][name]
            spread = f"{min(values):.1f}-{max(values):.1f}"
            print(f"  {workload:>9} {name:>3}: {median[workload][name]:8.1f} calls/s  ({spread})")
        verdict = "pass" if ratios[workload] >= MIN_ON_VS_OFF else f"SHORT of {MIN_ON_VS_OFF}"
        print(f"  {workload:>9} on/off: {ratios[workload]:.3f}  {verdict}")
        print(f"  {workload:>9} on/off per server CPU-second: {cpu_ratios[workload]:.3f}")
    # Every request measured is a row, and the warm-ups add theirs: fewer rows means some were dropped.
    print(f"  audit rows written while on: {rows_on} (tools/call requests measured: {measured_on})")
    summary = {
        "concurrency": args.concurrency,
        "rates": rates,
        "median": median,
        "ratios": ratios,
        "requests_per_cpu_second": per_cpu,
        "cpu_ratios": cpu_ratios,
        "target_on_vs_off": MIN_ON_VS_OFF,
        "audit_rows_on": rows_on,
        "requests_measured_on": measured_on,
    }
    print("BENCH_RESULT " + json.dumps(summary), flush=True)
    if rows_on < measured_on:
        raise SystemExit(f"{measured_on - rows_on} audit rows dropped: the 'on' figure measured less than auditing")


if __name__ == "__main__":
    main()
