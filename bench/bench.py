"""The benchmark driver (run it through `bench/run`, which prepares PostgreSQL, Redis and the venv).

Servers (each started alone, driven, stopped; the order rotates every repetition so drift and
other load on the machine fall on all of them alike):

- ours:    `python -m mcp_server.serve` (uvicorn as deployed), tenant endpoint, DOT token + the database key ring;
- bare:    `python -m mcp_server.serve --app bench.bare_app:app` (the same server), in-memory token check, the
           SDK's own AES-GCM codec: the floor of our stack;
- peer:    django-mcpz under gunicorn gthread, with the same in-memory token check as `bare`
           (its best case, and the pairing the targets use);
- peer-db: django-mcpz with its own bearer-token app (a query per call): what its docs set up.
           Reported, not a target.

Parts: 1. plain call (wrk), 2. two-round call (wrk, bench/calls.lua), 3. codec (bench/codec.py),
4. URL-mode completion latency (bench/completion.py: two processes of ours, webhook to one, the
waiting client on the other), 5. scale (bench/scale.py: 100,000 pending elicitations, the retry
round's lookup and the admin list), 6. tenants (bench/tenants.py: start-up and RSS with 0, 1,000 and
100,000 tenants, a cold tenant's first call, round-robin over 1,000 tenants against one; and
bench/fairness.py: a 0-second task at one tenant while another runs its cap of long tasks,
embedded and deployed).
`--parts 4,5` (numbers or names) runs only some.
"""

from __future__ import annotations

import argparse
import datetime
import http.client
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.latency import refuse_negative  # noqa: E402

BENCH = ROOT / "bench"
RESULTS = BENCH / "results"
PY = sys.executable
VENV_BIN = Path(PY).parent
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")  # the unit of /proc/<pid>/stat's CPU times

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
PLAIN_BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}, "_meta": META},
    }
)
PLAIN_EXPECT = "echo: hi"
# The two-round call: `greet` asks a form question (its key, from round 1), the retry answers it.
FORM_META = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}
GREET = {"name": "greet", "arguments": {"name": "ann"}}
ROUND_1_BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**GREET, "_meta": FORM_META}})
RETRY_BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            **GREET,
            "inputResponses": {"%s": {"action": "accept", "content": {"colour": "blue"}}},
            "requestState": "%s",
            "_meta": FORM_META,
        },
    }
)
TWO_ROUND_EXPECT = "hello ann in blue"
SERVERS = ("ours", "bare", "peer", "peer-db")
TARGET_PEER = "peer"

# Targets (issue 7): ours vs bare and vs the peer, per scenario and concurrency; codec vs the SDK's.
MIN_TPUT_VS_BARE = 0.9
MAX_P99_VS_BARE = 1.2
MIN_TPUT_VS_PEER = 1.0
MAX_CODEC_VS_SDK = 1.1
# Parts 4-5 (absolute): webhook -> waiting client on loopback; 100,000 pending elicitations.
MAX_COMPLETION_P99_MS = 50.0
MAX_RETRY_LOOKUP_MS = 2.0
MAX_ADMIN_LIST_MS = 300.0
ADMIN_TARGET_PAGES = ("all", "pending", "pending payments", "one tenant, last day")
PARTS = {"1": "plain", "2": "two-round", "3": "codec", "4": "completion", "5": "scale", "6": "tenants"}
# Part 6 (issue 26): start-up at 100,000 tenants against 0, RSS with 1,000 of them called above the
# empty process, a cold tenant's first call, round-robin over 1,000 tenants against one.
MAX_STARTUP_VS_EMPTY = 1.5
MAX_RSS_ABOVE_EMPTY_MB = 300.0
MAX_COLD_FIRST_CALL_P99_MS = 50.0
MIN_ROUND_ROBIN_VS_ONE = 0.9
# ... and a 0-second task at one tenant done while another runs its cap of long tasks (every sample).
MAX_FAIRNESS_MS = 2000.0


def log(message: str) -> None:
    print(message, flush=True)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def last_line(output: str) -> str:
    return [line for line in output.splitlines() if line.strip()][-1].strip()


def mcp_post(
    url: str, token: str, tool: str, params: dict[str, Any], *, form: bool = False
) -> tuple[int, dict[str, Any]]:
    """One raw 2026-07-28 tools/call (stdlib only), for start-up probes and verification."""
    meta = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}} if form else {}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**params, "_meta": meta}})
    host_port, _, path = url.removeprefix("http://").partition("/")
    host, _, port = host_port.partition(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request(
            "POST",
            "/" + path,
            body=body,
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "tools/call",
                "Mcp-Name": tool,
                "Authorization": f"Bearer {token}",
            },
        )
        response = conn.getresponse()
        payload = response.read()
    finally:
        conn.close()
    try:
        return response.status, json.loads(payload)
    except ValueError:
        return response.status, {"raw": payload.decode(errors="replace")[:300]}


@dataclass
class Server:
    name: str
    argv: list[str]
    env: dict[str, str]
    url: str
    token: str
    cpu: str | None
    log_path: Path
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def start(self) -> None:
        prefix = ["taskset", "-c", self.cpu] if self.cpu else []
        with self.log_path.open("ab") as out:
            # Own process group, so stop() ends exactly what this started (gunicorn's worker too).
            self.process = subprocess.Popen(
                prefix + self.argv, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited early; log: {self.log_path}\n{self.tail()}")
            try:
                status, _ = mcp_post(self.url, self.token, "echo", {"name": "echo", "arguments": {"text": "hi"}})
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"{self.name} did not answer within 60 s; log: {self.log_path}\n{self.tail()}")

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.process = None

    def pids(self) -> list[int]:
        """The process that serves requests (gunicorn: its one worker)."""
        assert self.process is not None
        children = subprocess.run(
            ["pgrep", "-P", str(self.process.pid)], capture_output=True, text=True, check=False
        ).stdout.split()
        # `taskset` execs the server, so the Popen pid is the server (uvicorn) or gunicorn's master.
        return [int(p) for p in children] or [self.process.pid]

    def tail(self, lines: int = 30) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


