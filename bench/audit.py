"""What the tool-call audit log costs (issue 28 item 3): the plain and the two-round call rates of
ours with the audit on against off, in one run.

    BENCH_SCRIPT=bench/audit.py bench/run                       # ~2 min
    BENCH_SCRIPT=bench/audit.py bench/run --reps 12 --duration 3  # ~6 min, the figure to report

Both configurations are the deployed server (`python -m mcp_server.serve`, tenant `bench`,
PostgreSQL and Redis from `bench/run`), started together, each on a port of its own, both pinned to
`--server-cpu` and warmed for 1 s:

- **off**: ``MCPSITE_AUDIT=0``: no audit layer, no rows;
- **on**: the default: a row per call (per round), buffered and written by the writer thread in
  batches (``MCPSITE_AUDIT_BATCH_SIZE``, ``MCPSITE_AUDIT_FLUSH_SECONDS``).

Each repetition drives one, then the other (the order swaps every repetition), from the other CPU:
wrk with the plain 2026-07-28 `tools/call` of `echo` (`bench.bench.wrk_plain`), then the two-round
caller (wrk with `bench/calls.lua`: `greet` asks a form question, the client answers and retries: two
audit rows a call), every answer checked. The rate of a run is charged with the work it left
behind: after each run the core idles `--settle` seconds (longer than the writer's flush interval),
and the CPU the server used meanwhile (the rows still buffered, written) is added to the run's
time. The two runs of a repetition are a pair, measured seconds apart; the figure is the median of
the pairs' on / off ratios. On this machine the rates of one server swing by up to a sixth within
a minute, so a ratio needs many pairs; `bench/instructions.py` counts what the audit costs a call
in instructions, which no other load moves.

Beside each rate, the server's CPU per request (its process's CPU time over the run and the settle,
the writer thread's included) and of that the other threads' ("aside": the audit writer's, when
on). The rows written are counted from the database after both stop (the writer flushes at
shutdown): at least one per request measured while on, or the figure says rows were dropped. The
target is on / off >= 0.95 for both rates. Prints a table and one line ``BENCH_RESULT {json}``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench import PY, Server, free_port, last_line, two_round, wrk_plain  # noqa: E402

MIN_ON_VS_OFF = 0.95
CONFIGS = ("off", "on")
WORKLOADS = {"plain": wrk_plain, "two-round": two_round}
REQUESTS_A_CALL = {"plain": 1, "two-round": 2}
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
    configs: dict[str, Server] = {}
    for name in CONFIGS:
        # Both run at once, each on a port of its own, under the one site root its token names.
        own = port if not configs else free_port()
        argv = [PY, "-m", "mcp_server.serve", "--host", "127.0.0.1", "--port", str(own)]
        served = {**env, "PORT": str(own), "MCPSITE_SITE_ROOT": root, **extra[name]}
        url = f"http://127.0.0.1:{own}/t/bench/mcp"
        configs[name] = Server(name, argv, served, url, token, cpu, workdir / f"{name}.log")
    return configs


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
    parser.add_argument(
        "--settle", type=float, default=2.5, help="seconds after each run: longer than the writer's flush interval"
    )
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
    before = audit_rows()
    measured_on = 0
    for server in configs.values():
        server.start()
    try:
        for server in configs.values():
            wrk_plain(server, args.concurrency, 1.0, load_cpu)  # warm: token, tenant, imports
        time.sleep(args.settle)
        for rep in range(args.reps):
            for workload, run in WORKLOADS.items():
                order = CONFIGS if rep % 2 == 0 else CONFIGS[::-1]
                for name in order:
                    server = configs[name]
                    used, used_aside = cpu_seconds(server)
                    result = run(server, args.concurrency, args.duration, load_cpu)
                    ran, _ = cpu_seconds(server)
                    time.sleep(args.settle)  # what the run left buffered is written now, on this core
                    total, aside = cpu_seconds(server)
                    left = total - ran
                    # The run's rate with the work it left for after it charged to it.
                    calls = result["requests"] / REQUESTS_A_CALL[workload]
                    rate = calls / (calls / result["throughput"] + left)
                    rates[workload][name].append(rate)
                    per_cpu[workload][name].append(result["requests"] / (total - used))
                    if name == "on":
                        measured_on += result["requests"]
                    print(
                        f"rep {rep + 1} {workload:>9} {name:>3}: {rate:8.1f} calls/s, "
                        f"{(total - used) / result['requests'] * 1e6:6.1f} µs CPU a request "
                        f"({(aside - used_aside) / result['requests'] * 1e6:4.1f} µs aside, "
                        f"{left / result['requests'] * 1e6:4.1f} µs after the run)",
                        flush=True,
                    )
    finally:
        for server in configs.values():
            server.stop()  # the rows still buffered are written at shutdown
    rows_on = audit_rows() - before
    median = {w: {c: statistics.median(v) for c, v in by.items()} for w, by in rates.items()}
    # Each repetition's on and off ran one after the other: the ratio of each such pair, and their median.
    pairs = {w: [on / off for on, off in zip(by["on"], by["off"], strict=True)] for w, by in rates.items()}
    ratios = {w: statistics.median(pairs[w]) for w in WORKLOADS}
    cpu_median = {w: {c: statistics.median(v) for c, v in by.items()} for w, by in per_cpu.items()}
    cpu_ratios = {w: cpu_median[w]["on"] / cpu_median[w]["off"] for w in WORKLOADS}
    print(f"\naudit on vs off, c={args.concurrency}, {args.reps} reps x {args.duration:g} s (median, min-max)")
    for workload in WORKLOADS:
        for name in CONFIGS:
            values = rates[workload][name]
            spread = f"{min(values):.1f}-{max(values):.1f}"
            print(f"  {workload:>9} {name:>3}: {median[workload][name]:8.1f} calls/s  ({spread})")
        verdict = "pass" if ratios[workload] >= MIN_ON_VS_OFF else f"SHORT of {MIN_ON_VS_OFF}"
        each = ", ".join(f"{ratio:.3f}" for ratio in pairs[workload])
        print(f"  {workload:>9} on/off: {ratios[workload]:.3f}  {verdict}  (median of the pairs: {each})")
        print(f"  {workload:>9} on/off per server CPU-second: {cpu_ratios[workload]:.3f}")
    # Every request measured is a row, and the warm-ups add theirs: fewer rows means some were dropped.
    print(f"  audit rows written while on: {rows_on} (tools/call requests measured: {measured_on})")
    summary = {
        "concurrency": args.concurrency,
        "rates": rates,
        "median": median,
        "pair_ratios": pairs,
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
