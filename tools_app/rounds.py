"""The framework's one layer inside the requestState boundary: `RoundMiddleware`.

For each tool (or prompt) that asks questions it does two jobs at the 2026-07-28 wire, and keeps
what it needs between rounds in one typed layer of the state (`tools_app.roundstate.RoundState`):

1. Public names (`tools_app.wirenames`): outbound, ``inputRequests`` keys are renamed from the
   SDK's internal keys to their public names, which the state records; inbound, a retry whose
   ``inputResponses`` answers none of them gets -32602 listing them (before the replay guard,
   further in, spends the state), and otherwise the answers are renamed back. An SDK error worded
   with an internal key is reworded with the public name, in both generations.
2. URL-mode steps (`tools_app.urlmode`, for the tools of a `UrlModeToolset`): this call's `Round`
   is where a `url_step` resolver leaves its pending step, under its own SDK wire key, before it
   hands the SDK a placeholder form question; outbound, the request under that key becomes a
   URL-mode request (or is dropped: the client already has the link) and the state records the
   row under the key; inbound, the client's answers to those keys are taken out before the SDK
   sees them.

A call of anything that asks nothing passes straight through: one dict lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from mcp_types.methods import is_input_required
from mcp_types.version import is_version_at_least

from tools_app.roundstate import RoundState, unwrap_round, wire_result, wrap_round
from tools_app.wirenames import WireNames

INPUT_REQUIRED_VERSION = "2026-07-28"


@dataclass
class UrlAsk:
    """A URL-mode step a resolver asks this round."""

    elicitation_id: str
    message: str
    url: str
    shown: bool
    """The client was shown it in an earlier round: it has the link, and only needs to retry."""


@dataclass
class Round:
    """One 2026-07-28 call of a tool that may take URL-mode steps: the rows the client was already
    shown (-> its answer this round, if any) and the steps its resolvers ask, by SDK wire key."""

    askers: Mapping[Callable[..., Any], str]
    """The tool's resolvers -> their SDK wire keys (`WireNames.askers`)."""
    shown: dict[str, str | None] = field(default_factory=dict)
    asks: dict[str, UrlAsk] = field(default_factory=dict)

    def ask(self, asker: Callable[..., Any], step: UrlAsk) -> None:
        """Record `step`, asked by the resolver `asker`, under the key the SDK asks it by."""
        key = self.askers.get(asker)
        if key is None:  # the SDK planned the tool's resolvers; this one is not among them
            raise RuntimeError(f"resolver {getattr(asker, '__qualname__', asker)!r} is not one this tool's plan knows")
        self.asks[key] = step


current_round: ContextVar[Round | None] = ContextVar("mcpsite_round", default=None)


@dataclass(frozen=True)
class _Asking:
    """What the middleware knows of one registered tool or prompt that asks questions."""

    names: WireNames
    url_steps: bool = False


class RoundMiddleware:
    """Public question names and URL-mode steps at the wire (see the module docstring)."""

    def __init__(self) -> None:
        self.calls: dict[tuple[str, str], _Asking] = {}

    def register(self, method: str, name: str, names: WireNames | None) -> None:
        if names is not None:
            self.calls[(method, name)] = _Asking(names)

    def allow_url_steps(self, tool: str) -> None:
        """Let `tool`'s resolvers take URL-mode steps (its toolset is a `UrlModeToolset`)."""
        asking = self.calls.get(("tools/call", tool))
        if asking is not None:
            self.calls[("tools/call", tool)] = replace(asking, url_steps=True)

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params or {}
        asking = self.calls.get((ctx.method, str(params.get("name"))))
        if asking is None:
            return await call_next(ctx)
        names = asking.names
        modern = ctx.protocol_version is not None and is_version_at_least(ctx.protocol_version, INPUT_REQUIRED_VERSION)
        round_ = Round(names.askers) if modern and asking.url_steps else None
        if modern:
            ctx = _inbound(ctx, names, round_)
        token = current_round.set(round_) if round_ is not None else None
        try:
            result = await call_next(ctx)
        except MCPError as exc:
            message = names.scrub(exc.error.message)
            if message == exc.error.message:
                raise
            raise MCPError(code=exc.error.code, message=message, data=exc.error.data) from exc
        finally:
            if token is not None:
                current_round.reset(token)
        if modern and is_input_required(result):
            return _outbound(result, names, round_)
        return _scrub_error_result(result, names)


def _inbound(
    ctx: ServerRequestContext[Any, Any], names: WireNames, round_: Round | None
) -> ServerRequestContext[Any, Any]:
    params = dict(ctx.params or {})
    unwrapped = unwrap_round(params.get("requestState"))
    if unwrapped is None:
        return ctx
    inner, ours = unwrapped
    responses = params.get("inputResponses") or {}
    if responses and not any(key in ours.names for key in responses):
        raise MCPError(
            code=INVALID_PARAMS,
            message=(
                f"inputResponses answers none of the pending inputRequests "
                f"(got {', '.join(sorted(map(str, responses)))}; expected {', '.join(ours.names)})"
            ),
        )
    answers = {names.internal[k]: v for k, v in responses.items() if k in names.internal}
    if round_ is not None:
        for key, elicitation_id in ours.url.items():
            answer = answers.pop(key, None)
            round_.shown[elicitation_id] = answer.get("action") if isinstance(answer, dict) else None
    params["requestState"] = inner
    params["inputResponses"] = answers or None
    return replace(ctx, params=params)


def _outbound(result: Any, names: WireNames, round_: Round | None) -> dict[str, Any]:
    wire = wire_result(result)
    url = _show_url_steps(wire, round_) if round_ is not None and round_.asks else {}
    requests = {names.public.get(k, k): v for k, v in (wire.get("inputRequests") or {}).items()}
    if requests:
        wire["inputRequests"] = requests
    wire["requestState"] = wrap_round(RoundState(v=2, names=list(requests), url=url), wire.get("requestState"))
    return wire


def _show_url_steps(wire: dict[str, Any], round_: Round) -> dict[str, str]:
    """Swap each placeholder the SDK asks for a step's URL-mode request (or drop it: the client
    has the link already); the rows shown, by the key they were asked under."""
    requests = dict(wire.get("inputRequests") or {})
    rows: dict[str, str] = {}
    for key, ask in round_.asks.items():
        request = requests.get(key)
        if not isinstance(request, dict) or request.get("method") != "elicitation/create":
            continue
        rows[key] = ask.elicitation_id
        if ask.shown:
            del requests[key]
        else:
            url_params = {"mode": "url", "message": ask.message, "url": ask.url}
            requests[key] = {"method": "elicitation/create", "params": url_params}
    if requests:
        wire["inputRequests"] = requests
    else:
        wire.pop("inputRequests", None)
    return rows


def _scrub_error_result(result: Any, names: WireNames) -> Any:
    is_error = result.get("isError") if isinstance(result, dict) else getattr(result, "is_error", False)
    if not is_error:
        return result
    wire = result if isinstance(result, dict) else result.model_dump(mode="json", by_alias=True, exclude_none=True)
    for block in wire.get("content") or ():
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            block["text"] = names.scrub(block["text"])
    return wire
