"""Every ``sh`` block of the README runs, in the README's order, as a newcomer would type it, on a
fresh embedded default (`scripts/run` with its own SQLite file and key in a new ``var/``), so the
README cannot drift from the code.

How each command is run and checked:

- one shell for the whole README: every command runs in ``bash -euo pipefail`` and the variables it
  sets (``TOKEN``, ``SITE``, ``OPS_TOKEN`` ...) are there for the next one, as in a terminal;
- ``<...>`` in a command is what the reader copies from an earlier output (the token scripts/run
  printed, a requestState, a taskId, the client id and secret, an approval's id, a signing secret):
  the test fills it from that output, and a placeholder it cannot fill fails the test;
- a ``# -> ...`` line under a command is its expected output (``...`` matches anything) and the
  output must match it; the comments on `scripts/run` list what it prints, and it must print them;
- the only changes the test makes: the port (a free one for 8000 and 9000), a short requestState
  lifetime so the key ring rotation's guards wait seconds, not ten minutes, and the folder
  ``deploy/make-secrets`` writes to (one in the test's own, not the working tree's);
- the two steps done by clicking in the admin (adding a notifications endpoint, sending it a test
  event) are done with the same services in ``manage.py shell``, on the same database;
- not run here: ``scripts/test`` (it is what runs this test), ``bench/run`` (the benchmark, ~9 min,
  not part of the suite), and the *Deploy* section's ``podman`` and ``kubectl`` commands (no
  registry to pull the image's base from, no container runtime that starts here, no cluster:
  ``tests/deploy`` checks those files instead); the Celery commands run against the suite's PostgreSQL and Redis (the
  deployed configuration they are for) until each says it is ready.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
import pytest

from tests.conftest import ROOT, database_url, free_port
from tests.mcp.clients import raw_post

BLOCK = re.compile(r"^```(sh|python)\n(.*?)^```", re.M | re.S)
PLACEHOLDER = re.compile(r"<([A-Za-z_][\w.]*)>")
NOT_RUN = {
    "scripts/test": "it is what runs this test",
    "bench/run": "the benchmark, not part of the suite",
    "podman": "no registry reachable here for the image's base, and podman cannot start a container here",
    "kubectl": "no cluster here; tests/deploy validates the manifests and checks what they say",
}
FAST_ROTATION = {"MCPSITE_REQUEST_STATE_TTL": "20", "MCPSITE_POLL_SECONDS": "0.5"}


@dataclass
class Command:
    text: str
    expected: str | None = None  # the ``# -> ...`` line under it


def commands(block: str) -> list[Command]:
    """A block's commands: a line, with its ``\\`` continuations and the lines a quote spans."""
    found: list[Command] = []
    pending: list[str] = []
    expecting = False  # the lines under a ``# -> `` line go on with it when indented
    for line in block.splitlines():
        if not pending and line.lstrip().startswith("#"):
            said = line.lstrip()
            if said.startswith("# -> ") and found:
                found[-1].expected = said[len("# -> ") :]
                expecting = True
            elif said.startswith("#    ") and expecting and found[-1].expected is not None:
                found[-1].expected += "\n" + said[len("#    ") :].split("   (")[0]  # "   (...)": a remark
            else:
                expecting = False
            continue
        expecting = False
        if not pending and not line.strip():
            continue
        pending.append(line)
        joined = "\n".join(pending)
        if joined.count("'") % 2 == 0 and not line.rstrip().endswith("\\"):
            found.append(Command(joined))
            pending = []
    assert not pending, f"a command does not end: {pending}"
    return found


def readme_blocks() -> list[tuple[str, str]]:
    """(language, text) of each ``sh`` and ``python`` block, in order."""
    return BLOCK.findall((ROOT / "README.md").read_text())


def matches(expected: str, output: str) -> bool:
    pattern = ".*?".join(re.escape(part) for part in expected.split("..."))
    return re.fullmatch(pattern, output.strip(), re.S) is not None


