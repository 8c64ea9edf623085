"""A tenant is built on its first request, which reads its row: when that read fails (the database
unreachable; here pytest-django refuses the query, as no `django_db` mark grants it), the caller
gets 503 with `Retry-After` and the SDK's JSON-RPC error shape, not the stand-in's 401 (which
would send a client into an OAuth flow for nothing); and the failure is not remembered as an
unknown slug, so the next request tries again."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from starlette.types import Message, Scope

from mcp_server.registry import TenantRegistry


async def post(registry: TenantRegistry, slug: str) -> tuple[int, dict[str, str], Any]:
    app = await registry.app_for(slug)
    assert app is not None, "answered as an unknown tenant"
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    scope: Scope = {"type": "http", "method": "POST", "path": f"/t/{slug}/mcp", "headers": [], "query_string": b""}
    await app(scope, receive, send)
    headers = {k.decode(): v.decode() for k, v in sent[0]["headers"]}
    return sent[0]["status"], headers, json.loads(sent[1]["body"])


def test_a_tenant_whose_row_cannot_be_read_answers_503_and_is_tried_again(caplog: pytest.LogCaptureFixture) -> None:
    async def twice() -> list[tuple[int, dict[str, str], Any]]:
        registry = TenantRegistry()
        async with anyio.create_task_group() as tg:
            await registry.start(tg)
            answers = [await post(registry, "demo"), await post(registry, "demo")]
            assert registry.get("demo") is None
            tg.cancel_scope.cancel()
        return answers

    for status, headers, body in anyio.run(twice):
        assert status == 503
        assert headers["retry-after"] == "1"
        assert body["error"] == {
            "code": -32603,
            "message": "This endpoint cannot be served right now; try again shortly.",
        }
    failures = [r for r in caplog.records if r.getMessage() == "tenant demo could not be built"]
    assert len(failures) == 2  # tried again
    assert "Database access not allowed" in str(failures[0].exc_info[1] if failures[0].exc_info else "")
