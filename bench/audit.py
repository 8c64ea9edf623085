"""What the tool-call audit log costs (issue 28 item 3): the plain and the two-round call rates of
ours with the audit on against off, in one run.

    BENCH_SCRIPT=bench/audit.py bench/run                        # ~2.5 min
    BENCH_SCRIPT=bench/audit.py bench/run --reps 12 --duration 3  # ~5 min, the figure to report
    BENCH_SCRIPT=bench/audit.py bench/run --reps 8 --control      # both off: the method's own bias
    BENCH_SCRIPT=bench/audit.py bench/run --on-env MCPSITE_AUDIT_FLUSH_SECONDS=5  # a setting, 'on' only

Both configurations are the deployed server (`python -m mcp_server.serve`, tenant `bench`,
PostgreSQL and Redis from `bench/run`), each on a port of its own, both pinned to `--server-cpu`
and warmed for 1 s:

- **off**: ``MCPSITE_AUDIT=0``: no audit layer, no rows;
- **on**: the default: a row per call (per round), buffered, and handed by the writer thread to
  Redis in batches (``MCPSITE_AUDIT_BATCH_SIZE``, ``MCPSITE_AUDIT_FLUSH_SECONDS``), as deployed
  (``MCPSITE_AUDIT_WRITER=redis``). No beat runs here: after the run the beat's drain job
  (`audit.handoff.drain`) writes the rows in a process of its own, and its CPU per row is printed
  beside the figure (spent where the beat runs, not in a serving process). ``--on-env
  MCPSITE_AUDIT_WRITER=process``: the rows built and written by the serving process's writer.

The workloads, from the other CPU: wrk with the plain 2026-07-28 `tools/call` of `echo`
(`bench.bench.wrk_plain`), then the two-round caller (wrk with `bench/calls.lua`: `greet` asks a
form question, the client answers and retries: two audit rows a call), every answer checked.

**Driven together** (the default). Each repetition starts both servers afresh and drives both over
the same seconds, two wrk at once, the servers sharing the one core: whatever else slows the
machine meanwhile slows both alike. A rate is then what the scheduler gave a server, so the figure
is each server's calls per CPU-second (its process's CPU time, every thread's, over the run and the
settle after it): the rate it would have with the core to itself. The order the two are started
and driven in favours one by a few per cent (`--control`, two identical servers: the one started
second ran 2-4 % ahead, either way round), so the order swaps every repetition, the repetitions
are made even, and the figure is the geometric mean of the pairs' on / off ratios with its 95 %
interval, taken over couples of consecutive pairs (one of each order).

**Driven in turn** (``--in-turn``; the method until 2026-12-07). Both start once; each repetition
drives one, then the other, seconds apart; the figure is the median of the pairs' rate ratios. On
this machine the rates of one server swing by up to a sixth within a minute: pairs spread from 0.65
to 1.29, which cannot separate 0.94 from 0.96.

After each run the core idles `--settle` seconds (longer than the writer's flush interval) and the
CPU the server used meanwhile (the rows still buffered, written) is charged to the run. Beside each
rate, the server's CPU per request and of that the other threads' ("aside": the audit writer's,
when on). The rows written are counted from the database after both stop (the writer flushes at
shutdown): at least one per request measured while on, or the figure says rows were dropped. The
target is on / off >= 0.95 for both calls. Prints a table and one line ``BENCH_RESULT {json}``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench import PY, WORKLOADS, Server, Workload, cpu_times, free_port, last_line, wrk_plain  # noqa: E402

MIN_ON_VS_OFF = 0.95
CONFIGS = ("off", "on")
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
    # --control: both off, the method's own bias and spread (an A/A run).
    extra = {"off": {"MCPSITE_AUDIT": "0"}, "on": {"MCPSITE_AUDIT": "0" if args.control else "1"}}
    extra["on"].update(setting.split("=", 1) for setting in args.on_env)  # e.g. MCPSITE_AUDIT_FLUSH_SECONDS=0.5
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


# Student's t at 97.5 % for 1..12 degrees of freedom (the 95 % interval of a mean of a few pairs).
_T975 = (12.71, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179)


def couples_interval(ratios: list[float]) -> tuple[float, float, float]:
    """The geometric mean of `ratios` (pairs in alternating order, an even number of them) and its
    95 % interval, taken over couples of consecutive pairs (one of each order), so that the order's
    own favour cancels inside each couple instead of widening the interval."""
    logs = [math.log(a * b) / 2 for a, b in zip(ratios[::2], ratios[1::2], strict=False)]
    mean = statistics.fmean(logs)
    if len(logs) < 2:
        return math.exp(mean), 0.0, math.inf
    half = _T975[min(len(logs) - 1, len(_T975)) - 1] * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def _pairs(by: dict[str, list[float]]) -> list[float]:
    return [on / off for on, off in zip(by["on"], by["off"], strict=True)]


def cpu_seconds(server: Server) -> tuple[float, float]:
    """CPU time the serving process has used: all its threads (the audit writer's included), and
    its other threads than the event loop's (the writer's, and any executor's)."""
    pid = server.pids()[0]
    total = other = 0.0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            seconds = sum(cpu_times(task / "stat"))
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
        total += seconds
        if task.name != str(pid):
            other += seconds
    return total, other


Measured = dict[str, tuple[dict[str, Any], float, float, float]]
"""Per configuration: wrk's result, the CPU its server used for the run and the settle after it,
of that the other threads' (the writer's), and the part used after the run."""


def apart(
    configs: dict[str, Server], order: Sequence[str], run: Workload, args: argparse.Namespace, load_cpu: str | None
) -> Measured:
    """Drive each server in turn, the other idle; each run followed by the settle."""
    measured: Measured = {}
    for name in order:
        server = configs[name]
        used, used_aside = cpu_seconds(server)
        result = run(server, args.concurrency, args.duration, load_cpu)
        ran, _ = cpu_seconds(server)
        time.sleep(args.settle)  # what the run left buffered is written now, on this core
        total, aside = cpu_seconds(server)
        measured[name] = (result, total - used, aside - used_aside, total - ran)
    return measured


def together(
    configs: dict[str, Server], order: Sequence[str], run: Workload, args: argparse.Namespace, load_cpu: str | None
) -> Measured:
    """Drive both servers over the same seconds (two wrk at once, started in `order`), sharing
    the server core; then the settle. Whatever else slows the machine meanwhile slows both."""
    used = {name: cpu_seconds(configs[name]) for name in order}
    with ThreadPoolExecutor(len(order)) as pool:
        runs = {name: pool.submit(run, configs[name], args.concurrency, args.duration, load_cpu) for name in order}
        results = {name: runs[name].result() for name in order}
    ran = {name: cpu_seconds(configs[name])[0] for name in order}
    time.sleep(args.settle)
    measured: Measured = {}
    for name in order:
        total, aside = cpu_seconds(configs[name])
        measured[name] = (results[name], total - used[name][0], aside - used[name][1], total - ran[name])
    return measured


DRAIN = """
import time
from audit.handoff import drain
rows, started = 0, time.process_time()
while written := drain():
    rows += written
print(rows, time.process_time() - started)
"""


def drained() -> tuple[int, float]:
    """The rows the beat's drain job writes of what the run queued, and the CPU it took."""
    out = subprocess.run([PY, "manage.py", "shell", "-c", DRAIN], cwd=ROOT, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"the drain failed:\n{out.stderr}")
    rows, seconds = last_line(out.stdout).split()
    return int(rows), float(seconds)


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
    parser.add_argument(
        "--in-turn", action="store_true", help="drive one server, then the other (the figure: the rates' ratio)"
    )
    parser.add_argument(
        "--on-env", action="append", default=[], metavar="NAME=VALUE", help="a setting for the 'on' server only"
    )
    parser.add_argument("--control", action="store_true", help="both servers with the audit off: the method's bias")
    args = parser.parse_args()
    args.together = not args.in_turn
    if args.together:
        args.reps += args.reps % 2  # as many pairs started in each order
    if (os.cpu_count() or 1) < 2:
        args.no_pin = True
    load_cpu = None if args.no_pin else args.load_cpu
    workdir = Path(tempfile.mkdtemp(prefix="audit-", dir=os.environ.get("BENCH_TMP")))
    configs = servers(args, workdir)
    rates: dict[str, dict[str, list[float]]] = {w: {c: [] for c in CONFIGS} for w in WORKLOADS}
    per_cpu: dict[str, dict[str, list[float]]] = {w: {c: [] for c in CONFIGS} for w in WORKLOADS}
    p99: dict[str, dict[str, list[float]]] = {w: {c: [] for c in CONFIGS} for w in WORKLOADS}
    before = audit_rows()
    measured_on = 0

    def start(order: Sequence[str]) -> None:
        for name in order:
            configs[name].start()
        for name in order:
            wrk_plain(configs[name], args.concurrency, 1.0, load_cpu)  # warm: token, tenant, imports
        time.sleep(args.settle)

    if not args.together:
        start(CONFIGS)
    try:
        for rep in range(args.reps):
            if args.together:
                # Fresh processes every repetition, started in the order of the pair: two identical
                # servers started once differed by 2-3 % for the whole run (an A/A run, --control).
                for server in configs.values():
                    server.stop()
                start(CONFIGS if rep % 2 == 0 else CONFIGS[::-1])
            for workload, run in WORKLOADS.items():
                order = CONFIGS if rep % 2 == 0 else CONFIGS[::-1]
                measured = (
                    together(configs, order, run, args, load_cpu)
                    if args.together
                    else apart(configs, order, run, args, load_cpu)
                )
                for name in order:
                    result, used, aside, left = measured[name]
                    calls = result["requests"] / REQUESTS_A_CALL[workload]
                    # The run's rate with the work it left for after it charged to it.
                    rate = calls / (calls / result["throughput"] + left)
                    rates[workload][name].append(rate)
                    p99[workload][name].append(result["p99_ms"])
                    per_cpu[workload][name].append(calls / used)
                    if name == "on":
                        measured_on += result["requests"]
                    print(
                        f"rep {rep + 1} {workload:>9} {name:>3}: {rate:8.1f} calls/s, "
                        f"{calls / used:8.1f} calls per CPU-second, "
                        f"{used / result['requests'] * 1e6:6.1f} µs CPU a request "
                        f"({aside / result['requests'] * 1e6:4.1f} µs aside, "
                        f"{left / result['requests'] * 1e6:4.1f} µs after the run), p99 {result['p99_ms']:.2f} ms",
                        flush=True,
                    )
    finally:
        for server in configs.values():
            server.stop()  # the rows still buffered are written (or queued) at shutdown
    drained_rows, drain_seconds = drained()
    rows_on = audit_rows() - before
    median = {w: {c: statistics.median(v) for c, v in by.items()} for w, by in rates.items()}
    # Each repetition's on and off ran seconds apart (or over the same seconds): the ratio of each
    # such pair, and their median; of the rates, and of the calls per server CPU-second.
    pairs = {w: _pairs(by) for w, by in rates.items()}
    cpu_pairs = {w: _pairs(by) for w, by in per_cpu.items()}
    ratios = {w: statistics.median(pairs[w]) for w in WORKLOADS}
    cpu_ratios = {w: statistics.median(cpu_pairs[w]) for w in WORKLOADS}
    # Two servers sharing one core each get what the scheduler gives them: their rates are not
    # their costs, their calls per CPU-second are (the rate each would have with the core its own).
    figure = cpu_ratios if args.together else ratios
    interval = {w: couples_interval(cpu_pairs[w]) for w in WORKLOADS} if args.together else {}
    if args.together:
        # Either order of a pair favours one server by a few per cent (the control shows it): the
        # figure is the geometric mean over as many pairs of each order, with its 95 % interval.
        figure = {w: interval[w][0] for w in WORKLOADS}
    mode = "driven together" if args.together else "driven in turn"
    label = "control (both off)" if args.control else "audit on vs off"
    print(f"\n{label}, {mode}, c={args.concurrency}, {args.reps} reps x {args.duration:g} s (median, min-max)")
    for workload in WORKLOADS:
        for name in CONFIGS:
            values = rates[workload][name]
            spread = f"{min(values):.1f}-{max(values):.1f}"
            print(
                f"  {workload:>9} {name:>3}: {median[workload][name]:8.1f} calls/s  ({spread}), "
                f"{statistics.median(per_cpu[workload][name]):8.1f} calls per CPU-second, "
                f"p99 {statistics.median(p99[workload][name]):.2f} ms a request"
            )
        verdict = "pass" if figure[workload] >= MIN_ON_VS_OFF else f"SHORT of {MIN_ON_VS_OFF}"
        for what, ratio, each in (("rates", ratios, pairs), ("per CPU-second", cpu_ratios, cpu_pairs)):
            mark = f"  {verdict}" if ratio is figure else ""
            if args.together and ratio is cpu_ratios:
                mean, low, high = interval[workload]
                mark = f"  median; geometric mean {mean:.3f} (95 % interval {low:.3f}-{high:.3f})  {verdict}"
            print(
                f"  {workload:>9} on/off, {what}: {ratio[workload]:.3f}{mark}  "
                f"(pairs {min(each[workload]):.3f}-{max(each[workload]):.3f}: "
                + ", ".join(f"{r:.3f}" for r in each[workload])
                + ")"
            )
    # Every request measured is a row, and the warm-ups add theirs: fewer rows means some were dropped.
    print(f"  audit rows written while on: {rows_on} (tools/call requests measured: {measured_on})")
    if drained_rows:
        print(
            f"  of them written by the beat's drain after the run: {drained_rows}, "
            f"{drain_seconds / drained_rows * 1e6:.1f} µs of its CPU a row (not a serving process's)"
        )
    summary = {
        "concurrency": args.concurrency,
        "rates": rates,
        "median": median,
        "pair_ratios": pairs,
        "ratios": ratios,
        "requests_per_cpu_second": per_cpu,
        "p99_ms": p99,
        "cpu_pair_ratios": cpu_pairs,
        "cpu_ratios": cpu_ratios,
        "together": args.together,
        "control": args.control,
        "figure": figure,
        "interval": interval,
        "target_on_vs_off": MIN_ON_VS_OFF,
        "audit_rows_on": rows_on,
        "requests_measured_on": measured_on,
        "drained_rows": drained_rows,
        "drain_cpu_seconds": drain_seconds,
    }
    print("BENCH_RESULT " + json.dumps(summary), flush=True)
    if not args.control and rows_on < measured_on:
        raise SystemExit(f"{measured_on - rows_on} audit rows dropped: the 'on' figure measured less than auditing")


if __name__ == "__main__":
    main()
