"""What the middlewares inside the requestState boundary share: their layer of the plaintext state,
and a result in its wire shape.

Two middlewares keep a little of their own in the state the SDK seals (`tools_app.urlmode`: the rows
a round showed; `tools_app.wirenames`: the public names it asked). Each wraps the state it is handed
on the way out as ``{"<layer>": {"v": 1, ...}, "s": <inner>}`` and takes exactly its own layer off
on the way in, so the SDK (and the other middleware) sees the state it wrote, untouched. The
boundary seals the whole, so a layer is as tamper-proof as the SDK's own state.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_types import InputRequiredResult


def wrap_state(layer: str, ours: dict[str, Any], inner: Any) -> str:
    return json.dumps({layer: {"v": 1, **ours}, "s": inner}, separators=(",", ":"))


def unwrap_state(state: Any, layer: str) -> tuple[Any, dict[str, Any]] | None:
    """(the inner state, this layer's fields), or None when `state` carries no such layer."""
    if not isinstance(state, str):
        return None
    try:
        decoded = json.loads(state)
    except ValueError:
        return None
    ours = decoded.get(layer) if isinstance(decoded, dict) else None
    if not isinstance(ours, dict):
        return None
    return decoded.get("s"), ours


def wire_result(result: InputRequiredResult | dict[str, Any] | Any) -> dict[str, Any]:
    """A handler's result as the JSON object the wire carries (a copy when it already is one)."""
    if isinstance(result, dict):
        return dict(result)
    dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped
