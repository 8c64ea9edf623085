"""The requestState plaintext as it was written before issue 27 (item 3): each of two middlewares
wrapped the state in a layer of its own (`tools_app/wirestate.py`, `wrap_state`, copied here as it
was). The tests that show such a state is still read build it with this; delete it with the
reader (`tools_app.roundstate._from_v1`)."""

from __future__ import annotations

import json
from typing import Any


def wrap_state(layer: str, ours: dict[str, Any], inner: Any) -> str:
    return json.dumps({layer: {"v": 1, **ours}, "s": inner}, separators=(",", ":"))


def v1_state(sdk_state: str, *, asked: list[str], url_rows: dict[str, str] | None = None) -> str:
    """What the two middlewares left around the SDK's state: the URL-mode layer (when the round
    showed a step) inside the public names' layer."""
    inner = wrap_state("mcpsite.url", {"rows": url_rows}, sdk_state) if url_rows is not None else sdk_state
    return wrap_state("mcpsite.names", {"asked": asked}, inner)
