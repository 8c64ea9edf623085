"""The official TypeScript Tasks client (`@modelcontextprotocol/ext-tasks` on
`@modelcontextprotocol/client`, 2026-07-28) settles our tasks as they ended: a long-running one
completes with its result, one it cancels ends cancelled, a task-only tool completes, and one
waiting on a staff approval completes once staff approve while the client polls.

The client validates every answer against the extension's schemas; a completed task whose
inlined `CallToolResult` lacked ``resultType`` was settled as failed ("Protocol value failed
schema validation"). `scripts/tasks-client-install` (run by `scripts/test`) installs the pinned
client and its Node under `.cache/tasks-client/`, with `scripts/tasks-client/drive.mjs` beside it.
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

from approvals.models import Elicitation
from mcp_tasks.models import Task
from tests.api.conftest import api, machine_client
from tests.approvals.conftest import elicitation_id_of
from tests.conftest import Cast, LiveServer

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / ".cache" / "tasks-client" / "client"
DRIVER = CLIENT / "drive.mjs"
NODE = CLIENT / "node_modules" / "node" / "bin" / "node"


def driver(url: str, token: str, tool: str, **options: Any) -> subprocess.Popen[str]:
    assert DRIVER.exists(), f"{DRIVER} is missing: run scripts/tasks-client-install (scripts/test does)"
    config = json.dumps({"url": url, "token": token, "tool": tool, **options})
    return subprocess.Popen([str(NODE), str(DRIVER), config], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def settle(process: subprocess.Popen[str], timeout: float = 60.0) -> list[dict[str, Any]]:
    """The driver's lines, once it exited; the last is the client's outcome."""
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, f"the TypeScript client failed:\n{err}\n{out}"
    lines = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert lines and lines[-1]["event"] == "outcome", out
    return lines


def drive(url: str, token: str, tool: str, **options: Any) -> list[dict[str, Any]]:
    return settle(driver(url, token, tool, **options))


def statuses(lines: list[dict[str, Any]]) -> list[str]:
    return [line["task"]["status"] for line in lines if line["event"] == "task"]


def test_a_long_running_task_completes_with_its_result(live: LiveServer, cast: Cast, reports: str) -> None:
    lines = drive(reports, cast.token(live, "alice", "reports"), "long_report", arguments={"seconds": 2, "title": "q3"})

    outcome = lines[-1]
    assert (outcome["kind"], outcome["status"]) == ("task", "completed"), outcome
    assert outcome["result"]["resultType"] == "complete"
    assert outcome["result"]["content"] == [{"type": "text", "text": "q3: done after 2s"}]
    assert statuses(lines)[0] == "working" and statuses(lines)[-1] == "completed"


def test_a_task_the_client_cancels_ends_cancelled(live: LiveServer, cast: Cast, reports: str) -> None:
    alice = cast.token(live, "alice", "reports")
    lines = drive(reports, alice, "long_report", arguments={"seconds": 60}, cancelWhen="working")

    assert (lines[-1]["kind"], lines[-1]["status"]) == ("task", "cancelled"), lines[-1]
    task_id = lines[0]["task"]["taskId"]
    assert Task.objects.get(pk=task_id).status == "cancelled"


def test_a_task_only_tool_completes_as_a_task(live: LiveServer, cast: Cast, reports: str) -> None:
    lines = drive(reports, cast.token(live, "alice", "reports"), "resilient_report", arguments={"seconds": 1})

    outcome = lines[-1]
    assert (outcome["kind"], outcome["status"]) == ("task", "completed"), outcome
    assert outcome["result"]["content"] == [{"type": "text", "text": "report: done after 1s"}]


def test_a_task_waiting_on_a_staff_approval_completes_once_staff_approve(
    live: LiveServer, cast: Cast, reports: str
) -> None:
    # A title of its own: an approval alice already got for the same export (another test's) is
    # reused, and the task would complete without asking.
    title = f"payroll-{uuid.uuid4().hex[:8]}"
    process = driver(reports, cast.token(live, "alice", "reports"), "approved_export", arguments={"title": title})
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 30
        seen: list[Any] = []
        while True:  # the client hands the URL-mode question to the application, and polls on
            line = json.loads(process.stdout.readline() or "null")
            assert line is not None, (
                f"the client exited before the question (saw {seen}): {process.stderr and process.stderr.read()}"
            )
            seen.append(line)
            if line["event"] == "input":
                break
            assert time.monotonic() < deadline, "no question within 30 s"
        params = line["request"]["params"]
        assert (line["request"]["kind"], params["mode"]) == ("elicitation", "url")
        assert params["message"] == (
            f"This needs a staff approval: export the {title} report. Follow its status at the link."
        )
        row = Elicitation.objects.get(pk=elicitation_id_of(params["url"]))
        assert row.status == "pending"

        with api(live, machine_client(live, "staff", ["approvals:write"]).token) as http:
            assert http.post(f"/elicitations/{row.pk}/approve/", json={"note": "fine"}).status_code == 200

        rest = settle(process, timeout=90)  # the resume's latency is the runner's business, not this test's
    finally:
        if process.poll() is None:
            process.kill()
    outcome = rest[-1]
    assert (outcome["kind"], outcome["status"]) == ("task", "completed"), outcome
    assert outcome["result"]["content"] == [{"type": "text", "text": f"{title}: exported"}]
