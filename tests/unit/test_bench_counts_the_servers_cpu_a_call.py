"""`bench/run` prints, beside each rate, the CPU the server's process spent a call and how busy its
core was (`bench.bench.with_server_cpu`, read from ``/proc/<pid>/stat``): at concurrency 1 that
tells a server waiting on something (its client, Redis) from one whose own work sets the pace.

A real process stands in for the server: it burns a known amount of CPU while the measured run
lasts, and the figures must come out of its counters, not the caller's.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from bench.bench import Server, with_server_cpu

BURN_SECONDS = 0.3
CALLS = 10
CHILD = f"""
import sys, time
print("ready", flush=True)
sys.stdin.readline()
start = time.process_time()
while time.process_time() - start < {BURN_SECONDS}:
    pass
print("done", flush=True)
sys.stdin.readline()
"""


def test_the_cpu_a_call_is_the_servers_over_the_calls(tmp_path: Path) -> None:
    process = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    stdin, stdout = process.stdin, process.stdout
    assert stdin is not None and stdout is not None
    server = Server("stand-in", [], {}, "", "", None, tmp_path / "log", process=process)
    try:
        assert stdout.readline() == b"ready\n"  # its start-up is not part of the run

        def run(_server: Server, _concurrency: int, _duration: float, _cpu: str | None) -> dict[str, Any]:
            started = time.monotonic()
            stdin.write(b"burn\n")
            stdin.flush()
            assert stdout.readline() == b"done\n"
            return {"calls": CALLS, "duration_s": time.monotonic() - started}

        measured = with_server_cpu(run, server, 1, 0.0, None)
    finally:
        process.kill()
        process.wait()

    # The burn over the calls, give or take a tick or two of the kernel's accounting (10 ms at 100 Hz).
    assert measured["server_cpu_us_per_call"] == pytest.approx(BURN_SECONDS / CALLS * 1e6, abs=5_000)
    assert 0 <= measured["server_sys_us_per_call"] < measured["server_cpu_us_per_call"]
    # Busy for as long as it burnt, and never more than the whole run.
    assert 0.2 < measured["server_busy"] <= 1.05
