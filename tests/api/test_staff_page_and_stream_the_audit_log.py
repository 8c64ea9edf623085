"""Operators read the tool-call audit log with ``audit:read`` and the ``audit.view_toolcall``
permission: newest first a page at a time by cursor, filtered by tenant, user, tool, outcome and
time; or a time range as JSON Lines, oldest first, streamed in bounded batches. A userless token
holding the scope acts for no one."""

from __future__ import annotations

import json
import secrets
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest
from django.utils import timezone
from oauth2_provider.models import AccessToken

from audit.models import ToolCall
from mcpsite import services as mcpsite_services
from mcpsite.models import Tenant
from operator_api.views.audit import _lines
from tests.api.conftest import api, machine_client
from tests.conftest import Cast, LiveServer

START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def calls(cast: Cast) -> Iterator[dict[str, Any]]:
    """Seven calls at a tenant of their own, a minute apart from START: alice's five (the third
    and sixth tool errors), then bob's two; the tool's name is this test's own."""
    tenant = Tenant.objects.create(slug=f"audited-{uuid.uuid4().hex[:6]}", name="Audited", toolsets=["demo"])
    tool = f"tool_{uuid.uuid4().hex[:6]}"
    alice, bob = cast.user("alice"), cast.user("bob")
    rows = ToolCall.objects.bulk_create(
        ToolCall(
            at=START + timedelta(minutes=n),
            tenant=tenant,
            user_id=alice.pk if n < 5 else bob.pk,
            client_id="client-a",
            tool=tool,
            arguments_digest="0" * 64,
            outcome=ToolCall.Outcome.TOOL_ERROR if n in (2, 5) else ToolCall.Outcome.RESULT,
            duration_ms=1.5,
            request_id=f"req-{n}",
            generation="2026-07-28",
        )
        for n in range(7)
    )
    yield {"tenant": tenant.slug, "tool": tool, "ids": [row.pk for row in rows]}
    ToolCall.objects.filter(tool=tool).delete()


def test_staff_page_through_the_log_newest_first_by_cursor(server: LiveServer, calls: dict[str, Any]) -> None:
    seen: list[str] = []
    with api(server, machine_client(server, "ops", ["audit:read"]).token) as http:
        page = http.get("/audit/", params={"tool": calls["tool"], "page_size": 3}).json()
        while True:
            seen.extend(row["request_id"] for row in page["results"])
            if page["next"] is None:
                break
            page = http.get(page["next"]).json()
        first = http.get("/audit/", params={"tool": calls["tool"], "page_size": 1}).json()["results"][0]

    assert seen == [f"req-{n}" for n in reversed(range(7))]
    assert first == {
        "id": calls["ids"][6],
        "at": "2026-03-01T12:06:00Z",
        "tenant": calls["tenant"],
        "user": "bob",
        "client_id": "client-a",
        "issuer": "",
        "subject": "",
        "tool": calls["tool"],
        "arguments_digest": "0" * 64,
        "arguments": {},
        "outcome": "result",
        "error_code": None,
        "duration_ms": 1.5,
        "request_id": "req-6",
        "generation": "2026-07-28",
        "task_id": "",
    }


def test_staff_filter_by_tenant_user_outcome_and_time(server: LiveServer, calls: dict[str, Any]) -> None:
    def request_ids(**query: str) -> list[str]:
        answer = http.get("/audit/", params={"tool": calls["tool"], **query})
        assert answer.status_code == 200, answer.text
        return [row["request_id"] for row in answer.json()["results"]]

    with api(server, machine_client(server, "ops", ["audit:read"]).token) as http:
        assert request_ids(user="bob") == ["req-6", "req-5"]
        assert request_ids(outcome="tool_error") == ["req-5", "req-2"]
        assert request_ids(tenant=calls["tenant"], user="alice", outcome="tool_error") == ["req-2"]
        assert request_ids(since="2026-03-01T12:02:00Z", until="2026-03-01T12:04:00Z") == ["req-3", "req-2"]
        assert request_ids(since="2026-03-01T13:03:00+01:00") == ["req-6", "req-5", "req-4", "req-3"]
        assert request_ids(tenant="no-such-tenant") == []
        refused = [http.get("/audit/", params=query) for query in ({"outcome": "fine"}, {"since": "yesterday"})]
    assert [(r.status_code, *r.json()) for r in refused] == [(400, "outcome"), (400, "since")]


def test_staff_stream_a_time_range_as_json_lines_in_bounded_batches(server: LiveServer, calls: dict[str, Any]) -> None:
    with api(server, machine_client(server, "ops", ["audit:read"]).token) as http:
        query = {"tool": calls["tool"], "since": "2026-03-01T12:01:00Z", "until": "2026-03-01T12:06:00Z"}
        with http.stream("GET", "/audit/stream/", params=query) as response:
            assert response.status_code == 200
            assert response.headers["content-type"] == "application/jsonl"
            lines = list(response.iter_lines())
        paged = http.get("/audit/", params={**query, "page_size": 10}).json()["results"]
        missing_since = http.get("/audit/stream/", params={"tool": calls["tool"]})

    rows = [json.loads(line) for line in lines if line]
    assert [row["request_id"] for row in rows] == ["req-1", "req-2", "req-3", "req-4", "req-5"]
    assert rows == list(reversed(paged))  # the same fields and values as a page's rows
    assert (missing_since.status_code, missing_since.json()) == (
        400,
        {"since": "required: the start of the range to export"},
    )


def test_the_stream_reads_a_batch_at_a_time(calls: dict[str, Any]) -> None:
    """The export's generator queries one batch after the last id it sent, whatever the range."""
    batches: list[bytes] = []

    async def read() -> None:
        rows = ToolCall.objects.filter(tool=calls["tool"])
        async for chunk in _lines(rows, 3):
            batches.append(chunk)

    anyio.run(read)
    assert [chunk.count(b"\n") for chunk in batches] == [3, 3, 1]


def test_a_userless_token_with_the_audit_scope_acts_for_no_one(server: LiveServer, cast: Cast) -> None:
    token = AccessToken.objects.create(
        user=None,
        application=mcpsite_services.script_application(),
        token=secrets.token_urlsafe(32),
        expires=timezone.now() + timedelta(hours=1),
        scope="audit:read",
    ).token

    with api(server, token) as http:
        seen = [(r.status_code, r.json()) for r in (http.get("/audit/"), http.get("/audit/stream/?since=2026-01-01"))]
    assert seen == [(401, {"detail": "Authentication credentials were not provided."})] * 2
