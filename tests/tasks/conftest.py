"""Tenants serving the `long_running` toolset (durable tasks) and a 2026-07-28 caller that declares
the Tasks extension."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx2
import pytest

from mcpsite.models import Tenant
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import raw_post

TASKS = "io.modelcontextprotocol/tasks"


def rpc(
    url: str,
    method: str,
    params: dict[str, Any] | None = None,
    token: str | None = None,
    *,
    tasks: bool = True,
    capabilities: dict[str, Any] | None = None,
) -> httpx2.Response:
    """One 2026-07-28 request; ``tasks``: the client declares the Tasks extension in its ``_meta``
    (beside ``capabilities``)."""
    capabilities = {**(capabilities or {}), **({"extensions": {TASKS: {}}} if tasks else {})}
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**(params or {}), "_meta": meta}}
    headers = {"Mcp-Method": method}
    if method == "tools/call":
        headers["Mcp-Name"] = str((params or {})["name"])
    return raw_post(url, json.dumps(body).encode(), token, **headers)


def result(response: httpx2.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        body = [line[5:] for line in body.splitlines() if line.startswith("data:")][-1]
    message: dict[str, Any] = json.loads(body)
    assert "result" in message, message
    answer: dict[str, Any] = message["result"]
    return answer


def error(response: httpx2.Response) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(response.text)
    assert "error" in message, message
    failure: dict[str, Any] = message["error"]
    return failure


def start(url: str, token: str | None, tool: str = "long_report", **arguments: Any) -> str:
    created = result(rpc(url, "tools/call", {"name": tool, "arguments": arguments}, token))
    assert created["resultType"] == "task", created
    task_id: str = created["taskId"]
    return task_id


def wait_for(url: str, token: str | None, task_id: str, status: str, timeout: float = 20.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        task = result(rpc(url, "tasks/get", {"taskId": task_id}, token))
        if task["status"] == status:
            return task
        assert time.monotonic() < deadline, f"task still {task['status']} after {timeout}s: {task}"
        time.sleep(0.2)


def serve(live: LiveServer, slug: str, members: list[str], cast: Cast) -> str:
    tenant, _ = Tenant.objects.get_or_create(slug=slug, defaults={"name": slug, "toolsets": ["long_running"]})
    tenant.members.add(*(cast.user(name).pk for name in members))
    url = live.mcp_url(slug)
    deadline = time.monotonic() + 10  # the registry hears of a new tenant within a second, or on its 5 s poll
    while rpc(url, "tools/list", token=cast.token(live, members[0], slug)).status_code != 200:
        assert time.monotonic() < deadline, f"{url} is not served"
        time.sleep(0.1)
    return url


@pytest.fixture
def reports(live: LiveServer, cast: Cast) -> str:
    """Tenant `reports` (alice and bob), served by the suite's server."""
    return serve(live, "reports", ["alice", "bob"], cast)


@pytest.fixture
def other_reports(live: LiveServer, cast: Cast) -> str:
    """Tenant `reports-other` (mallory)."""
    return serve(live, "reports-other", ["mallory"], cast)
