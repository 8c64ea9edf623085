"""Our part of a round's requestState is one layer, validated on the way in, around the SDK's state
untouched; a layer that is not ours in every field is not taken for ours (it goes on to the SDK
whole, which reads it as no progress), and the two nested layers written before it are still read."""

from __future__ import annotations

import json

import pytest

from tests.round_state_v1 import v1_state, wrap_state
from tools_app.roundstate import RoundState, unwrap_round, wrap_round

SDK_STATE = json.dumps({"v": 1, "outcomes": {}, "asked": {"demo.tools.demo:ask_region": "q\udc00"}})


def test_our_layer_wraps_the_sdks_state_once_and_comes_off_exactly() -> None:
    ours = RoundState(v=2, names=["region"], url={"demo.tools.payments:deposit": "el_1"})
    state = wrap_round(ours, SDK_STATE)
    assert list(json.loads(state)) == ["mcpsite", "s"]
    assert unwrap_round(state) == (SDK_STATE, ours)


@pytest.mark.parametrize(
    "layer",
    [
        {"v": 3, "names": ["region"]},
        {"v": 2, "names": "region"},
        {"v": 2, "url": {"k": 1}},
        {"v": 2, "names": [], "extra": True},
        "v2",
    ],
    ids=["another-version", "names-not-a-list", "row-not-a-string", "unknown-field", "not-an-object"],
)
def test_a_layer_that_is_not_ours_in_every_field_is_not_taken_for_ours(layer: object) -> None:
    assert unwrap_round(json.dumps({"mcpsite": layer, "s": SDK_STATE})) is None


@pytest.mark.parametrize("state", [SDK_STATE, "not json", None, json.dumps(["mcpsite"])])
def test_a_state_without_our_layer_is_not_ours(state: object) -> None:
    assert unwrap_round(state) is None


def test_the_two_nested_layers_written_before_are_read_as_one() -> None:
    old = v1_state(SDK_STATE, asked=["paid"], url_rows={"demo.tools.payments:deposit": "el_1"})
    assert unwrap_round(old) == (
        SDK_STATE,
        RoundState(v=2, names=["paid"], url={"demo.tools.payments:deposit": "el_1"}),
    )
    assert unwrap_round(v1_state(SDK_STATE, asked=["region"])) == (SDK_STATE, RoundState(v=2, names=["region"]))
    # As the old names layer read it: one that does not list what it asked was not ours.
    assert unwrap_round(wrap_state("mcpsite.names", {"keys": {}}, SDK_STATE)) is None