@dataclass
class Newcomer:
    """One reader at one terminal, on a fresh embedded default."""

    var: Path
    port: int = field(default_factory=free_port)
    hook_port: int = field(default_factory=free_port)
    values: dict[str, str] = field(default_factory=dict)
    server: subprocess.Popen[bytes] | None = None
    receiver: subprocess.Popen[bytes] | None = None
    ran: list[str] = field(default_factory=list)
    server_env: dict[str, str] = field(default_factory=dict)  # what the reader set for scripts/run

    @property
    def site(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in {"MCPSITE_DATABASE_URL", "MCPSITE_REDIS_URL"}}
        return env | {
            "MCPSITE_VAR_DIR": str(self.var),
            "PORT": str(self.port),
            **FAST_ROTATION,
            **self.server_env,
            **extra,
        }

    def localise(self, text: str) -> str:
        text = text.replace("127.0.0.1:8000", f"127.0.0.1:{self.port}")
        text = text.replace("127.0.0.1:9000", f"127.0.0.1:{self.hook_port}").replace(
            "--port 9000", f"--port {self.hook_port}"
        )

        def fill(match: re.Match[str]) -> str:
            name = match.group(1)
            assert name in self.values, f"nothing printed earlier gives <{name}> (have {sorted(self.values)})"
            return self.values[name]

        return PLACEHOLDER.sub(fill, text)

    # scripts/run ---------------------------------------------------------------------------------

    def start_server(self, command: Command) -> str:
        words = shlex.split(command.text.split("#")[0])
        assignments = dict(w.split("=", 1) for w in words[:-1])
        assert words[-1] == "scripts/run" and all(re.fullmatch(r"[A-Z_]+", k) for k in assignments), command.text
        self.stop_server()
        self.server_env = assignments
        log = self.var / f"run-{len(self.ran)}.log"
        self.server = subprocess.Popen(
            ["bash", "-c", "exec scripts/run"],
            cwd=ROOT,
            env=self.env(**assignments),
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert self.server.poll() is None, log.read_text()
            try:
                if httpx2.get(f"{self.site}/healthz", timeout=1).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            time.sleep(0.2)
        else:
            raise AssertionError(f"scripts/run did not serve within 120 s:\n{log.read_text()}")
        printed = log.read_text()
        token = re.search(r"^Bearer token \(user demo\): (\S+)$", printed, re.M)
        assert token, printed
        self.values["token"] = token.group(1)
        return printed

    def stop_server(self) -> None:
        for process in (self.server, self.receiver):
            if process is not None and process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=30)

    # one shell -----------------------------------------------------------------------------------

    def shell(self, text: str, *, timeout: float = 120) -> str:
        state = self.var / "shell-state.sh"
        script = (
            f"[ -f {shlex.quote(str(state))} ] && source {shlex.quote(str(state))}\n"
            "set -euo pipefail\n"
            "__before=$(compgen -v)\n"
            f"{text}\n"
            'for __v in $(comm -13 <(echo "$__before" | sort) <(compgen -v | sort)); do\n'
            f'  [[ $__v == __* ]] || declare -p "$__v" >> {shlex.quote(str(state))}\n'
            "done\n"
        )
        done = subprocess.run(
            ["bash", "-c", script], cwd=ROOT, env=self.env(), capture_output=True, text=True, timeout=timeout
        )
        assert done.returncode == 0, f"{text}\nexit {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def manage_shell(self, code: str) -> str:
        done = subprocess.run(
            [str(ROOT / ".venv/bin/python"), "manage.py", "shell", "-c", code],
            cwd=ROOT,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip().splitlines()[-1]


@pytest.fixture
def newcomer(tmp_path: Path) -> Iterator[Newcomer]:
    reader = Newcomer(var=tmp_path / "var")
    reader.var.mkdir()
    yield reader
    reader.stop_server()


def a_pending_approval(reader: Newcomer) -> None:
    """A member asks for a refund (its round answers with the URL-mode step), so staff have one to decide."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "request_refund",
            "arguments": {"order_id": "A-1", "amount": 12.5},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
            },
        },
    }
    answer = raw_post(
        f"{reader.site}/t/demo/mcp",
        json.dumps(body).encode(),
        reader.values["token"],
        **{"Mcp-Method": "tools/call", "Mcp-Name": "request_refund"},
    )
    assert answer.status_code == 200 and '"input_required"' in answer.text, answer.text


def run_deployed(command: str, ready: str, cwd: Path) -> str:
    """A Celery command on the suite's PostgreSQL and Redis, until it says `ready`; then stopped.
    Run from `cwd` (with the project on the path) so the beat's schedule file lands there."""
    env = {**os.environ, "MCPSITE_DATABASE_URL": database_url(), "PYTHONPATH": str(ROOT)}
    command = command.replace(".venv/bin/celery", str(ROOT / ".venv/bin/celery"), 1)
    log = cwd / "celery.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            ["bash", "-c", f"exec {command}"], cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while ready not in log.read_text(errors="replace"):
            assert process.poll() is None and time.monotonic() < deadline, f"{command}\n{log.read_text()}"
            time.sleep(0.2)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # a warm shutdown that hangs says nothing of the README
            process.wait(timeout=10)
    return log.read_text(errors="replace")


def run_python_client(reader: Newcomer, source: str) -> None:
    """The README's `client.py`, saved and run as it says, with the token scripts/run printed."""
    client = reader.var / "client.py"
    client.write_text(reader.localise(source.replace('"<token>"', '"' + reader.values["token"] + '"')))
    done = subprocess.run(
        [str(ROOT / ".venv/bin/python"), str(client)], cwd=reader.var, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "server asks: Which region should the database live in?",
        "Provisioned 'orders' in eu-west-1.",
    ], done.stdout


SCRIPTS_RUN_PRINTS = (
    "MCP URL: ",
    "Staff sign-in (admin: ",
    "Member sign-in (consent, checkout and status pages): demo / ",
    "Bearer token (user demo): ",
)


def test_every_readme_command_runs_in_order_and_prints_what_the_readme_says(newcomer: Newcomer) -> None:
    reader = newcomer
    first_printed = ""
    blocks = readme_blocks()
    assert sum(language == "sh" for language, _ in blocks) >= 10, "the README's command blocks were not found"
    for language, block in blocks:
        if language == "python":
            # Code for a file of one's own app (`# myapp/tools/...`) is not a command; the client is.
            if block.startswith("import asyncio"):
                run_python_client(reader, block)
            continue
        for command in commands(block):
            first = command.text.split()[0]
            reader.ran.append(command.text)
            if command.text.split("#")[0].split()[-1] == "scripts/run":
                env_prefix = command.text.split("scripts/run")[0].strip()
                if reader.server is not None and not env_prefix:
                    continue  # it runs already, as the reader left it; what it printed is checked below
                printed = reader.start_server(command)
                first_printed = first_printed or printed
                for said in SCRIPTS_RUN_PRINTS:
                    assert said in first_printed, (said, first_printed)
                if printed is not first_printed:  # a restart on the same database: the sign-ins exist
                    assert "admin exists; its password was shown once" in printed, printed
                continue
            if first in NOT_RUN:
                continue
            if first == ".venv/bin/celery":
                ready = "beat: Starting" if " beat" in command.text else " ready."
                run_deployed(command.text, ready, reader.var)
                continue
            if "scripts/notifications-receiver" in command.text:
                check_notifications(reader, command)
                continue
            if "/api/v1/elicitations/?kind=approval" in command.text:
                a_pending_approval(reader)
            if command.text == "deploy/make-secrets":
                command = Command(f"deploy/make-secrets {reader.var / 'secrets'}", command.expected)
            output = run(reader, command)
            learn(reader, command, output)
    assert not set(NOT_RUN) - {c.split()[0] for c in reader.ran}, "a command this test skips is gone: update NOT_RUN"


def run(reader: Newcomer, command: Command) -> str:
    text = reader.localise(command.text)
    if '"tasks/get"' in text:
        # "poll until the status is completed"
        deadline = time.monotonic() + 30
        while '"status":"completed"' not in (output := reader.shell(text)):
            assert time.monotonic() < deadline, output
            time.sleep(0.5)
    else:
        output = reader.shell(text, timeout=180)
    if command.expected is not None:
        assert matches(command.expected, output), f"{command.text}\nexpected: {command.expected}\ngot: {output}"
    return output


def learn(reader: Newcomer, command: Command, output: str) -> None:
    """What the reader copies from an output for a later command, and what that output must say."""
    text = command.text
    if "manage.py mcp_token" in text:
        assert re.fullmatch(r"[\w-]{20,}", output.strip().splitlines()[-1]), output
    elif '"name": "provision"' in text and "requestState" not in text:
        reader.values["requestState"] = json.loads(output)["result"]["requestState"]
    elif '"name": "long_report"' in text:
        reader.values["taskId"] = json.loads(output)["result"]["taskId"]
    elif "manage.py operator_client" in text:
        printed = dict(line.split("=", 1) for line in output.splitlines() if line.startswith("client_"))
        reader.values["client_id"], reader.values["client_secret"] = printed["client_id"], printed["client_secret"]
    elif "/api/v1/elicitations/?kind=approval" in text:
        pending = json.loads(output)["results"]
        assert [e["tool"] for e in pending] == ["request_refund"], pending
        reader.values["id"] = pending[0]["id"]
        # The rest of the block: the approval decided, deliveries, tasks, the rotation, a tenant.
    elif "/approve/" in text:
        decided = json.loads(output)
        assert (decided["status"], decided["outcome"]["decision"], decided["completed_by"]) == (
            "completed",
            "approved",
            "admin",
        ), output
    elif "webhook-deliveries/?flagged=true" in text:
        assert json.loads(output)["results"] == [], output
    elif "/api/v1/tasks/?tenant=demo" in text:
        assert [t["tool"] for t in json.loads(output)["results"]] == ["long_report"], output
    elif "scripts/rotate-keyring" in text:
        assert re.search(r"retired \w+\s*$", output), output
    elif "/api/v1/tenants/" in text:
        assert json.loads(output)["slug"] == "acme", output
    elif command.expected is None and not re.match(r"[A-Z_]+=", text):  # an assignment fails when its command does
        raise AssertionError(f"a README command whose output nothing checks: {text}")


def check_notifications(reader: Newcomer, command: Command) -> None:
    """The admin's two clicks (add the endpoint, send it a test event), done with the same services."""
    secret = reader.manage_shell(
        "from notifications.services import endpoint_create; "
        f"e = endpoint_create(url='http://127.0.0.1:{reader.hook_port}/', event_types=['keyring.changed']); "
        "print(e.secret)"
    )
    reader.values["whsec_..."] = secret
    log = reader.var / "receiver.log"
    reader.receiver = subprocess.Popen(
        ["bash", "-c", f"exec {reader.localise(command.text)}"],
        cwd=ROOT,
        env=reader.env(),
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 20
    while "listening on" not in log.read_text():
        assert reader.receiver.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)
    reader.manage_shell(
        "from django.contrib.auth import get_user_model; from notifications.models import Endpoint; "
        "from notifications.services import endpoint_send_test; "
        "admin = get_user_model().objects.get(username='admin'); "
        "print(endpoint_send_test(endpoint=Endpoint.objects.get(), user=admin).pk)"
    )
    deadline = time.monotonic() + 30
    while "verified notification.test" not in log.read_text():
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)
    assert command.expected is not None and matches(command.expected, log.read_text().splitlines()[-1]), log.read_text()


def test_the_readme_has_no_command_block_this_test_does_not_know() -> None:
    """A new block is run by the test above; one it cannot tell how to check fails it (`learn`)."""
    firsts = {c.text.split()[0] for language, block in readme_blocks() if language == "sh" for c in commands(block)}
    assert {"scripts/run", "scripts/test", "bench/run", ".venv/bin/celery", "curl"} <= firsts, firsts
