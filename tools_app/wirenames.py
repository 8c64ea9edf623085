"""Public names for the questions a tool asks: the keys of 2026-07-28 ``inputRequests``.

The SDK keys a resolver's question by the resolver's ``module:qualname``
(`mcp.server.mcpserver.resolve._state_key`), so without this the wire said
``demo.tools.demo:ask_region``: our module layout, public, and changed by any refactor.
The SDK has no seam to name a key (setting ``__module__``/``__qualname__`` still yields
``module:qualname``), so we wrap: the SDK keeps its internal keys, and `WireNamesMiddleware`
renames them at the wire.

1. At registration, `wire_names` walks the tool's resolver DAG (the SDK's own plans) and names
   each question after the parameter it fills (``region``, ``confirm``), or what the author set
   with ``Resolve(fn, name=...)`` (or, for every use of a resolver, a ``wire_name`` attribute).
2. Outbound, the middleware renames ``inputRequests`` keys and records the names it asked in the
   (then sealed) requestState.
3. Inbound, a retry whose ``inputResponses`` answers none of those names gets -32602 listing
   them, before the replay guard spends the state; otherwise the answers are renamed back.
4. Error messages the SDK words with an internal key (a capability the client lacks, a
   malformed answer) are reworded with the public name, in both generations.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver.resolve import Resolve as SdkResolve
from mcp.server.mcpserver.resolve import build_resolver_plans, find_resolved_parameters
from mcp.server.mcpserver.utilities.context_injection import find_context_parameter
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from mcp_types.methods import is_input_required
from mcp_types.version import is_version_at_least

from tools_app.exceptions import ToolsAppError
from tools_app.wirestate import unwrap_state, wire_result, wrap_state

_INPUT_REQUIRED_VERSION = "2026-07-28"
_STATE_KEY = "mcpsite.names"


class Resolve(SdkResolve):
    """The SDK's `Resolve`, with an optional public name for the question on the wire."""

    def __init__(self, fn: Callable[..., Any], *, name: str | None = None) -> None:
        super().__init__(fn)
        self.name = name


class WireNameConflict(ToolsAppError, ValueError):
    """Two different questions of one tool would share a public name."""


@dataclass(frozen=True)
class WireNames:
    """One tool's (or prompt's) questions: internal SDK key -> public name, and back."""

    public: dict[str, str]
    internal: dict[str, str]

    def scrub(self, text: str) -> str:
        for key, name in self.public.items():
            text = text.replace(repr(key), repr(name))
        return text


def wire_names(fn: Callable[..., Any], *, where: str) -> WireNames | None:
    """The public names of `fn`'s questions, or None when it asks none."""
    resolved = find_resolved_parameters(fn)
    if not resolved:
        return None
    own_context = find_context_parameter(fn)
    visible = {name for name in inspect.signature(fn).parameters if name not in resolved and name != own_context}
    # The SDK's own plan, so the keys are exactly the ones it puts on the wire (including the
    # `#1` it appends when two resolvers share a module:qualname).
    plans = list(build_resolver_plans(resolved, visible).values())
    public: dict[str, str] = {}

    def visit(marker: SdkResolve, param: str) -> None:
        plan = next(p for p in plans if p.fn == marker.fn)
        if plan.wire_key in public:
            return
        public[plan.wire_key] = getattr(marker, "name", None) or getattr(marker.fn, "wire_name", None) or param
        for name, param_plan in plan.params.items():
            if param_plan.resolve is not None:
                visit(param_plan.resolve, name)

    for param, (marker, _) in resolved.items():
        visit(marker, param)
    internal = {name: key for key, name in public.items()}
    if len(internal) != len(public):
        taken = sorted(name for name in internal if list(public.values()).count(name) > 1)
        raise WireNameConflict(
            f"{where}: two questions would both be named {', '.join(taken)} on the wire; "
            "name one with Resolve(fn, name=...)"
        )
    return WireNames(public=public, internal=internal)


def _unwrap_state(state: Any) -> tuple[Any, list[str]] | None:
    unwrapped = unwrap_state(state, _STATE_KEY)
    if unwrapped is None or not isinstance(unwrapped[1].get("asked"), list):
        return None
    inner, ours = unwrapped
    return inner, [str(name) for name in ours["asked"]]


class WireNamesMiddleware:
    """Renames question keys at the wire (see the module docstring)."""

    def __init__(self) -> None:
        self.calls: dict[tuple[str, str], WireNames] = {}

    def register(self, method: str, name: str, names: WireNames | None) -> None:
        if names is not None:
            self.calls[(method, name)] = names

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params or {}
        names = self.calls.get((ctx.method, str(params.get("name"))))
        if names is None:
            return await call_next(ctx)
        modern = ctx.protocol_version is not None and is_version_at_least(ctx.protocol_version, _INPUT_REQUIRED_VERSION)
        if modern:
            ctx = self._inbound(ctx, names)
        try:
            result = await call_next(ctx)
        except MCPError as exc:
            message = names.scrub(exc.error.message)
            if message == exc.error.message:
                raise
            raise MCPError(code=exc.error.code, message=message, data=exc.error.data) from exc
        if modern and is_input_required(result):
            return self._outbound(result, names)
        return self._scrub_error_result(result, names)

    @staticmethod
    def _inbound(ctx: ServerRequestContext[Any, Any], names: WireNames) -> ServerRequestContext[Any, Any]:
        params = dict(ctx.params or {})
        state = params.get("requestState")
        unwrapped = _unwrap_state(state)
        if unwrapped is None:
            return ctx
        inner, asked = unwrapped
        responses = params.get("inputResponses") or {}
        if responses and not any(key in asked for key in responses):
            raise MCPError(
                code=INVALID_PARAMS,
                message=(
                    f"inputResponses answers none of the pending inputRequests "
                    f"(got {', '.join(sorted(map(str, responses)))}; expected {', '.join(asked)})"
                ),
            )
        params["requestState"] = inner
        params["inputResponses"] = {names.internal[k]: v for k, v in responses.items() if k in names.internal} or None
        return replace(ctx, params=params)

    @staticmethod
    def _outbound(result: Any, names: WireNames) -> dict[str, Any]:
        wire = wire_result(result)
        requests = {names.public.get(k, k): v for k, v in (wire.get("inputRequests") or {}).items()}
        if requests:
            wire["inputRequests"] = requests
        wire["requestState"] = wrap_state(_STATE_KEY, {"asked": list(requests)}, wire.get("requestState"))
        return wire

    @staticmethod
    def _scrub_error_result(result: Any, names: WireNames) -> Any:
        is_error = result.get("isError") if isinstance(result, dict) else getattr(result, "is_error", False)
        if not is_error:
            return result
        wire = result if isinstance(result, dict) else result.model_dump(mode="json", by_alias=True, exclude_none=True)
        for block in wire.get("content") or ():
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                block["text"] = names.scrub(block["text"])
        return wire
