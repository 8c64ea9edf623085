"""The keys of 2026-07-28 inputRequests are public wire names (the parameter a question fills, or
what its author set), never our module paths; a retry answering none of them gets -32602 naming
the expected keys, and the same requestState still works afterwards."""

from __future__ import annotations

import json
from typing import Annotated, Any

import httpx2

from tests.conftest import Cast, LiveServer
from tests.mcp.clients import modern_post, raw_post
from tools_app.wirenames import Resolve, wire_names

FORM: dict[str, Any] = {"elicitation": {"form": {}}}


def call(url: str, token: str, arguments: dict[str, Any], **extra: Any) -> httpx2.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "provision",
            "arguments": arguments,
            **extra,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": FORM,
            },
        },
    }
    return raw_post(url, json.dumps(body).encode(), token, **{"Mcp-Method": "tools/call", "Mcp-Name": "provision"})


def test_input_requests_are_keyed_by_the_parameter_and_a_wrong_key_is_refused_without_spending_the_state(
    live: LiveServer, cast: Cast
) -> None:
    token, url = cast.token(live), live.mcp_url()
    first = call(url, token, {"name": "orders"}).json()["result"]
    assert list(first["inputRequests"]) == ["region"]
    state = first["requestState"]

    answer = {"action": "accept", "content": {"region": "eu-west-1"}}
    wrong = call(
        url, token, {"name": "orders"}, inputResponses={"demo.tools.demo:ask_region": answer}, requestState=state
    ).json()
    assert wrong["error"] == {
        "code": -32602,
        "message": "inputResponses answers none of the pending inputRequests "
        "(got demo.tools.demo:ask_region; expected region)",
    }

    right = call(url, token, {"name": "orders"}, inputResponses={"region": answer}, requestState=state).json()
    assert right["result"]["content"][0]["text"] == "Provisioned 'orders' in eu-west-1."


async def ask() -> str:
    return "x"


async def other() -> str:
    return "y"


other.wire_name = "colour"  # type: ignore[attr-defined]


async def tool(a: Annotated[str, Resolve(ask, name="flavour")], b: Annotated[str, Resolve(other)]) -> str:
    return a + b


def test_an_author_set_name_and_the_resolvers_own_name_win_over_the_parameter() -> None:
    names = wire_names(tool, where="tool 'tool'")
    assert names is not None
    assert sorted(names.public.values()) == ["colour", "flavour"]
    assert all(":" in key for key in names.public)  # the SDK's internal keys stay internal


def test_an_sdk_error_about_a_question_names_it_by_its_public_name(live: LiveServer, cast: Cast) -> None:
    response = modern_post(
        live.mcp_url(),
        "tools/call",
        {"name": "provision", "arguments": {"name": "orders"}},
        token=cast.token(live),
        **{"Mcp-Name": "provision"},
    )
    error = response.json()["error"]
    assert (error["code"], error["message"]) == (
        -32021,
        "Client did not declare the form elicitation capability required by resolver 'region'",
    )
