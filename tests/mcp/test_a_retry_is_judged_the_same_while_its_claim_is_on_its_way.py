"""With the replay claim sent ahead of the SDK's validation of a retry (the handler waits for it,
`RefuseReplayedState`), every retry is still judged as when the claim came first: a replayed state
is refused with the frozen error whatever else is wrong with the request, and a fresh state with a
malformed answer gets the validation error and is spent (a second try is a replay)."""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import Cast, LiveServer
from tests.mcp.clients import raw_post

INVALID = {"code": -32602, "message": "Invalid or expired requestState", "data": {"reason": "invalid_request_state"}}
ARGS = {"name": "orders"}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}


def call(live: LiveServer, token: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**params, "_meta": META}}
    response = raw_post(
        live.mcp_url(), json.dumps(body).encode(), token, **{"Mcp-Method": "tools/call", "Mcp-Name": "provision"}
    )
    answer: dict[str, Any] = response.json()
    return answer


def first_round(live: LiveServer, token: str) -> str:
    result = call(live, token, {"name": "provision", "arguments": ARGS})["result"]
    assert list(result["inputRequests"]) == ["region"]
    state: str = result["requestState"]
    return state


def retry(live: LiveServer, token: str, state: str, answer: dict[str, Any]) -> dict[str, Any]:
    params = {"name": "provision", "arguments": ARGS, "inputResponses": {"region": answer}, "requestState": state}
    return call(live, token, params)


GOOD = {"action": "accept", "content": {"region": "eu-west-1"}}
MALFORMED = {"action": "maybe"}


def test_a_replayed_state_is_refused_whatever_else_is_wrong(live: LiveServer, cast: Cast) -> None:
    token = cast.token(live)
    state = first_round(live, token)
    assert retry(live, token, state, GOOD)["result"]["content"][0]["text"] == "Provisioned 'orders' in eu-west-1."
    live.mark_log()
    assert retry(live, token, state, MALFORMED)["error"] == INVALID
    live.wait_for_log("requestState rejected on tools/call: replayed")
    assert retry(live, token, state, GOOD)["error"] == INVALID


def test_a_malformed_answer_is_refused_and_spends_its_state(live: LiveServer, cast: Cast) -> None:
    token = cast.token(live)
    state = first_round(live, token)
    error = retry(live, token, state, MALFORMED)["error"]
    assert error == {"code": -32602, "message": "Invalid request parameters", "data": ""}
    live.mark_log()
    assert retry(live, token, state, GOOD)["error"] == INVALID
    live.wait_for_log("requestState rejected on tools/call: replayed")
