"""What the audit tests share: a server writing JSON logs that flushes its audit rows every tenth
of a second, the public `conformance` tenant and a `reports` tenant (durable tasks) it serves, and
reading the rows a test's calls wrote."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from audit.models import ToolCall
from mcpsite.models import Tenant
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import modern_post


@pytest.fixture(scope="package")
def audited(server_factory: Callable[..., LiveServer]) -> Iterator[LiveServer]:
    server = server_factory(MCPSITE_LOG_FORMAT="json", MCPSITE_AUDIT_FLUSH_SECONDS="0.1")
    yield server
    server.stop()


def served(server: LiveServer, slug: str, tool: str, token: str | None = None) -> str:
    """The tenant's URL at `server`, once it lists `tool` (a tenant made by the test is built on first use)."""
    url = server.mcp_url(slug)
    deadline = time.monotonic() + 10  # the registry hears of a changed tenant within a second, or on its 5 s poll
    while tool not in (response := modern_post(url, "tools/list", token=token)).text:
        assert time.monotonic() < deadline, f"{url} still answers {response.status_code}: {response.text[:300]}"
        time.sleep(0.1)
    return url


@pytest.fixture
def conformance(audited: LiveServer, cast: Cast) -> str:
    """The public `conformance` tenant's URL at the audited server."""
    wanted = {"name": "Conformance fixtures", "toolsets": ["conformance"], "public": True, "enabled": True}
    Tenant.objects.update_or_create(slug="conformance", defaults=wanted)
    return served(audited, "conformance", "test_simple_text")


@pytest.fixture
def reports(audited: LiveServer, cast: Cast) -> str:
    """Tenant `reports` (alice and bob: durable tasks) at the audited server."""
    tenant, _ = Tenant.objects.get_or_create(slug="reports", defaults={"name": "reports", "toolsets": ["long_running"]})
    tenant.members.add(cast.user("alice").pk, cast.user("bob").pk)
    return served(audited, "reports", "long_report", cast.token(audited, "alice", "reports"))


def last_id() -> int:
    """Where a test's rows begin: every row it reads has a greater id."""
    return ToolCall.objects.order_by("-id").values_list("id", flat=True).first() or 0


def rows_after(mark: int, count: int, timeout: float = 10.0, **filters: Any) -> list[ToolCall]:
    """The `count` rows written after `mark` (with `filters`), oldest first, once they are written."""
    deadline = time.monotonic() + timeout
    while True:
        rows = list(ToolCall.objects.filter(id__gt=mark, **filters).select_related("tenant", "user").order_by("id"))
        if len(rows) >= count:
            assert len(rows) == count, [(r.tool, r.outcome) for r in rows]
            return rows
        assert time.monotonic() < deadline, f"{len(rows)} of {count} rows after {timeout}s"
        time.sleep(0.05)
