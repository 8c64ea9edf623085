"""Our part of a 2026-07-28 round's requestState: one typed layer around the SDK's own state.

The SDK keeps what its resolvers learnt between rounds in the state; the framework keeps a little
of its own beside it, for `tools_app.rounds.RoundMiddleware`: the public names the round asked (a
retry answering none of them is refused before the replay guard spends the state) and the
URL-mode rows it showed, each under the SDK wire key of the resolver that asked. The plaintext the
SDK's boundary seals is then

    {"mcpsite": {"v": 2, "names": ["region"], "url": {"<SDK wire key>": "<row id>"}}, "s": <SDK state>}

validated with `RoundState` on the way in. A state in neither this shape nor the one before it
(below) is not ours: it is handed on untouched, and the SDK reads it as "no progress yet", as it
always did. The boundary seals the whole, so our layer is as tamper-proof as the SDK's state. A
parked task keeps the same plaintext in its row (`mcp_tasks`), unsealed.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from mcp_types import InputRequiredResult
from pydantic import BaseModel, ConfigDict, ValidationError

_LAYER = "mcpsite"


class RoundState(BaseModel):
    """What the framework keeps of one round between it and the retry (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    v: Literal[2]
    names: list[str] = []
    """The public names of the questions the round asked (`tools_app.wirenames`)."""
    url: dict[str, str] = {}
    """The URL-mode rows the round showed, by the SDK wire key of the resolver that asked."""


def wrap_round(ours: RoundState, inner: Any) -> str:
    """The plaintext state of a round: ours around the SDK's `inner`."""
    # By hand, leaving out what is empty: pydantic's `model_dump` cost as much again on every round.
    layer: dict[str, Any] = {"v": ours.v}
    if ours.names:
        layer["names"] = ours.names
    if ours.url:
        layer["url"] = ours.url
    return json.dumps({_LAYER: layer, "s": inner}, separators=(",", ":"))


def unwrap_round(state: Any) -> tuple[Any, RoundState] | None:
    """(the SDK's state, ours), or None when `state` is not one we wrapped."""
    decoded = _decoded(state)
    return _unwrap(decoded) if decoded is not None else None


def url_steps_of_state(state: Any) -> list[str]:
    """The URL-mode steps (their row ids) a round's plaintext state records as shown to the client:
    what a parked task waits on (`mcp_tasks`)."""
    decoded = _decoded(state)
    if decoded is not None and _LAYER in decoded:
        unwrapped = _unwrap(decoded)
        return list(unwrapped[1].url.values()) if unwrapped is not None else []
    return _v1_url_steps(state)


def _unwrap(decoded: dict[str, Any]) -> tuple[Any, RoundState] | None:
    if _LAYER in decoded:
        try:
            return decoded.get("s"), RoundState.model_validate(decoded[_LAYER])
        except ValidationError:
            return None
    return _from_v1(decoded)


def _decoded(state: Any) -> dict[str, Any] | None:
    # The stdlib's parser, not pydantic's: the SDK's state may hold escaped lone surrogates
    # (`mcp.server.mcpserver.resolve._decode_state` says why), which pydantic's JSON parser refuses.
    if not isinstance(state, str):
        return None
    try:
        decoded = json.loads(state)
    except ValueError:
        return None
    return decoded if isinstance(decoded, dict) else None


def wire_result(result: InputRequiredResult | dict[str, Any] | Any) -> dict[str, Any]:
    """A handler's result as the JSON object the wire carries (a copy when it already is one)."""
    if isinstance(result, dict):
        return dict(result)
    dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


# --- the shape before (v1), read and never written ------------------------------------------
#
# Until issue 27 two middlewares each wrapped the state in a layer of their own, the names outside:
#
#     {"mcpsite.names": {"v": 1, "asked": [...]}, "s": '{"mcpsite.url": {"v": 1, "rows": {...}}, "s": <SDK>}'}
#
# (the URL layer only when the round showed a URL-mode step; its rows were already keyed by the SDK
# wire key). They are still read so that no round in flight across the deploy fails. Delete
# `_from_v1` and `_v1_url_steps` once this change has been deployed for longer than both lives such
# a state has: MCPSITE["REQUEST_STATE_TTL"] (a sealed state in a client's hands, 600 s by default)
# and TASKS["TTL_SECONDS"] (a parked task's state in its row, 24 h by default). mcp_tasks' migration
# 0003 reads the states of its own time with `url_steps_of_state`: give it a copy of
# `_v1_url_steps` then.

_V1_NAMES, _V1_URL = "mcpsite.names", "mcpsite.url"


def _from_v1(decoded: dict[str, Any]) -> tuple[Any, RoundState] | None:
    """A v1 state, read exactly as its two middlewares read it: the names layer must list what it
    asked (else the whole is not ours); a URL layer inside it is optional."""
    names = decoded.get(_V1_NAMES)
    if not isinstance(names, dict) or not isinstance(names.get("asked"), list):
        return None
    inner = decoded.get("s")
    rows: dict[str, str] = {}
    url = _decoded(inner)
    if url is not None and isinstance(url.get(_V1_URL), dict) and isinstance(url[_V1_URL].get("rows"), dict):
        inner = url.get("s")
        inner = inner if isinstance(inner, str) else None
        rows = {str(k): str(v) for k, v in url[_V1_URL]["rows"].items()}
    return inner, RoundState(v=2, names=[str(name) for name in names["asked"]], url=rows)


def _v1_url_steps(state: Any) -> list[str]:
    """The row ids of a v1 state's URL layer, found by the state's structure, whatever other
    layers wrap it."""
    for _ in range(8):  # a layer per middleware: a handful at most
        decoded = _decoded(state)
        if decoded is None:
            return []
        url = decoded.get(_V1_URL)
        if isinstance(url, dict) and isinstance(url.get("rows"), dict):
            return [str(v) for v in url["rows"].values()]
        state = decoded.get("s")
    return []
