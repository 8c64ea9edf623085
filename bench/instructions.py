"""What the tool-call audit log costs a call, counted in instructions: the figure the machine's noise
does not move (issue 28 item 3, beside `bench/audit.py`'s rates).

    BENCH_SCRIPT=bench/instructions.py bench/run     # ~8 min: 8 runs under valgrind, one per core at a time
    MCPSITE_DATABASE_URL=<pg> MCPSITE_REDIS_URL=<redis> .venv/bin/python bench/instructions.py --calls 200,700

On this 2-core machine, shared with other work, the rates of two runs of one server swing by up to
a sixth within a minute (`bench/audit.py` prints each run), while the audit costs ~5 % of a plain
call: a rate ratio near 0.95 passes or fails by chance. The instructions a call executes do not
depend on what else runs. So: `bench/inproc.py` (the ASGI application in process, PostgreSQL as
deployed when ``MCPSITE_DATABASE_URL`` is set, the writer thread writing its rows) runs under
valgrind's callgrind, once with few calls and once with more, with the audit off
(``MCPSITE_AUDIT=0``) and on; the difference between the two counts, over the difference in calls,
is what one call costs, the process's start-up cancelled out. Nothing runs by the clock meanwhile
(`UNTIMED`; Redis as deployed, so no embedded beat): a periodic job's passes would make the count
depend on how long the run took, that is on the machine's load. The rows are written in one batch
at shutdown (a busy server writes batches of ``MCPSITE_AUDIT_BATCH_SIZE``, 2,000). For the two-round call, the
``retry`` kind: each of its calls is a round 1 and its retry (two audit rows).

Printed: instructions per call off and on, and off / on, which is the rate ratio a server whose
core is saturated would show (the same work per instruction; the HTTP parsing, which the audit
does not touch, is left out, so the ratio is a little lower than over HTTP). Instructions are not
time: a cache miss costs more than an add. It is the figure to compare changes by; `bench/audit.py`
is the one the target is read from.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
KINDS = {"plain": "plain", "two-round": "retry"}
CONFIGS = {"off": "0", "on": "1"}
REFS = re.compile(r"I\s+refs:\s+([\d,]+)")
UNTIMED = {
    # Nothing that runs by the clock: under valgrind a run lasts minutes, longer the busier the
    # machine, and each pass of a periodic job (the poll's key-ring reload, a token's re-verification
    # when its cache entry lapses, the embedded beat) would add its instructions to the count.
    # The rows are written in one batch, at shutdown, not every FLUSH_SECONDS in batches of a few
    # dozen rows (a batch's own cost spread over few rows); a busy server's batches hold thousands.
    "MCPSITE_AUDIT_FLUSH_SECONDS": "3600",
    "MCPSITE_POLL_SECONDS": "3600",
    "MCPSITE_TOKEN_CACHE_SECONDS": "3600",
}


def instructions(config: str, kind: str, calls: int, redis_db: int) -> int:
    """Instructions the whole `bench/inproc.py` process executed for `calls` calls of `kind`, with
    a Redis database of its own (the channel layer's groups live in it: another run's start-up
    publishes events, a new token's among them, that this one would otherwise handle)."""
    redis = urlsplit(os.environ["MCPSITE_REDIS_URL"])._replace(path=f"/{redis_db}").geturl()
    env = {**os.environ, "MCPSITE_AUDIT": CONFIGS[config], "MCPSITE_REDIS_URL": redis, **UNTIMED}
    argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable]
    argv += [str(ROOT / "bench" / "inproc.py"), "--calls", str(calls), "--only", KINDS[kind]]
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    found = REFS.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(
            f"{config} {kind} {calls}: exit {done.returncode}\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    return int(found.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", default="200,700", help="the two call counts, fewer first")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is missing: apt-get install valgrind")
    if not os.environ.get("MCPSITE_REDIS_URL"):
        # Without a broker the embedded beat runs in the process, every few seconds (`bench/run` sets it).
        raise SystemExit("MCPSITE_REDIS_URL is not set: the embedded beat would run during the count")
    few, many = (int(n) for n in args.calls.split(","))
    # Once alone first: each run migrates and seeds the site (`bench/inproc.py`), and runs at once
    # would race to create the same rows.
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "inproc.py"), "--calls", "1", "--only", "plain"],
        check=True,
        capture_output=True,
    )
    runs = [(config, kind, n) for kind in KINDS for config in CONFIGS for n in (few, many)]

    def count(db: int) -> int:  # run `db` gets Redis database `db` (1, 2, ...)
        config, kind, calls = runs[db - 1]
        return instructions(config, kind, calls, db)

    with ThreadPoolExecutor(args.jobs) as pool:
        counted = dict(zip(runs, pool.map(count, range(1, len(runs) + 1)), strict=True))
    per_call = {
        kind: {config: (counted[config, kind, many] - counted[config, kind, few]) / (many - few) for config in CONFIGS}
        for kind in KINDS
    }
    print(f"\ninstructions per call, audit off and on ({few} and {many} calls a run, under callgrind)")
    for kind, each in per_call.items():
        cost = each["on"] - each["off"]
        print(
            f"  {kind:>9}: off {each['off'] / 1000:8.1f}k, on {each['on'] / 1000:8.1f}k, "
            f"the audit {cost / 1000:+6.1f}k ({cost / each['off']:+.1%}); off/on {each['off'] / each['on']:.3f}"
        )
    print("BENCH_RESULT " + json.dumps({"per_call": per_call, "calls": [few, many]}), flush=True)


if __name__ == "__main__":
    main()
