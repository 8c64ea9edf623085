"""A retry's params, typed by the compiled layer (`mcp_server.compiled_calls.typed_params`), are what
the SDK's runner hands its handler (``CallToolRequestParams.model_validate``): the same model, the
same answers as the same types, the same fields set, or a refusal where the SDK refuses. And the
layer's first check of them (`checked_on_surface`) refuses exactly what the SDK runner's first check,
the 2026-07-28 surface's (``validate_client_request``), refuses.

The layer validates an answer holding only an elicitation result's keys as `ElicitResult` directly,
instead of against every member of the ``inputResponses`` union; this plays answers of every kind
through both and compares them. If an SDK upgrade adds a union member such an answer could also
be, `_only_member` finds two candidates and the layer types the params whole again (checked last).
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolRequestParams, ElicitResult
from mcp_types import _v2026_07_28 as surface
from mcp_types.methods import CLIENT_REQUESTS, validate_client_request
from pydantic import BaseModel, ValidationError

from mcp_server.compiled_calls import (
    _ELICIT_KEYS,
    CompiledToolCalls,
    _only_member,
    _surface_params,
    checked_on_surface,
    elicitation_answers,
    typed_params,
)
from tools_app.sdk import lowlevel_server

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}

ANSWERS: dict[str, Any] = {
    "accepted, text": {"q": {"action": "accept", "content": {"colour": "blue"}}},
    "accepted, every kind of value": {
        "q": {"action": "accept", "content": {"n": 3, "x": 2.5, "ok": True, "tags": ["a", "b"], "s": "t"}}
    },
    "accepted, a number as a string": {"q": {"action": "accept", "content": {"n": "3"}}},
    "accepted, no content": {"q": {"action": "accept"}},
    "accepted, content null": {"q": {"action": "accept", "content": None}},
    "declined": {"q": {"action": "decline"}},
    "cancelled, with _meta": {"q": {"action": "cancel", "_meta": {"k": "v"}}},
    "two answers": {"a": {"action": "accept", "content": {"x": "1"}}, "b": {"action": "decline"}},
    "no answers": {},
    "an unknown action": {"q": {"action": "maybe"}},
    "no action": {"q": {"content": {"x": "1"}}},
    "content not an object": {"q": {"action": "accept", "content": 5}},
    "content holding an object": {"q": {"action": "accept", "content": {"x": {"y": 1}}}},
    "content holding a list of numbers": {"q": {"action": "accept", "content": {"x": [1, 2]}}},
    "_meta not an object": {"q": {"action": "decline", "_meta": 5}},
    "an answer not an object": {"q": 5},
    "a roots answer": {"q": {"roots": [{"uri": "file:///tmp"}]}},
    "an elicitation answer with a key of another member": {"q": {"action": "accept", "roots": []}},
    "a sampling answer": {"q": {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}},
}


def params(answers: Any, **extra: Any) -> dict[str, Any]:
    return {"name": "greet", "arguments": {"name": "ann"}, "_meta": META, "inputResponses": answers} | extra


def typed_by_the_sdk(value: dict[str, Any]) -> Any:
    return CallToolRequestParams.model_validate(value, by_name=False)


def test_an_elicitation_result_is_the_only_member_its_keys_can_be() -> None:
    assert _only_member(CallToolRequestParams, _ELICIT_KEYS) is ElicitResult


def test_the_layer_types_the_params_the_sdks_handler_is_given() -> None:
    # What the SDK's runner types a tools/call's params as for its handler: the layer's `params_type`.
    entry = lowlevel_server(MCPServer("t")).get_request_handler("tools/call")
    assert entry is not None and entry.params_type is CallToolRequestParams
    member = _only_member(CallToolRequestParams, _ELICIT_KEYS)
    fast = 0
    for case, answers in ANSWERS.items():
        for extra in ({}, {"requestState": "opaque"}):
            value = params(answers, **extra)
            try:
                expected = typed_by_the_sdk(value)
            except ValidationError:
                with pytest.raises(ValidationError):
                    typed_params(CallToolRequestParams, member, value, elicitation_answers(value))
                continue
            got = typed_params(CallToolRequestParams, member, value, elicitation_answers(value))
            fast += all(type(a) is dict and a.keys() <= _ELICIT_KEYS for a in answers.values())
            assert type(got) is type(expected), case
            assert got == expected, case
            assert got.model_fields_set == expected.model_fields_set, case
            assert got.model_dump(by_alias=True) == expected.model_dump(by_alias=True), case
            assert [type(a) for a in (got.input_responses or {}).values()] == [
                type(a) for a in (expected.input_responses or {}).values()
            ], case
    assert fast >= 10, "the corpus reaches the answers validated as one member"


def test_a_union_another_member_could_also_satisfy_is_typed_whole() -> None:
    class Elicited(BaseModel):
        action: str

    class Loose(BaseModel):
        action: str | None = None

    class Params(BaseModel):
        input_responses: dict[str, Loose | Elicited] | None = None

    assert _only_member(Params, _ELICIT_KEYS) is None


# The envelope the surface requires (the handler's type above does not check it).
ENVELOPE = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}

# Params the surface refuses for something other than an answer: the rest is still checked.
OTHER_REFUSALS: dict[str, dict[str, Any]] = {
    "a name not a string": {"name": 5},
    "arguments not an object": {"arguments": [1]},
    "a requestState not a string": {"requestState": 5},
    "no _meta": {"_meta": None},
    "no client capabilities": {"_meta": META},
    "a malformed clientInfo": {"_meta": {**ENVELOPE, "io.modelcontextprotocol/clientInfo": {"name": 5}}},
}


def refused_by(check: Any, value: dict[str, Any]) -> bool:
    try:
        check(value)
    except ValidationError:
        return True
    return False


def test_an_elicitation_result_is_the_only_member_of_the_surfaces_union_its_keys_can_be() -> None:
    assert _surface_params() is surface.CallToolRequestParams
    assert _only_member(surface.CallToolRequestParams, _ELICIT_KEYS) is surface.ElicitResult
    # Checking the answers apart from the rest holds only while no validator relates them.
    for model in (CLIENT_REQUESTS[("tools/call", "2026-07-28")], surface.CallToolRequestParams):
        assert not model.__pydantic_decorators__.model_validators, model


def test_the_layer_refuses_on_the_surface_what_the_sdk_refuses() -> None:
    member = _only_member(surface.CallToolRequestParams, _ELICIT_KEYS)
    accepted_fast = refused_fast = 0
    cases = [
        (case, params(answers, _meta=ENVELOPE, **extra))
        for case, answers in ANSWERS.items()
        for extra in ({}, {"requestState": "s"})
    ]
    cases += [
        (case, {**params(ANSWERS["declined"], _meta=ENVELOPE), **other}) for case, other in OTHER_REFUSALS.items()
    ]
    for case, value in cases:
        sdk_refuses = refused_by(lambda v: validate_client_request("tools/call", "2026-07-28", v), value)
        assert refused_by(lambda v: checked_on_surface(member, v, elicitation_answers(v)), value) is sdk_refuses, case
        answers = value.get("inputResponses") or {}
        if all(type(a) is dict and a.keys() <= _ELICIT_KEYS for a in answers.values()):
            refused_fast += sdk_refuses
            accepted_fast += not sdk_refuses
    assert accepted_fast >= 10, "the corpus reaches answers the surface accepts, checked as one member"
    assert refused_fast >= len(OTHER_REFUSALS) + 6, "and answers and params it refuses"


def test_a_retry_checked_at_once_is_one_both_checks_accept_and_type_alike() -> None:
    """`CompiledToolCalls._retry_checked` (a retry of a tool whose resolvers take no Context) accepts
    only params both of the SDK's checks accept, and hands on what the handler's typing would: the
    same answers as the same types, the same state and arguments. What it does not accept is left
    to the two checks (above)."""
    layer = CompiledToolCalls(MCPServer("t"), {})
    cases = [
        (case, params(answers, _meta=meta, **extra))
        for case, answers in ANSWERS.items()
        for extra in ({}, {"requestState": "s"}, {"requestState": 5})
        for meta in (ENVELOPE, META)
    ]
    cases += [
        (case, {**params(ANSWERS["declined"], _meta=ENVELOPE), **other}) for case, other in OTHER_REFUSALS.items()
    ]
    cases += [("no answers at all", params(None, _meta=ENVELOPE, requestState="s"))]
    accepted = declined = 0
    for case, value in cases:
        if type(value["name"]) is not str or type(value["arguments"]) is not dict:
            continue  # what the layer's caller checks first
        checked = layer._retry_checked(value)
        if checked is None:
            declined += 1
            continue
        accepted += 1
        assert not refused_by(lambda v: validate_client_request("tools/call", "2026-07-28", v), value), case
        expected = typed_by_the_sdk(value)
        answers, state = checked
        assert state == expected.request_state, case
        assert answers == expected.input_responses, case
        assert [type(a) for a in (answers or {}).values()] == [
            type(a) for a in (expected.input_responses or {}).values()
        ], case
        assert value["arguments"] == expected.arguments, case
    assert accepted >= 12, "the corpus reaches retries checked at once"
    assert declined >= 20, "and retries left to the two checks"