# --- preparing the servers -----------------------------------------------------------------


def prepare(args: argparse.Namespace, workdir: Path) -> dict[str, Server]:
    env = dict(os.environ)
    ports = {name: free_port() for name in SERVERS}
    cpu = None if args.no_pin else args.server_cpu

    # ours: tenant `bench` (toolset `bench`), its member, the key ring, a token for this port.
    ours_root = f"http://127.0.0.1:{ports['ours']}"
    subprocess.run([PY, "bench/seed.py"], cwd=ROOT, env=env, check=True)
    minted = subprocess.run(
        [PY, "manage.py", "mcp_token", "--tenant", "bench", "--user", "bench", "--site-root", ours_root],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    ours_token = last_line(minted.stdout)

    # peer: a user and one of its bearer tokens (the memory variant is handed the same token).
    peer_manage = [PY, "-m", "bench.peer_site.manage"]
    subprocess.run(
        [*peer_manage, "shell", "-v0", "-c", "from django.contrib.auth.models import User; "
         "User.objects.get_or_create(username='bench')"],
        cwd=ROOT, env=env, check=True, capture_output=True,
    )  # fmt: skip
    created = subprocess.run(
        [*peer_manage, "mcpz", "bearer-tokens", "create", "bench", "--user", "bench"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    peer_token = last_line(created.stdout)
    bare_token = os.urandom(24).hex()
    state_key = os.urandom(32).hex()

    # Both through the deployed launcher: the same uvicorn options (head limit, no forwarded
    # headers, no access log), one process each.
    serve = [PY, "-m", "mcp_server.serve", "--host", "127.0.0.1"]
    gunicorn = [
        str(VENV_BIN / "gunicorn"),
        "bench.peer_site.wsgi:application",
        "--worker-class",
        "gthread",
        "--workers",
        "1",
        "--threads",
        str(args.peer_threads),
        "--no-control-socket",
    ]
    servers = {
        "ours": Server(
            "ours",
            [*serve, "--port", str(ports["ours"])],
            {**env, "PORT": str(ports["ours"]), "MCPSITE_SITE_ROOT": ours_root},
            f"{ours_root}/t/bench/mcp",
            ours_token,
            cpu,
            workdir / "ours.log",
        ),
        "bare": Server(
            "bare",
            [*serve, "--app", "bench.bare_app:app", "--port", str(ports["bare"])],
            {**env, "BENCH_PORT": str(ports["bare"]), "BENCH_TOKEN": bare_token, "BENCH_STATE_KEY": state_key},
            f"http://127.0.0.1:{ports['bare']}/mcp",
            bare_token,
            cpu,
            workdir / "bare.log",
        ),
        "peer": Server(
            "peer",
            [*gunicorn, "--bind", f"127.0.0.1:{ports['peer']}"],
            {**env, "BENCH_PEER_AUTH": "memory", "BENCH_TOKEN": peer_token},
            f"http://127.0.0.1:{ports['peer']}/mcp",
            peer_token,
            cpu,
            workdir / "peer.log",
        ),
        "peer-db": Server(
            "peer-db",
            [*gunicorn, "--bind", f"127.0.0.1:{ports['peer-db']}"],
            {**env, "BENCH_PEER_AUTH": "db", "BENCH_TOKEN": ""},
            f"http://127.0.0.1:{ports['peer-db']}/mcp",
            peer_token,
            cpu,
            workdir / "peer-db.log",
        ),
    }
    return {name: servers[name] for name in args.servers}


def verify(server: Server) -> bytes | None:
    """Each server answers both scenarios correctly before it is measured (else the run fails).
    Returns the plaintext of the bare SDK's round-1 requestState (the codec benchmark's payload)."""
    status, reply = mcp_post(server.url, server.token, "echo", {"name": "echo", "arguments": {"text": "hi"}})
    text = reply.get("result", {}).get("content", [{}])[0].get("text")
    if status != 200 or text != PLAIN_EXPECT:
        raise RuntimeError(f"{server.name}: plain call answered {status} {reply}")
    params = {"name": "greet", "arguments": {"name": "ann"}}
    status, first = mcp_post(server.url, server.token, "greet", params, form=True)
    result = first.get("result", {})
    if status != 200 or result.get("resultType") != "input_required":
        raise RuntimeError(f"{server.name}: round 1 answered {status} {first}")
    (key,) = result["inputRequests"]
    retry = {**params, "inputResponses": {key: {"action": "accept", "content": {"colour": "blue"}}}}
    status, final = mcp_post(
        server.url, server.token, "greet", {**retry, "requestState": result["requestState"]}, form=True
    )
    text = final.get("result", {}).get("content", [{}])[0].get("text")
    if status != 200 or text != "hello ann in blue":
        raise RuntimeError(f"{server.name}: retry answered {status} {final}")
    if server.name == "bare":
        from mcp.server.request_state import AESGCMRequestStateCodec

        codec = AESGCMRequestStateCodec([server.env["BENCH_STATE_KEY"]])
        return codec.unseal(result["requestState"])
    return None


# --- measuring --------------------------------------------------------------------------------


def _wrk(
    server: Server, script: str, env: dict[str, str], concurrency: int, duration: float, load_cpu: str | None
) -> dict[str, Any]:
    """Run wrk with one of our Lua scripts; its ``BENCH_RESULT`` line, every answer checked."""
    prefix = ["taskset", "-c", load_cpu] if load_cpu else []
    argv = [
        *prefix,
        "wrk",
        "-t1",
        f"-c{concurrency}",
        f"-d{duration:g}s",
        "--timeout",
        "10s",
        "--latency",
        "-s",
        str(BENCH / script),
        server.url,
    ]
    out = subprocess.run(
        argv, env={**os.environ, "BENCH_TOKEN": server.token, **env}, capture_output=True, text=True, check=True
    ).stdout
    line = next((ln for ln in out.splitlines() if ln.startswith("BENCH_RESULT ")), None)
    if line is None:
        raise RuntimeError(f"wrk printed no result:\n{out}")
    raw: dict[str, Any] = json.loads(line.removeprefix("BENCH_RESULT "))
    errors = sum(raw["errors"].values()) + raw["bad"]
    if errors:
        raise RuntimeError(f"{server.name} {script} c={concurrency}: {errors} bad responses or socket errors: {raw}")
    return raw


def cpu_times(stat: Path) -> tuple[float, float]:
    """The CPU seconds (user, system) a ``/proc/<pid>/stat`` or ``/proc/<pid>/task/<tid>/stat``
    file reports."""
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) / CLOCK_TICKS, int(fields[12]) / CLOCK_TICKS


def server_cpu(server: Server) -> tuple[float, float]:
    """CPU seconds the serving process has used so far: (user, system)."""
    user = system = 0.0
    for pid in server.pids():
        pid_user, pid_system = cpu_times(Path(f"/proc/{pid}/stat"))
        user, system = user + pid_user, system + pid_system
    return user, system


Workload = Callable[[Server, int, float, str | None], dict[str, Any]]
"""A measured run of one scenario: (server, concurrency, seconds, the load's CPU) -> wrk's figures."""


def with_server_cpu(
    run: Workload,
    server: Server,
    concurrency: int,
    duration: float,
    load_cpu: str | None,
) -> dict[str, Any]:
    """`run`'s measurement, with what the server's core spent on it: CPU a call (user and system)
    and the share of the run's time it was busy (near 1 when the server, not its client, sets the
    pace)."""
    user0, system0 = server_cpu(server)
    result = run(server, concurrency, duration, load_cpu)
    user1, system1 = server_cpu(server)
    calls = result["calls"]
    used = (user1 - user0) + (system1 - system0)
    result["server_cpu_us_per_call"] = used / calls * 1e6
    result["server_sys_us_per_call"] = (system1 - system0) / calls * 1e6
    result["server_busy"] = used / result["duration_s"]
    return result


def _measured(raw: dict[str, Any], done: int) -> dict[str, Any]:
    return {
        "calls": done,
        "duration_s": raw["duration_us"] / 1e6,
        "throughput": done / (raw["duration_us"] / 1e6),
        "p50_ms": raw["latency_us"]["50"] / 1000,
        "p99_ms": raw["latency_us"]["99"] / 1000,
        "percentiles_ms": {p: v / 1000 for p, v in raw["latency_us"].items()},
        "requests": raw["requests"],
    }


def wrk_plain(server: Server, concurrency: int, duration: float, load_cpu: str | None) -> dict[str, Any]:
    env = {"BENCH_BODY": PLAIN_BODY, "BENCH_TOOL": "echo", "BENCH_EXPECT": PLAIN_EXPECT}
    raw = _wrk(server, "calls.lua", env, concurrency, duration, load_cpu)
    if raw["calls"] != raw["requests"]:
        raise RuntimeError(f"{server.name} plain c={concurrency}: not every request was a call: {raw}")
    return _measured(raw, raw["calls"])


def two_round(server: Server, concurrency: int, duration: float, load_cpu: str | None) -> dict[str, Any]:
    """The two-round call (`greet`), driven by wrk (`calls.lua`): the throughput is completed
    calls (a round 1 and its retry) a second; the latencies are per request (per round)."""
    env = {
        "BENCH_BODY": ROUND_1_BODY,
        "BENCH_RETRY": RETRY_BODY,
        "BENCH_TOOL": "greet",
        "BENCH_EXPECT": TWO_ROUND_EXPECT,
    }
    raw = _wrk(server, "calls.lua", env, concurrency, duration, load_cpu)
    if not raw["calls"]:
        raise RuntimeError(f"{server.name} two-round c={concurrency}: no call completed: {raw}")
    measured = _measured(raw, raw["calls"])
    # Each call is two requests; a round 1 left unanswered when the run ended is not a call.
    measured["requests"] = raw["calls"] * 2
    return measured


WORKLOADS: dict[str, Workload] = {"plain": wrk_plain, "two-round": two_round}


def profile(server: Server, args: argparse.Namespace, stamp: str, scenarios: list[str]) -> None:
    """py-spy record of the serving process during a run of each scenario measured (plain, two-round)
    at the highest concurrency."""
    pid = server.pids()[0]
    RESULTS.mkdir(exist_ok=True)
    for scenario in scenarios:
        base = RESULTS / f"profile-{server.name}-{scenario}-{stamp}"
        spy = subprocess.Popen(
            [str(VENV_BIN / "py-spy"), "record", "--pid", str(pid), "--rate", "250", "--duration",
             f"{args.duration:g}", "--format", "raw", "--output", f"{base}.txt", "--nonblocking"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        WORKLOADS[scenario](server, max(args.concurrency), args.duration, None if args.no_pin else args.load_cpu)
        spy.wait(timeout=60)
        log(
            f"  profile of {server.name}, {scenario}: {base}.txt "
            "(collapsed stacks; flamegraph.pl or speedscope read it)"
        )


def ours_pair(args: argparse.Namespace, workdir: Path) -> tuple[Server, Server, str]:
    """Parts 4-5: processes A (serves the MCP call) and B (receives the webhook) of ours, tenant
    `benchpay` (toolset `payments`), both in the deployed configuration; a token bound to A."""
    env = dict(os.environ)
    subprocess.run([PY, "bench/seed.py", "--payments"], cwd=ROOT, env=env, check=True)
    port_a, port_b = free_port(), free_port()
    root_a = f"http://127.0.0.1:{port_a}"
    minted = subprocess.run(
        [PY, "manage.py", "mcp_token", "--tenant", "benchpay", "--user", "bench", "--site-root", root_a],
        cwd=ROOT, env=env, check=True, capture_output=True, text=True,
    )  # fmt: skip
    token = last_line(minted.stdout)
    # Both behind the same public root, as two instances behind one proxy would be.
    env = {**env, "MCPSITE_SITE_ROOT": root_a, "MCPSITE_APPROVALS_HOLD_SECONDS": "20"}
    cpu = None if args.no_pin else args.server_cpu
    servers = []
    for name, port in (("ours-A", port_a), ("ours-B", port_b)):
        argv = [PY, "-m", "mcp_server.serve", "--host", "127.0.0.1", "--port", str(port)]
        url = f"http://127.0.0.1:{port}/t/benchpay/mcp"
        servers.append(Server(name, argv, {**env, "PORT": str(port)}, url, token, cpu, workdir / f"{name}.log"))
    return servers[0], servers[1], token


def stamp_now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")


def run_json(argv: list[str], cpu: str | None) -> dict[str, Any]:
    prefix = ["taskset", "-c", cpu] if cpu else []
    done = subprocess.run(prefix + argv, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:2])} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(last_line(done.stdout).removeprefix("BENCH_RESULT "))
    return result


def measure_completion_latency(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Part 4: the webhook's request starts (to B) -> the waiting client on A learns of it, over
    the Redis channel layer. `bench/completion.py` drives the samples, checks every response and
    reads both ends of each interval from its own clock (`bench/latency.py`)."""
    a, b, token = ours_pair(args, workdir)
    load_cpu = None if args.no_pin else args.load_cpu
    webhook = b.url.removesuffix("/t/benchpay/mcp") + "/approvals/webhooks/sandbox/"
    reps: dict[str, list[dict[str, Any]]] = {"modern": [], "legacy": []}
    load: dict[str, float] = {}
    a.start()
    b.start()
    spies: list[subprocess.Popen[bytes]] = []
    try:
        for server in (a, b):
            if server.name in args.profile.split(","):  # py-spy the first repetition
                out = RESULTS / f"profile-{server.name}-completion-{stamp_now()}.txt"
                spies.append(subprocess.Popen(
                    [str(VENV_BIN / "py-spy"), "record", "--pid", str(server.pids()[0]), "--rate", "1000",
                     "--format", "raw", "--output", str(out), "--nonblocking"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                ))  # fmt: skip
                log(f"  profile of {server.name} (part 4, first repetition): {out.relative_to(ROOT)}")
        for rep in range(args.completion_reps):
            for mode in ("modern", "legacy"):
                load[f"{rep}/{mode}"] = os.getloadavg()[0]
                result = run_json(
                    [PY, str(BENCH / "completion.py"), a.url, webhook, token, "--tenant", "benchpay",
                     "--mode", mode, "--samples", str(args.completion_samples)],
                    load_cpu,
                )  # fmt: skip
                refuse_negative(result["raw_latency_ms"], what=f"completion {mode}, rep {rep + 1}")
                refuse_negative(result["raw_webhook_ms"], what=f"webhook {mode}, rep {rep + 1}")
                reps[mode].append(result)
                r = result["latency_ms"]
                log(f"rep {rep + 1}/{args.completion_reps} completion {mode:<7} {result['samples']} samples  "
                    f"p50 {r['p50']:6.2f} ms  p99 {r['p99']:6.2f} ms  (max {r['max']:.2f}; webhook p50 "
                    f"{result['webhook_ms']['p50']:.2f}; before its response: "
                    f"{result['arrived_before_response']})")  # fmt: skip
            for spy in spies:
                spy.send_signal(signal.SIGINT)
                spy.wait(timeout=60)
            spies = []
    finally:
        for spy in spies:
            spy.kill()
        a.stop()
        b.stop()
    summary: dict[str, Any] = {}
    for mode, results in reps.items():
        pooled = [v for r in results for v in r["raw_latency_ms"]]
        round_trips = [v for r in results for v in r["raw_webhook_ms"]]
        summary[mode] = {
            "samples": len(pooled),
            "p50_ms": statistics.median(pooled),
            "p99_ms": percentile(pooled, 99),
            "max_ms": max(pooled),
            "per_rep_p50_ms": [r["latency_ms"]["p50"] for r in results],
            "per_rep_p99_ms": [r["latency_ms"]["p99"] for r in results],
            "webhook_p50_ms": statistics.median(round_trips),
            "webhook_p99_ms": percentile(round_trips, 99),
            "arrived_before_response": sum(r["arrived_before_response"] for r in results),
        }
    return {"reps": reps, "summary": summary, "load_average_1m": load,
            "pinning": None if args.no_pin else {"servers": args.server_cpu, "client": args.load_cpu}}  # fmt: skip


def measure_scale(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Part 5: 100,000 pending elicitations; the retry lookup in process, the admin list over
    HTTP against one server of ours (`bench/scale.py`)."""
    a, _, _ = ours_pair(args, workdir)
    a.start()
    try:
        root = a.url.removesuffix("/t/benchpay/mcp")
        result = run_json(
            [PY, str(BENCH / "scale.py"), "--rows", str(args.scale_rows), "--admin-url", root],
            None if args.no_pin else args.load_cpu,
        )
    finally:
        a.stop()
    lookup = result["lookup"]
    log(f"scale: {args.scale_rows} pending rows; retry lookup median {lookup['retry_lookup']['median_ms']:.3f} ms "
        f"(indexes {', '.join(i for p in lookup['plans']['retry_lookup'] for i in p['indexes'])})")  # fmt: skip
    for name, page in result.get("admin_http", {}).items():
        sql = result["admin_sql"][name]
        log(f"scale: admin list {name:<22} median {page['median_ms']:7.1f} ms  ({sql['queries']} queries, "
            f"{sql['sql_ms']:.1f} ms SQL; heaviest {sql['heaviest']['ms']:.1f} ms, indexes "
            f"{', '.join(sql['heaviest']['indexes']) or 'none'})")  # fmt: skip
    return result


def measure_tenants(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Part 6: `bench/tenants.py` seeds the tenants, starts and drives its own servers (pinned to
    the server CPU) and reads their RSS; this process and the client run on the load CPU."""
    argv = [PY, str(BENCH / "tenants.py"), "--logs", str(workdir), "--counts", args.tenants_counts,
            "--fairness-samples", str(args.tenants_fairness_samples)]  # fmt: skip
    if args.tenants_fairness_only:
        argv.append("--fairness-only")
    if not args.no_pin:
        argv += ["--server-cpu", args.server_cpu]
    result = run_json(argv, None if args.no_pin else args.load_cpu)
    for name in ("embedded", "deployed"):
        if (fair := result.get("fairness", {}).get(name)) is not None:
            busy = fair["busy_before"]
            log(f"tenants: fairness, {name}: a 0-second task at another tenant ({fair['samples']}): p50 "
                f"{fair['p50_ms']:.0f} ms, p99 {fair['p99_ms']:.0f} ms, max {fair['max_ms']:.0f} ms, while the "
                f"busy tenant ran {busy['running']} long tasks and {busy['waiting']} waited")  # fmt: skip
    for count, s in result["startup"].items():
        log(f"tenants: {int(count):>7,} in PostgreSQL: start-up {s['seconds']:.2f} s, RSS {s['rss_mb']:.0f} MB")
    if "cold_first_call_ms" not in result:
        return result
    cold = result["cold_first_call_ms"]
    log(f"tenants: first call of a cold tenant ({cold['samples']}): p50 {cold['p50']:.1f} ms, "
        f"p99 {cold['p99']:.1f} ms, max {cold['max']:.1f} ms")  # fmt: skip
    log(f"tenants: RSS with {result['rss_with_called_mb']['called']:,} called: "
        f"{result['rss_with_called_mb']['rss_mb']:.0f} MB")  # fmt: skip
    rate = result["call_rate"]
    log(f"tenants: echo calls/s (c={rate['concurrency']}, median of {len(rate['all']['one'])} alternating): one "
        f"tenant {rate['one']:.0f}, round-robin over {rate['tenants']:,} {rate['round_robin']:.0f}: "
        f"ratio {rate['ratio']:.2f}")  # fmt: skip
    return result


def tenants_targets(tenants: dict[str, Any] | None) -> list[dict[str, Any]]:
    if tenants is None:
        return []
    checks = []
    for name in ("embedded", "deployed"):
        if (fair := tenants.get("fairness", {}).get(name)) is not None:
            checks.append((f"fair {name}", f"0-s task by another tenant, max <= {MAX_FAIRNESS_MS / 1000:g} s",
                           fair["max_ms"], "ms", fair["max_ms"] <= MAX_FAIRNESS_MS))  # fmt: skip
    startup = tenants["startup"]
    if "0" not in startup or "call_rate" not in tenants:
        return [
            {"scenario": "tenants", "c": c, "target": target, "value": value, "unit": unit, "result": verdict(ok)}
            for c, target, value, unit, ok in checks
        ]
    empty, full = startup["0"], startup[max(startup, key=int)]
    above = tenants["rss_with_called_mb"]["rss_mb"] - empty["rss_mb"]
    checks += [
        ("startup", f"start-up at {int(max(startup, key=int)):,} <= {MAX_STARTUP_VS_EMPTY:g}x at 0",
         full["seconds"] / empty["seconds"], "x", full["seconds"] / empty["seconds"] <= MAX_STARTUP_VS_EMPTY),
        ("rss", f"RSS with 1,000 called <= {MAX_RSS_ABOVE_EMPTY_MB:g} MB above empty", above, "MB",
         above <= MAX_RSS_ABOVE_EMPTY_MB),
        ("cold call", f"p99 <= {MAX_COLD_FIRST_CALL_P99_MS:g} ms", tenants["cold_first_call_ms"]["p99"], "ms",
         tenants["cold_first_call_ms"]["p99"] <= MAX_COLD_FIRST_CALL_P99_MS),
        ("round-robin", f"1,000 tenants >= {MIN_ROUND_ROBIN_VS_ONE:g}x one", tenants["call_rate"]["ratio"], "x",
         tenants["call_rate"]["ratio"] >= MIN_ROUND_ROBIN_VS_ONE),
    ]  # fmt: skip
    return [
        {"scenario": "tenants", "c": c, "target": target, "value": value, "unit": unit, "result": verdict(ok)}
        for c, target, value, unit, ok in checks
    ]


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p99 of 150 samples is the 149th smallest)."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-p * len(ordered) // 100))))
    return ordered[rank - 1]


# --- summarising ------------------------------------------------------------------------------


def spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def summarise(raw: dict[str, dict[str, dict[str, list[dict[str, Any]]]]]) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for scenario, by_server in raw.items():
        summary[scenario] = {}
        for server, by_c in by_server.items():
            summary[scenario][server] = {}
            for c, reps in by_c.items():
                percentiles = {
                    p: statistics.median(r["percentiles_ms"][p] for r in reps) for p in reps[0]["percentiles_ms"]
                }
                summary[scenario][server][c] = {
                    "throughput": spread([r["throughput"] for r in reps]),
                    "p50_ms": spread([r["p50_ms"] for r in reps]),
                    "p99_ms": spread([r["p99_ms"] for r in reps]),
                    "percentiles_ms": percentiles,
                    "server_cpu_us_per_call": spread([r["server_cpu_us_per_call"] for r in reps]),
                    "server_sys_us_per_call": spread([r["server_sys_us_per_call"] for r in reps]),
                    "server_busy": spread([r["server_busy"] for r in reps]),
                }
    return summary


def verdict(ok: bool) -> str:
    return "pass" if ok else "short of target"


def targets(summary: dict[str, Any], codec: dict[str, Any] | None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for scenario, by_server in summary.items():
        ours = by_server.get("ours")
        if ours is None:
            continue
        for c, m in ours.items():
            bare = by_server.get("bare", {}).get(c)
            peer = by_server.get(TARGET_PEER, {}).get(c)
            if bare is not None:
                ratio = m["throughput"]["median"] / bare["throughput"]["median"]
                rows.append({"scenario": scenario, "c": c, "target": f"throughput >= {MIN_TPUT_VS_BARE}x bare",
                             "ratio": ratio, "result": verdict(ratio >= MIN_TPUT_VS_BARE)})  # fmt: skip
                ratio = m["p99_ms"]["median"] / bare["p99_ms"]["median"]
                rows.append({"scenario": scenario, "c": c, "target": f"p99 <= {MAX_P99_VS_BARE}x bare",
                             "ratio": ratio, "result": verdict(ratio <= MAX_P99_VS_BARE)})  # fmt: skip
            if peer is not None:
                ratio = m["throughput"]["median"] / peer["throughput"]["median"]
                rows.append({"scenario": scenario, "c": c, "target": f"throughput >= {MIN_TPUT_VS_PEER}x peer",
                             "ratio": ratio, "result": verdict(ratio >= MIN_TPUT_VS_PEER)})  # fmt: skip
    if codec is not None:
        ratio = statistics.median(codec["us_per_round"]["ours"]) / statistics.median(codec["us_per_round"]["sdk"])
        rows.append({"scenario": "codec", "c": "-", "target": f"time <= {MAX_CODEC_VS_SDK}x SDK codec",
                     "ratio": ratio, "result": verdict(ratio <= MAX_CODEC_VS_SDK)})  # fmt: skip
    return rows


def later_targets(completion: dict[str, Any] | None, scale: dict[str, Any] | None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    if completion is not None:
        for mode, m in completion["summary"].items():
            p99 = m["p99_ms"]
            target = f"p99 <= {MAX_COMPLETION_P99_MS:g} ms"
            rows.append({"scenario": "completion", "c": mode, "target": target, "value": p99, "unit": "ms",
                         "result": verdict(p99 <= MAX_COMPLETION_P99_MS)})  # fmt: skip
    if scale is not None:
        median = scale["lookup"]["retry_lookup"]["median_ms"]
        rows.append({"scenario": "scale", "c": "lookup", "target": f"retry lookup <= {MAX_RETRY_LOOKUP_MS:g} ms median",
                     "value": median, "unit": "ms", "result": verdict(median <= MAX_RETRY_LOOKUP_MS)})  # fmt: skip
        for name, page in scale.get("admin_http", {}).items():
            if name not in ADMIN_TARGET_PAGES:
                continue
            target = f"admin list ({name}) <= {MAX_ADMIN_LIST_MS:g} ms"
            rows.append({"scenario": "scale", "c": "admin", "target": target, "value": page["median_ms"],
                         "unit": "ms", "result": verdict(page["median_ms"] <= MAX_ADMIN_LIST_MS)})  # fmt: skip
    return rows


def fmt(s: dict[str, float], digits: int = 0) -> str:
    return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}-{s['max']:.{digits}f})"


def print_table(
    summary: dict[str, Any],
    codec: dict[str, Any] | None,
    rows: list[dict[str, Any]],
    completion: dict[str, Any] | None = None,
    scale: dict[str, Any] | None = None,
) -> str:
    lines: list[str] = []
    for scenario, by_server in summary.items():
        lines.append(f"\n{scenario}: median (min-max) over repetitions")
        lines.append(f"{'server':<8} {'c':>3}  {'calls/s':>22}  {'p50 ms':>20}  {'p99 ms':>22}  "
                     f"{'ours/bare tput':>14} {'ours/bare p99':>13} {'ours/peer tput':>14}  "
                     f"{'server µs CPU a call (sys)':>26} {'busy':>5}")  # fmt: skip
        for server, by_c in by_server.items():
            for c, m in by_c.items():
                ratios = ""
                if server == "ours":
                    bare = by_server.get("bare", {}).get(c)
                    peer = by_server.get(TARGET_PEER, {}).get(c)
                    tb = f"{m['throughput']['median'] / bare['throughput']['median']:.2f}" if bare else "-"
                    pb = f"{m['p99_ms']['median'] / bare['p99_ms']['median']:.2f}" if bare else "-"
                    tp = f"{m['throughput']['median'] / peer['throughput']['median']:.2f}" if peer else "-"
                    ratios = f"{tb:>14} {pb:>13} {tp:>14}"
                else:
                    ratios = f"{'':>14} {'':>13} {'':>14}"
                cpu = f"{m['server_cpu_us_per_call']['median']:.0f} ({m['server_sys_us_per_call']['median']:.0f})"
                lines.append(f"{server:<8} {c:>3}  {fmt(m['throughput']):>22}  {fmt(m['p50_ms'], 2):>20}  "
                             f"{fmt(m['p99_ms'], 2):>22}  {ratios}  {cpu:>26} "
                             f"{m['server_busy']['median']:>5.0%}")  # fmt: skip
    if codec is not None:
        lines.append(f"\ncodec: µs per round (seal + unseal, {codec['payload_bytes']}-byte payload), median (min-max)")
        for name in ("ours", "sdk"):
            lines.append(f"{name:<8} {fmt(spread(codec['us_per_round'][name]), 2)}")
    if completion is not None:
        loads = completion["load_average_1m"].values()
        lines.append("\ncompletion latency, ms from the webhook's request start to the waiting client (all reps "
                     f"pooled; 1-min load {min(loads):.2f}-{max(loads):.2f})")  # fmt: skip
        for mode, m in completion["summary"].items():
            per_rep = ", ".join(f"{v:.2f}" for v in m["per_rep_p99_ms"])
            lines.append(f"{mode:<8} n={m['samples']:<4} p50 {m['p50_ms']:6.2f}  p99 {m['p99_ms']:6.2f}  "
                         f"max {m['max_ms']:6.2f}  (p99 per rep: {per_rep}; webhook round trip p50 "
                         f"{m['webhook_p50_ms']:.2f} p99 {m['webhook_p99_ms']:.2f}; reached the client before "
                         f"the webhook's response: {m['arrived_before_response']}/{m['samples']})")  # fmt: skip
    if scale is not None:
        lookup = scale["lookup"]
        lines.append(f"\nscale: {scale.get('seed', {}).get('rows', '?')} pending elicitations")
        for name in ("retry_lookup", "reload", "repeat_call_lookup"):
            indexes = ", ".join(i for p in lookup["plans"][name] for i in p["indexes"]) or "none"
            lines.append(f"{name:<20} median {lookup[name]['median_ms']:6.3f} ms  p99 {lookup[name]['p99_ms']:6.3f} ms"
                         f"  index: {indexes}")  # fmt: skip
        for name, page in scale.get("admin_http", {}).items():
            sql = scale["admin_sql"][name]
            heaviest, rows_query = sql["heaviest"], sql["list_query"]
            lines.append(f"admin {name:<22} median {page['median_ms']:7.1f} ms "
                         f"({page['min_ms']:.1f}-{page['max_ms']:.1f})  {sql['queries']} queries "
                         f"{sql['sql_ms']:.0f} ms; rows {rows_query['ms']:.0f} ms via "
                         f"{', '.join(rows_query['indexes']) or 'seq scan'}; heaviest {heaviest['ms']:.0f} ms "
                         f"{heaviest['sql'][7:22]}...")  # fmt: skip
    lines.append("\ntargets")
    for row in rows:
        figure = f"{row['ratio']:6.2f}" if "ratio" in row else f"{row['value']:6.2f} {row['unit']}"
        lines.append(f"{row['scenario']:<10} c={row['c']!s:<6} {row['target']:<40} {figure}  {row['result']}")
    text = "\n".join(lines)
    log(text)
    return text


def draw(summary: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import ScalarFormatter

    scenarios = list(summary)
    concurrencies = sorted({int(c) for s in summary.values() for by_c in s.values() for c in by_c})
    size = (4.2 * len(concurrencies), 3.6 * len(scenarios))
    fig, axes = plt.subplots(len(scenarios), len(concurrencies), figsize=size, squeeze=False)
    colours = {"ours": "tab:blue", "bare": "tab:orange", "peer": "tab:green", "peer-db": "tab:gray"}
    for i, scenario in enumerate(scenarios):
        for j, c in enumerate(concurrencies):
            ax = axes[i][j]
            for server, by_c in summary[scenario].items():
                m = by_c.get(str(c))
                if m is None:
                    continue
                points = sorted((float(p), v) for p, v in m["percentiles_ms"].items())
                xs = [100 - p for p, _ in points]  # distance from 100 %, so the tail spreads out
                ax.plot(xs, [v for _, v in points], marker="o", label=server, color=colours.get(server))
            ax.set_xscale("log")
            ax.invert_xaxis()
            ax.set_xticks([50, 25, 10, 5, 1, 0.1])
            ax.set_xticklabels(["p50", "p75", "p90", "p95", "p99", "p99.9"])
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(ScalarFormatter())
            ax.set_title(f"{scenario}, c={c}")
            ax.set_ylabel("latency (ms)")
            ax.grid(True, which="both", alpha=0.3)
            if i == 0 and j == 0:
                ax.legend()
    fig.suptitle("Latency percentiles (median over repetitions; lower is better)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def machine() -> dict[str, Any]:
    cpu = ""
    try:
        cpu = next(
            ln.split(":", 1)[1].strip()
            for ln in Path("/proc/cpuinfo").read_text().splitlines()
            if ln.startswith("model name")
        )
    except (OSError, StopIteration):
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "python": platform.python_version(),
        "kernel": platform.release(),
    }


# --- main ---------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=3, help="repetitions (>= 3)")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per measurement")
    parser.add_argument("--concurrency", type=lambda s: [int(x) for x in s.split(",")], default=[1, 16, 64])
    parser.add_argument("--servers", type=lambda s: s.split(","), default=list(SERVERS))
    parser.add_argument(
        "--parts",
        type=lambda s: [PARTS.get(p.strip(), p.strip()) for p in s.split(",")],
        default=list(PARTS.values()),
        help="comma-separated, numbers or names: 1 plain, 2 two-round, 3 codec, 4 completion, 5 scale, 6 tenants",
    )
    parser.add_argument("--completion-samples", type=int, default=50, help="part 4: samples per mode and repetition")
    parser.add_argument("--completion-reps", type=int, default=3, help="part 4: repetitions")
    parser.add_argument("--scale-rows", type=int, default=100_000, help="part 5: pending elicitations seeded")
    parser.add_argument(
        "--tenants-counts", default="0,1000,100000", help="part 6: tenants seeded for each start-up (the last >= 1000)"
    )
    parser.add_argument(
        "--tenants-fairness-samples", type=int, default=100, help="part 6: 0-second tasks timed per configuration"
    )
    parser.add_argument("--tenants-fairness-only", action="store_true", help="part 6: only the fairness figure")
    parser.add_argument("--peer-threads", type=int, default=4, help="gunicorn gthread threads for the peer")
    parser.add_argument("--server-cpu", default="0", help="CPU the server under test is pinned to")
    parser.add_argument("--load-cpu", default="1", help="CPU the load generator is pinned to")
    parser.add_argument("--no-pin", action="store_true", help="do not pin with taskset")
    parser.add_argument(
        "--profile",
        default="",
        help="comma-separated servers to py-spy: ours/bare/peer/peer-db during each scenario measured "
        "(plain, two-round), ours-A/ours-B during part 4's first repetition",
    )
    args = parser.parse_args()
    unknown = set(args.parts) - set(PARTS.values())
    if unknown:
        parser.error(f"unknown parts: {', '.join(sorted(unknown))}")
    if (os.cpu_count() or 1) < 2:
        args.no_pin = True
    load_cpu = None if args.no_pin else args.load_cpu
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    workdir = Path(tempfile.mkdtemp(prefix="logs-", dir=os.environ.get("BENCH_TMP")))
    RESULTS.mkdir(exist_ok=True)
    started = time.monotonic()

    scenarios = [p for p in ("plain", "two-round") if p in args.parts]
    servers = prepare(args, workdir) if scenarios or "codec" in args.parts else {}
    log(f"servers: {', '.join(servers) or '-'}; logs in {workdir}")
    payload: bytes | None = None
    for server in servers.values():
        server.start()
        try:
            payload = verify(server) or payload
        finally:
            server.stop()
    if servers:
        log("every server answered both scenarios correctly")

    raw: dict[str, dict[str, dict[str, list[dict[str, Any]]]]] = {}
    load: list[tuple[str, float]] = []
    names = list(servers)
    for rep in range(args.reps if scenarios else 0):
        order = names[rep % len(names) :] + names[: rep % len(names)]
        for name in order:
            server = servers[name]
            server.start()
            try:
                wrk_plain(server, 16, 1.0, load_cpu)  # warm caches (token, tenant, imports) before measuring
                for scenario in scenarios:
                    for c in args.concurrency:
                        load.append((f"{rep}/{name}/{scenario}/{c}", os.getloadavg()[0]))
                        result = with_server_cpu(WORKLOADS[scenario], server, c, args.duration, load_cpu)
                        raw.setdefault(scenario, {}).setdefault(name, {}).setdefault(str(c), []).append(result)
                        log(f"rep {rep + 1}/{args.reps} {name:<7} {scenario:<9} c={c:<3} "
                            f"{result['throughput']:8.0f} calls/s  p50 {result['p50_ms']:7.2f} ms  "
                            f"p99 {result['p99_ms']:7.2f} ms  server {result['server_cpu_us_per_call']:6.0f} µs CPU "
                            f"a call, busy {result['server_busy']:.0%}")  # fmt: skip
                if rep == 0 and name in args.profile.split(","):
                    profile(server, args, stamp, scenarios)
            finally:
                server.stop()
    # Every server in every order, so the summary's rows keep a stable order.
    raw = {s: {n: raw[s][n] for n in names if n in raw[s]} for s in raw}

    codec: dict[str, Any] | None = None
    if "codec" in args.parts:
        payload_file = workdir / "payload.bin"
        codec_args = [PY, str(BENCH / "codec.py")]
        if payload is not None:
            payload_file.write_bytes(payload)
            codec_args += ["--payload-file", str(payload_file)]
        prefix = ["taskset", "-c", args.server_cpu] if not args.no_pin else []
        out = subprocess.run(prefix + codec_args, cwd=ROOT, capture_output=True, text=True, check=True).stdout
        codec = json.loads(last_line(out).removeprefix("BENCH_RESULT "))

    completion = measure_completion_latency(args, workdir) if "completion" in args.parts else None
    scale = measure_scale(args, workdir) if "scale" in args.parts else None
    tenants = measure_tenants(args, workdir) if "tenants" in args.parts else None

    summary = summarise(raw)
    rows = targets(summary, codec) + later_targets(completion, scale) + tenants_targets(tenants)
    table = print_table(summary, codec, rows, completion, scale)
    report = {
        "stamp": stamp,
        "machine": machine(),
        "config": {
            "reps": args.reps,
            "duration_s": args.duration,
            "concurrency": args.concurrency,
            "servers": names,
            "target_peer": TARGET_PEER,
            "peer_threads": args.peer_threads,
            "pinning": None if args.no_pin else {"server": args.server_cpu, "load_generator": args.load_cpu},
            "parts": args.parts,
            "completion_samples": args.completion_samples,
            "completion_reps": args.completion_reps,
            "scale_rows": args.scale_rows,
            "tenants_counts": None if args.tenants_fairness_only else args.tenants_counts,
            "tenants_fairness_samples": args.tenants_fairness_samples,
        },
        "load_average_1m": dict(load),
        "raw": raw,
        "summary": summary,
        "codec": codec,
        "targets": rows,
        "completion_latency": completion,
        "scale": scale,
        "tenants": tenants,
        "table": table,
        "wall_seconds": round(time.monotonic() - started, 1),
    }
    out_json = RESULTS / f"{stamp}.json"
    out_json.write_text(json.dumps(report, indent=2))
    if summary:
        draw(summary, RESULTS / "latency.png")
    drawn = " and bench/results/latency.png" if summary else ""
    log(f"\nwrote {out_json.relative_to(ROOT)}{drawn} ({report['wall_seconds']:.0f} s)")


if __name__ == "__main__":
    main()
