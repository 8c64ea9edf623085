"""The resolver's progress (the plaintext inside a ``requestState``) is decoded and encoded by
`tools_app.sdk.decode_state_directly` exactly as the SDK's own `_decode_state` and `_encode_state`
do: the same models from every state (the SDK's own encodings, and states of every other form,
which go to the SDK's decoder), and the same text from every set of outcomes (data of JSON's own
types encoded directly; anything else by the SDK's encoder, refusals included).
"""

from __future__ import annotations

import datetime
import json
import math
from typing import Any

import pytest
from mcp.server.mcpserver import resolve

from tools_app.sdk import decode_state_directly

# What `mcp_server.compose.build_server` does for every tenant's server (idempotent).
decode_state_directly()
sdk_decode, sdk_encode = resolve._decode_state.sdk, resolve._encode_state.sdk  # type: ignore[attr-defined]
Entry = resolve._StateEntry


def dumped(state: Any) -> str:
    """A decoded state as comparable text (NaN included), with the models' types and set fields."""
    entries = {
        key: (type(entry).__name__, sorted(entry.model_fields_set), entry.model_dump(mode="python"))
        for key, entry in state.outcomes.items()
    }
    whole = (type(state).__name__, sorted(state.model_fields_set), state.v, entries, state.asked)
    return repr(whole)


ENCODED = [
    sdk_encode({}, {}),
    sdk_encode({}, {"pkg:ask": "q1"}),
    sdk_encode({"a": Entry(action="accept", data={"colour": "blue", "n": 2, "f": 1.5, "ok": True}, q="q1")}, {}),
    sdk_encode({"a": Entry(action="decline", q="q1"), "b": Entry(action="cancel", q=None)}, {"c": "q3"}),
    sdk_encode({"a": Entry(action="accept", data=["x", None, {"deep": [1, 2.5]}], q="q")}, {"b": "q2"}),
    sdk_encode({"a": Entry(action="accept", data="caf\u00e9 \ud800", q="q")}, {}),  # ASCII escapes, a lone surrogate
]

OTHER = [
    None,
    "",
    "not json",
    "[]",
    "null",
    '{"v": 3}',
    '{"v": "3", "outcomes": {}, "asked": {}}',
    '{"v": 3.0, "outcomes": {}, "asked": {}}',
    '{"v": true, "outcomes": {}, "asked": {}}',
    '{"v": 2, "outcomes": {}, "asked": {}}',
    '{"v": 3, "outcomes": {}, "asked": {}, "extra": 1}',
    '{"v": 3, "outcomes": [], "asked": {}}',
    '{"v": 3, "outcomes": {}, "asked": {"k": 5}}',
    '{"v": 3, "outcomes": {"k": {"action": "accept", "data": 1}}, "asked": {}}',
    '{"v": 3, "outcomes": {"k": {"action": "maybe", "data": 1, "q": "q"}}, "asked": {}}',
    '{"v": 3, "outcomes": {"k": {"action": "accept", "data": 1, "q": 7}}, "asked": {}}',
    '{"v": 3, "outcomes": {"k": {"action": "accept", "data": 1, "q": "q", "x": 0}}, "asked": {}}',
    '{"v": 3, "outcomes": {"k": ["accept"]}, "asked": {}}',
    '{"v": 3, "outcomes": {"k": {"action": "accept", "data": NaN, "q": "q"}}, "asked": {}}',
]


@pytest.mark.parametrize("state", ENCODED + OTHER)
def test_a_state_decodes_to_the_sdks_models(state: str | None) -> None:
    direct = resolve._decode_state(state)
    assert dumped(direct) == dumped(sdk_decode(state))
    assert direct.outcomes is not resolve._decode_state(state).outcomes, (
        "each call gets its own (the resolver edits it)"
    )


def test_the_sdks_own_encodings_decode_directly(monkeypatch: pytest.MonkeyPatch) -> None:
    """The corpus above is worth something only if the direct path took the SDK's encodings (and
    left the other states to the SDK's decoder, which validates them with its model)."""
    validated: list[Any] = []
    validate = resolve._State.model_validate

    def counted(raw: Any) -> Any:
        validated.append(raw)
        return validate(raw)

    monkeypatch.setattr(resolve._State, "model_validate", counted)
    for state in ENCODED:
        resolve._decode_state(state)
    assert validated == []
    for state in OTHER:
        resolve._decode_state(state)
    # All but four: None, "" and "not json" never reach the SDK's model, and NaN data (which
    # `json.loads` reads) is otherwise in the SDK's form, so it is decoded directly, alike.
    assert len(validated) == len(OTHER) - 4


OUTCOMES: list[dict[str, Any]] = [
    {},
    {"a": Entry(action="accept", data={"colour": "blue"}, q="q1")},
    {"a": Entry(action="decline", q="q1"), "b": Entry(action="cancel", q=None)},
    {"a": Entry(action="accept", data={"list": [1, 2.5, None, True, "s"], "big": 10**30}, q="q")},
    {"a": Entry(action="accept", data="caf\u00e9 \ud800 \u2028", q="q")},
    {"a": Entry(action="accept", data={"x": math.nan}, q="q")},
    {"a": Entry(action="accept", data=[math.inf], q="q")},
    {"a": Entry(action="accept", data=("t", 1), q="q")},
    {"a": Entry(action="accept", data=b"bytes", q="q")},
    {"a": Entry(action="accept", data={"when": datetime.date(2026, 12, 7)}, q="q")},
    {"a": Entry(action="accept", data={1: "int key"}, q="q")},
    {"a": Entry(action="accept", data={"o": object()}, q="q")},
]


@pytest.mark.parametrize("outcomes", OUTCOMES, ids=range(len(OUTCOMES)))
@pytest.mark.parametrize("asked", [{}, {"pkg:ask": "q1", "pkg:ask#1": "q2"}])
def test_outcomes_encode_to_the_sdks_text(outcomes: dict[str, Any], asked: dict[str, str]) -> None:
    try:
        expected: Any = sdk_encode(outcomes, asked)
    except Exception as exc:  # the SDK's encoder refuses it: so must the direct one
        with pytest.raises(type(exc)):
            resolve._encode_state(outcomes, asked)
        return
    text = resolve._encode_state(outcomes, asked)
    assert text == expected
    assert json.loads(text)["v"] == 3


def test_outcomes_of_jsons_own_types_encode_directly(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first five sets of outcomes above (JSON's own types) are encoded without the SDK's model;
    the others (NaN, infinity, a tuple, bytes, a date, an int key, an object) by the SDK's encoder."""
    dumps: list[Any] = []
    dump = resolve._State.model_dump

    def counted(self: Any, **kw: Any) -> Any:
        dumps.append(self)
        return dump(self, **kw)

    monkeypatch.setattr(resolve._State, "model_dump", counted)
    for outcomes in OUTCOMES[:5]:
        resolve._encode_state(outcomes, {"k": "q"})
    assert dumps == []
    for outcomes in OUTCOMES[5:]:
        try:
            resolve._encode_state(outcomes, {"k": "q"})
        except Exception:
            pass
    assert len(dumps) == len(OUTCOMES) - 5
