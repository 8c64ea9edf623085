"""The canonical form every arguments digest is taken of (`tools_app.urlmode.canonical_digest`):
built once from the standard library's C encoder, it writes exactly what `json.JSONEncoder` with
the same options writes, so digests kept in the database (URL-mode steps, the audit log) do not
change when it is built another way, and a Python whose encoder changes fails here."""

from __future__ import annotations

import hashlib
import json
import math
from decimal import Decimal
from typing import Any

import pytest

from tools_app.urlmode import canonical_digest
from tools_app.urlmode.fulfil import _canonical, canonical_json

REFERENCE = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=_canonical)

VALUES: list[Any] = [
    {"text": "hello"},
    {"b": 1, "a": [1.5, None, True, False], "c": {"z": 1e300, "y": -0.0, "x": 10**30}},
    {"unicode": 'é ✓ \u2028 \x00 "quoted" \\ tab\t'},
    {"nan": math.nan, "inf": math.inf},
    {2: "int keys", 1: "sorted as ints, written as strings"},
    {"amount": Decimal("3.00"), "nested": [{"price": Decimal("1.10")}]},
    "a bare string",
    42,
    0.1,
    None,
    [],
    {},
    [[[[{"deep": [1, 2, 3]}]]]],
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_the_canonical_form_is_the_json_encoders_to_the_character(value: Any) -> None:
    assert canonical_json(value) == REFERENCE.encode(value)
    assert canonical_digest(value) == hashlib.sha256(REFERENCE.encode(value).encode()).hexdigest()


def test_key_order_and_a_decimals_trailing_zeros_do_not_change_the_digest() -> None:
    assert canonical_digest({"a": 1, "b": Decimal("3.00")}) == canonical_digest({"b": Decimal("3"), "a": 1})


def test_what_neither_can_encode_is_refused_alike() -> None:
    def refusal(encode: Any, value: Any) -> type[BaseException]:
        with pytest.raises(Exception) as refused:
            encode(value)
        return refused.type

    for value in ({"x": object()}, {1: "mixed", "a": "keys"}):
        assert refusal(canonical_json, value) is refusal(REFERENCE.encode, value)
