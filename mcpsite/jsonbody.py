"""JSON from outside (a webhook, a registration, an operator API body), parsed with a bound on
its nesting.

Python's json recurses once per level: a body of 100,000 ``[`` raises `RecursionError` (not a
`ValueError`, so every ``except ValueError`` misses it and the request ends in a 500), and a body
nested a little less deep than the interpreter's limit parses but fails the same way later, when
it is encoded again for a JSONField. Nothing we accept nests more than a few levels, so a body
deeper than `MAX_DEPTH` is refused where it is parsed. The recursion limit is left alone.
"""

from __future__ import annotations

import json
from typing import Any

from mcpsite.exceptions import McpsiteError

# Stripe events nest about six levels; registration metadata and operator API bodies two or three.
MAX_DEPTH = 64


class JSONTooDeep(McpsiteError, ValueError):
    """A JSON document nested deeper than `MAX_DEPTH` (a `ValueError`, as any malformed JSON is)."""

    def __init__(self) -> None:
        super().__init__(f"JSON nested deeper than {MAX_DEPTH} levels")


def json_depth_check(value: Any) -> None:
    """`JSONTooDeep` if `value` (parsed JSON) nests deeper than `MAX_DEPTH`; walked without recursion."""
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        node, depth = pending.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > MAX_DEPTH:
            raise JSONTooDeep
        pending.extend((child, depth + 1) for child in children)


def json_loads_bounded(data: str | bytes, **kwargs: Any) -> Any:
    """`json.loads`, raising `JSONTooDeep` for a document nested deeper than `MAX_DEPTH` (and
    `ValueError` for malformed JSON, as `json.loads` does)."""
    try:
        value = json.loads(data, **kwargs)
    except RecursionError:
        raise JSONTooDeep from None
    json_depth_check(value)
    return value
