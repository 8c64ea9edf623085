"""On a public tenant every caller without a token is the same (empty) principal, so a task is bound
to its creator by its id alone: 256 random bits, answered only to the call that created it, never
listed, so only its creator (or whoever the creator hands it to) reads or cancels it; any other id
is ``Unknown taskId``. The cap on unfinished tasks counts anonymous callers per client address, so
one anonymous caller filling it does not lock the others out (as anonymous sessions are counted).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx2
import pytest

from mcp_tasks.models import Task
from mcpsite.models import Tenant
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import raw_post
from tests.tasks.conftest import TASKS

CAP = 2
UNKNOWN = {"code": -32602, "message": "Unknown taskId"}


@pytest.fixture(scope="module")
def capped(server_factory: Callable[..., LiveServer]) -> Iterator[LiveServer]:
    # The test stands in for a trusted proxy on loopback, so X-Forwarded-For names the client.
    server = server_factory(MCPSITE_TASKS_MAX_LIVE_PER_PRINCIPAL=str(CAP), MCPSITE_TRUSTED_PROXIES="127.0.0.1")
    yield server
    server.stop()


def post(url: str, address: str, method: str, params: dict[str, Any]) -> httpx2.Response:
    """An anonymous 2026-07-28 request from ``address`` (as the trusted proxy names it), declaring Tasks."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    headers = {"Mcp-Method": method, "X-Forwarded-For": address}
    if method == "tools/call":
        headers["Mcp-Name"] = params["name"]
    return raw_post(url, json.dumps(body).encode(), **headers)


def answer(response: httpx2.Response) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(response.text)
    return message


def start(url: str, address: str) -> str:
    created = answer(post(url, address, "tools/call", {"name": "long_report", "arguments": {"seconds": 60}}))
    assert created["result"]["resultType"] == "task", created
    task_id: str = created["result"]["taskId"]
    return task_id


@pytest.fixture
def public_reports(capped: LiveServer, cast: Cast) -> Iterator[str]:
    """A public tenant serving the long-running tools; its tasks are cancelled afterwards (``cast``:
    the database is open to the test, as for the cast's)."""
    Tenant.objects.get_or_create(
        slug="open-reports", defaults={"name": "open-reports", "toolsets": ["long_running"], "public": True}
    )
    url = capped.mcp_url("open-reports")
    deadline = time.monotonic() + 10  # the registry hears of a new tenant within a second, or on its 5 s poll
    while post(url, "198.51.100.1", "tools/list", {}).status_code != 200:
        assert time.monotonic() < deadline, f"{url} is not served"
        time.sleep(0.1)
    yield url
    Task.objects.filter(tenant__slug="open-reports").update(status=Task.Status.CANCELLED)


def test_one_anonymous_caller_at_the_cap_does_not_lock_out_another(public_reports: str) -> None:
    url = public_reports
    for _ in range(CAP):
        start(url, "198.51.100.7")

    refused = answer(post(url, "198.51.100.7", "tools/call", {"name": "long_report", "arguments": {"seconds": 60}}))
    assert refused["error"] == {
        "code": -32600,
        "message": f"You have {CAP} unfinished tasks here from this client address, the most allowed at once. "
        "Wait for one to end or cancel one (tasks/cancel), then call again.",
        "data": {"reason": "too_many_tasks", "limit": CAP},
    }
    other = start(url, "198.51.100.8")
    assert answer(post(url, "198.51.100.8", "tasks/get", {"taskId": other}))["result"]["status"] == "working"


def test_only_the_id_reaches_an_anonymous_task(public_reports: str) -> None:
    url = public_reports
    task_id = start(url, "198.51.100.9")
    assert len(task_id.removeprefix("tsk_")) == 43  # 32 random bytes, base64url

    for guess in ("tsk_" + "x" * 43, task_id[:-1] + ("A" if task_id[-1] != "A" else "B"), task_id[:12]):
        for method in ("tasks/get", "tasks/cancel"):
            assert answer(post(url, "198.51.100.10", method, {"taskId": guess}))["error"] == UNKNOWN
    assert answer(post(url, "198.51.100.9", "tasks/get", {"taskId": task_id}))["result"]["status"] == "working"
    assert answer(post(url, "198.51.100.9", "tasks/cancel", {"taskId": task_id}))["result"]["resultType"] == "complete"
    assert answer(post(url, "198.51.100.9", "tasks/get", {"taskId": task_id}))["result"]["status"] == "cancelled"
