"""Part 6's fairness figure (issue 26 item 5): a 0-second task at one tenant completes within 2 s
while another tenant runs its cap of long tasks, on the embedded default and deployed.

Tenant ``bench-busy`` (toolset ``long_running``) has enough members that no person's running limit
binds before the tenant's; they start ``long_report`` tasks of ``LONG_SECONDS`` until every task
process has the tenant's cap of them running (``TASKS["MAX_RUNNING_PER_TENANT"]``, counted per
process) and ``EXTRA`` more waiting there. Then, at tenant ``bench-quiet``, one member starts a
0-second ``long_report`` (task-augmented ``tools/call``) and polls ``tasks/get`` every
``POLL_SECONDS`` until it says ``completed``: the client's time from sending the call to that
answer is one sample. Sequential samples, a fresh task each; the long tasks are cancelled at the
end (``tasks/cancel``, each by its own member).

The two configurations, as the live tests start them
(``tests/tasks/test_one_tenants_long_tasks_leave_another_tenants_task_done_within_2_seconds.py``
and ``tests/tasks/test_deployed_a_members_long_tasks_block_no_other_work.py``), with the limits at
their defaults (or as the environment sets them):

- **embedded**: ``python -m mcp_server.serve`` with ``MCPSITE_REDIS_URL=""``: task bodies run on the
  serving process's own runner, beside its in-process beat (PostgreSQL stays the database);
- **deployed**: the same server with Redis, and ``celery -A config worker --beat
  --pool=prefork --concurrency=2`` (one worker process with two slots taking every queue, and the
  beat): the server sends each run to the ``tasks`` queue, a worker child hands it to its runner.

The server and the worker are pinned to the server CPU; this client runs where it is started.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx2
from django.conf import settings
from django.contrib.auth import get_user_model

from mcp_tasks.models import Task
from mcpsite import services
from mcpsite.keyring import rotation
from mcpsite.models import Tenant

ROOT = Path(__file__).resolve().parent.parent
BUSY, QUIET = "bench-busy", "bench-quiet"
USER_PREFIX = "bench-fair-"
TOOLSETS = ["long_running"]
LONG_SECONDS = 600  # the tool's most: the long ones outlast any run of this part
EXTRA = 4  # waiting runs of the busy tenant beyond its cap, per task process
POLL_SECONDS = 0.02
TARGET_MS = 2000.0
SAMPLE_TIMEOUT_S = 30.0
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXTENSION: {}}},
}
CONFIGURATIONS: dict[str, dict[str, str]] = {
    # As the live tests' servers: the embedded default has no Redis; deployed sends runs to Celery.
    "embedded": {"MCPSITE_REDIS_URL": "", "MCPSITE_TASKS_IN_PROCESS": "1"},
    "deployed": {"MCPSITE_TASKS_IN_PROCESS": "0"},
}


def limits() -> dict[str, int]:
    conf = settings.TASKS
    return {
        "workers": conf["WORKERS"],
        "per_tenant": conf["MAX_RUNNING_PER_TENANT"],
        "per_person": conf["MAX_RUNNING_PER_PRINCIPAL"],
        "live_per_person": conf["MAX_LIVE_PER_PRINCIPAL"],
    }


def busy_plan(*, processes: int, per_tenant: int, per_person: int, live_per_person: int) -> list[int]:
    """How many long tasks each member of the busy tenant starts: the tenant's cap in every task
    process plus `EXTRA` waiting in each, spread over members so that no person's running limit
    (per process) nor live limit (in all) binds before the tenant's."""
    total = (per_tenant + EXTRA) * processes
    each = max(1, min(per_person, live_per_person))
    members = -(-total // each)
    return [total // members + (1 if n < total % members else 0) for n in range(members)]


def seed(plan: list[int]) -> tuple[Tenant, Tenant, list[Any], Any]:
    """The busy tenant and its members (one per entry of `plan`), the quiet tenant and its one
    member, their earlier tasks deleted (idempotent); the key ring a fresh database lacks."""
    users = get_user_model().objects
    busy, _ = Tenant.objects.update_or_create(slug=BUSY, defaults={"name": "Bench busy", "toolsets": TOOLSETS})
    quiet, _ = Tenant.objects.update_or_create(slug=QUIET, defaults={"name": "Bench quiet", "toolsets": TOOLSETS})
    members = [users.get_or_create(username=f"{USER_PREFIX}{n}")[0] for n in range(len(plan))]
    quiet_member = users.get_or_create(username=f"{USER_PREFIX}quiet")[0]
    busy.members.add(*members)
    quiet.members.add(quiet_member)
    Task.objects.filter(tenant__in=[busy, quiet]).delete()
    rotation.keyring_ensure_minting()
    return busy, quiet, members, quiet_member


class Client:
    """2026-07-28 requests with the Tasks extension declared, on one keep-alive connection."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.http = httpx2.Client(timeout=30)

    def call(self, slug: str, token: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": method,
            "Authorization": f"Bearer {token}",
        }
        if method == "tools/call":
            headers["Mcp-Name"] = params["name"]
        response = self.http.post(f"{self.root}/t/{slug}/mcp", content=json.dumps(body), headers=headers)
        text = response.text
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            text = [line[5:] for line in text.splitlines() if line.startswith("data:")][-1]
        message = json.loads(text) if response.status_code == 200 else {}
        if "result" not in message:
            raise RuntimeError(f"{slug} {method}: HTTP {response.status_code} {response.text[:300]}")
        answer: dict[str, Any] = message["result"]
        return answer

    def start(self, slug: str, token: str, seconds: float, title: str) -> str:
        arguments = {"seconds": seconds, "title": title}
        created = self.call(slug, token, "tools/call", {"name": "long_report", "arguments": arguments})
        if created.get("resultType") != "task":
            raise RuntimeError(f"{slug}: long_report did not start a task: {created}")
        task_id: str = created["taskId"]
        return task_id

    def close(self) -> None:
        self.http.close()


def busy_state(task_ids: list[str]) -> dict[str, Any]:
    """The busy tenant's runs: running (claimed by a worker), waiting, and per task process."""
    rows = Task.objects.filter(pk__in=task_ids, status=Task.Status.WORKING)
    claims = rows.exclude(worker="").values_list("worker", flat=True)
    per_process = Counter(claim.rsplit(":", 1)[0] for claim in claims)  # a claim is host:pid:run
    return {"running": sum(per_process.values()), "waiting": rows.filter(worker="").count(),
            "running_per_process": dict(per_process)}  # fmt: skip


def quick_task(client: Client, token: str, n: int) -> float:
    """One sample: ms from sending the 0-second task's tools/call to tasks/get saying completed
    (`SAMPLE_TIMEOUT_S` and more if it never did)."""
    title = f"quick-{n}"
    began = time.perf_counter()
    task_id = client.start(QUIET, token, 0, title)
    while True:
        task = client.call(QUIET, token, "tasks/get", {"taskId": task_id})
        took = (time.perf_counter() - began) * 1000
        if task["status"] == "completed":
            text = task["result"]["content"][0]["text"]
            if text != f"{title}: done after 0s":
                raise RuntimeError(f"quick task {task_id} answered {text!r}")
            return took
        if task["status"] != "working":
            raise RuntimeError(f"quick task {task_id} ended {task['status']}: {task}")
        if took > SAMPLE_TIMEOUT_S * 1000:
            print(f"fairness: quick task {task_id} still working after {took:.0f} ms", file=sys.stderr)
            return took
        time.sleep(POLL_SECONDS)


class Worker:
    """`celery -A config worker --beat` as the deployed live test starts it (two prefork slots,
    every queue), in its own process group so stop() ends exactly it and its children."""

    def __init__(self, env: dict[str, str], cpu: str | None, log_path: Path, concurrency: int) -> None:
        self.env, self.cpu, self.log_path, self.concurrency = env, cpu, log_path, concurrency
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        prefix = ["taskset", "-c", self.cpu] if self.cpu else []
        command = [sys.executable, "-m", "celery", "-A", "config", "worker", "--beat", "--pool=prefork"]
        options = [f"--concurrency={self.concurrency}", f"--schedule={self.log_path.with_suffix('.schedule')}",
                   "--without-gossip", "--without-mingle", "--loglevel=INFO"]  # fmt: skip
        self.log_path.unlink(missing_ok=True)
        with self.log_path.open("ab") as out:
            self.process = subprocess.Popen(
                [*prefix, *command, *options], cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + 120
        while "ready." not in self.log_path.read_text(errors="replace"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the Celery worker did not get ready; log: {self.log_path}")
            time.sleep(0.2)

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.process = None


def summary(samples: list[float]) -> dict[str, Any]:
    from bench.tenants import percentile

    return {"samples": len(samples), "p50_ms": statistics.median(samples), "p99_ms": percentile(samples, 99),
            "max_ms": max(samples), "within_target": sum(s <= TARGET_MS for s in samples),
            "pass": max(samples) <= TARGET_MS, "raw_ms": samples}  # fmt: skip


def measure_one(name: str, *, samples: int, cpu: str | None, logs: Path, worker_concurrency: int) -> dict[str, Any]:
    from bench.tenants import Server, free_port

    conf = limits()
    processes = worker_concurrency if name == "deployed" else 1
    plan = busy_plan(processes=processes, per_tenant=conf["per_tenant"], per_person=conf["per_person"],
                     live_per_person=conf["live_per_person"])  # fmt: skip
    busy, quiet, members, quiet_member = seed(plan)
    server = Server(free_port(), cpu, logs / f"bench-fairness-{name}.log", env=CONFIGURATIONS[name])
    server.log_path.unlink(missing_ok=True)
    worker: Worker | None = None
    longs: list[tuple[str, str]] = []  # (task id, its member's token)
    client: Client | None = None
    try:
        server.start()
        if name == "deployed":
            worker = Worker({**server.env, "MCPSITE_SITE_ROOT": server.url}, cpu,
                            logs / "bench-fairness-worker.log", worker_concurrency)  # fmt: skip
            worker.start()
        client = Client(server.url)
        tokens = [services.token_issue(tenant=busy, user=m, site_root=server.url).token for m in members]
        quiet_token = services.token_issue(tenant=quiet, user=quiet_member, site_root=server.url).token
        for slug, token in ((BUSY, tokens[0]), (QUIET, quiet_token)):
            client.call(slug, token, "tools/list", {})  # each tenant built before the clock runs
        for token, count in zip(tokens, plan, strict=True):
            longs += [(client.start(BUSY, token, LONG_SECONDS, f"long-{len(longs)}"), token) for _ in range(count)]
        ids = [task_id for task_id, _ in longs]
        cap = conf["per_tenant"] * processes
        deadline = time.monotonic() + 30
        while busy_state(ids)["running"] < cap and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)  # a run beyond the cap would have started by now
        before = busy_state(ids)
        print(f"fairness: {name}: busy tenant running {before['running']} (cap {conf['per_tenant']} x "
              f"{processes} process(es)), waiting {before['waiting']}", file=sys.stderr)  # fmt: skip
        load = os.getloadavg()[0]
        times = [quick_task(client, quiet_token, n) for n in range(samples)]
        after = busy_state(ids)
    finally:
        if client is not None:
            for task_id, token in longs:
                try:
                    client.call(BUSY, token, "tasks/cancel", {"taskId": task_id})
                except (RuntimeError, httpx2.HTTPError) as failure:  # the next run's seed deletes it
                    print(f"fairness: could not cancel {task_id}: {failure}", file=sys.stderr)
            client.close()
        if worker is not None:
            worker.stop()
        server.stop()
    result = summary(times)
    print(f"fairness: {name}: 0-second task at the quiet tenant ({samples}): p50 {result['p50_ms']:.0f} ms, "
          f"p99 {result['p99_ms']:.0f} ms, max {result['max_ms']:.0f} ms", file=sys.stderr)  # fmt: skip
    return {**result, "busy_before": before, "busy_after": after, "busy_long_tasks": len(longs),
            "busy_members": len(plan), "processes": processes, "load_average_1m": load}  # fmt: skip


def measure(*, samples: int, cpu: str | None, logs: Path, worker_concurrency: int = 2) -> dict[str, Any]:
    result: dict[str, Any] = {
        "target_ms": TARGET_MS, "poll_ms": POLL_SECONDS * 1000, "long_seconds": LONG_SECONDS,
        "limits": limits(), "worker_concurrency": worker_concurrency,
    }  # fmt: skip
    for name in CONFIGURATIONS:
        result[name] = measure_one(name, samples=samples, cpu=cpu, logs=logs, worker_concurrency=worker_concurrency)
    return result
