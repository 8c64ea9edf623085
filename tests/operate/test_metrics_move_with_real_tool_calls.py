"""The counters move with what a live server does: tool calls by tool and outcome with their
duration, input-required rounds, requests by generation, token cache hits, refused requestStates
by reason, and the gauges read from the database when scraped."""

from __future__ import annotations

import json

import anyio

from tests.conftest import Cast, LiveServer
from tests.mcp.clients import accept, connect, modern_post, raw_post, text
from tests.operate.scrape import moved, scrape, value

CALLS = "mcpsite_tool_calls_total"
ROUNDS = "mcpsite_input_required_rounds_total"
REQUESTS = "mcpsite_mcp_requests_total"
DURATION = "mcpsite_tool_call_duration_seconds_count"


def provision(url: str, token: str | None, mode: str) -> str:
    async def run() -> str:
        async with connect(url, token, mode=mode, answer=accept(region="eu-west-1")) as client:
            return text(await client.call_tool("provision", {"name": "orders"}))

    return anyio.run(run)


def test_a_modern_call_with_a_question_counts_one_round_and_one_completed_call(live: LiveServer, cast: Cast) -> None:
    token = cast.token(live)
    provision(live.mcp_url(), token, "2026-07-28")  # the token is cached from now on
    before = scrape(live.url)

    assert provision(live.mcp_url(), token, "2026-07-28") == "Provisioned 'orders' in eu-west-1."

    after = scrape(live.url)
    assert moved(before, after, CALLS, tool="provision", outcome="input_required") == 1
    assert moved(before, after, CALLS, tool="provision", outcome="ok") == 1
    assert moved(before, after, ROUNDS, method="tools/call") == 1
    assert moved(before, after, DURATION, tool="provision") == 2
    assert moved(before, after, REQUESTS, generation="2026-07-28", outcome="input_required") == 1
    assert moved(before, after, REQUESTS, generation="2026-07-28", outcome="ok") >= 1
    assert moved(before, after, "mcpsite_token_cache_lookups_total", result="hit") >= 2
    assert value(after, "mcpsite_tool_call_duration_seconds_sum", tool="provision") > 0


def test_a_legacy_session_counts_as_the_2025_11_25_generation(live: LiveServer, cast: Cast) -> None:
    token = cast.token(live)
    before = scrape(live.url)

    assert provision(live.mcp_url(), token, "legacy") == "Provisioned 'orders' in eu-west-1."

    after = scrape(live.url)
    assert moved(before, after, CALLS, tool="provision", outcome="ok") == 1
    assert moved(before, after, REQUESTS, generation="2025-11-25", outcome="ok") >= 2  # initialize, the call
    assert moved(before, after, REQUESTS, generation="2026-07-28", outcome="ok") == 0


def test_a_tool_the_server_does_not_have_is_counted_as_unknown_and_an_error(live: LiveServer) -> None:
    before = scrape(live.url)

    params = {"name": "no-such-tool-x1", "arguments": {}}
    response = modern_post(live.mcp_url("open"), "tools/call", params, **{"Mcp-Name": "no-such-tool-x1"})
    assert response.status_code == 200, response.text
    assert "error" in response.json() or response.json()["result"].get("isError")

    after = scrape(live.url)
    assert not any(("no-such-tool-x1" in str(labels)) for _, labels in after)
    unknown = sum(moved(before, after, CALLS, tool="unknown", outcome=o) for o in ("error", "tool_error"))
    assert unknown == 1


def test_a_tampered_request_state_is_counted_by_its_reason(live: LiveServer, cast: Cast) -> None:
    token = cast.token(live)
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    }
    headers = {"Mcp-Method": "tools/call", "Mcp-Name": "provision"}

    def call(params: dict[str, object]) -> dict[str, object]:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**params, "_meta": meta}}
        answer: dict[str, object] = raw_post(live.mcp_url(), json.dumps(body).encode(), token, **headers).json()
        return answer

    first = call({"name": "provision", "arguments": {"name": "orders"}})["result"]
    assert isinstance(first, dict)
    retry = {
        "name": "provision",
        "arguments": {"name": "other"},  # not the call the state was minted for
        "inputResponses": {"region": {"action": "accept", "content": {"region": "eu-west-1"}}},
        "requestState": first["requestState"],
    }
    before = scrape(live.url)

    assert call(retry)["error"] == {
        "code": -32602,
        "message": "Invalid or expired requestState",
        "data": {"reason": "invalid_request_state"},
    }
    retry["arguments"], retry["requestState"] = {"name": "orders"}, "not-a-sealed-state"
    assert "error" in call(retry)

    after = scrape(live.url)
    assert moved(before, after, "mcpsite_request_state_refusals_total", reason="request binding") == 1
    assert moved(before, after, "mcpsite_request_state_refusals_total", reason="malformed") == 1
    assert moved(before, after, CALLS, tool="provision", outcome="error") == 2


def test_the_database_gauges_are_read_when_scraped(live: LiveServer) -> None:
    samples = scrape(live.url)

    assert value(samples, "mcpsite_keyring_keys", phase="minting") == 1
    for kind in ("payment", "approval", "consent"):
        assert ("mcpsite_pending_elicitations", frozenset({("kind", kind)})) in samples
    for status in ("working", "input_required", "completed", "failed", "cancelled"):
        assert ("mcpsite_tasks", frozenset({("status", status)})) in samples
    assert ("mcpsite_tasks_queued", frozenset()) in samples
