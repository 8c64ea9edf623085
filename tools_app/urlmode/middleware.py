"""The 2026-07-28 wire side of URL-mode steps: `UrlModeMiddleware` swaps a pending step's
placeholder form question for a URL-mode request on the way out, records its row in requestState,
and takes the client's URL-mode answer out on the way in; `UrlModeToolset` installs it."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp_types import InputRequiredResult
from mcp_types.methods import is_input_required
from mcp_types.version import is_version_at_least

from tools_app.urlmode.fulfil import INPUT_REQUIRED_VERSION, Round, current_round
from tools_app.wirestate import unwrap_state, wire_result, wrap_state

_STATE_KEY = "mcpsite.url"


def _unwrap_state(state: Any) -> tuple[str | None, dict[str, str]] | None:
    unwrapped = unwrap_state(state, _STATE_KEY)
    if unwrapped is None or not isinstance(unwrapped[1].get("rows"), dict):
        return None
    inner, ours = unwrapped
    return (inner if isinstance(inner, str) else None), {str(k): str(v) for k, v in ours["rows"].items()}


def url_steps_of_state(state: Any) -> list[str]:
    """The URL-mode steps (their row ids) a round's plaintext state records as shown to the client,
    found by the state's structure, whatever other layers wrap it (`tools_app.wirestate`)."""
    for _ in range(8):  # a layer per middleware: a handful at most
        if not isinstance(state, str):
            return []
        ours = _unwrap_state(state)
        if ours is not None:
            return list(ours[1].values())
        try:
            decoded = json.loads(state)
        except ValueError:
            return []
        state = decoded.get("s") if isinstance(decoded, dict) else None
    return []


class UrlModeMiddleware:
    """Translates URL-mode steps at the 2026-07-28 wire (see the module docstring).

    Sits inside the SDK's requestState boundary, so it reads and writes the plaintext state;
    the boundary seals what it returns.
    """

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != "tools/call" or not is_version_at_least(ctx.protocol_version, INPUT_REQUIRED_VERSION):
            return await call_next(ctx)
        round_ = Round()
        params = dict(ctx.params or {})
        state = params.get("requestState")
        unwrapped = _unwrap_state(state)
        if unwrapped is not None:
            inner, rows = unwrapped
            responses = dict(params.get("inputResponses") or {})
            for key, elicitation_id in rows.items():
                answer = responses.pop(key, None)
                round_.shown[elicitation_id] = answer.get("action") if isinstance(answer, dict) else None
            params["requestState"] = inner
            params["inputResponses"] = responses or None
            ctx = replace(ctx, params=params)
        token = current_round.set(round_)
        try:
            result = await call_next(ctx)
        finally:
            current_round.reset(token)
        if not round_.asks or not is_input_required(result):
            return result
        return self._rewrite(result, round_)

    @staticmethod
    def _rewrite(result: InputRequiredResult | dict[str, Any], round_: Round) -> dict[str, Any]:
        wire = wire_result(result)
        requests = dict(wire.get("inputRequests") or {})
        rows: dict[str, str] = {}
        for key, request in list(requests.items()):
            ask = round_.asks.get(str((request.get("params") or {}).get("message")))
            if request.get("method") != "elicitation/create" or ask is None:
                continue
            rows[key] = ask.elicitation_id
            if ask.shown:  # the client has the link; it only needs to poll
                del requests[key]
            else:
                url_params = {"mode": "url", "message": ask.message, "url": ask.url}
                requests[key] = {"method": "elicitation/create", "params": url_params}
        if requests:
            wire["inputRequests"] = requests
        else:
            wire.pop("inputRequests", None)
        wire["requestState"] = wrap_state(_STATE_KEY, {"rows": rows}, wire.get("requestState"))
        return wire
