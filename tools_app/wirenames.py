"""Public names for the questions a tool asks: the keys of 2026-07-28 ``inputRequests``.

The SDK keys a resolver's question by the resolver's ``module:qualname``
(`mcp.server.mcpserver.resolve._state_key`), so without this the wire said
``demo.tools.demo:ask_region``: our module layout, public, and changed by any refactor.
The SDK has no seam to name a key (setting ``__module__``/``__qualname__`` still yields
``module:qualname``), so we wrap: the SDK keeps its internal keys, and the framework's round
layer (`tools_app.rounds.RoundMiddleware`) renames them at the wire.

At registration, `wire_names` walks the tool's resolver DAG (the SDK's own plans) and names each
question after the parameter it fills (``region``, ``confirm``), or what the author set with
``Resolve(fn, name=...)`` (or, for every use of a resolver, a ``wire_name`` attribute). It also
keeps which resolver asks under which SDK key, so a URL-mode step is found again by the key of
the resolver that asked it (`tools_app.rounds.Round`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp.server.mcpserver.resolve import Resolve as SdkResolve
from mcp.server.mcpserver.resolve import build_resolver_plans, find_resolved_parameters
from mcp.server.mcpserver.utilities.context_injection import find_context_parameter

from tools_app.exceptions import ToolsAppError


class Resolve(SdkResolve):
    """The SDK's `Resolve`, with an optional public name for the question on the wire."""

    def __init__(self, fn: Callable[..., Any], *, name: str | None = None) -> None:
        super().__init__(fn)
        self.name = name


class WireNameConflict(ToolsAppError, ValueError):
    """Two different questions of one tool would share a public name."""


@dataclass(frozen=True)
class WireNames:
    """One tool's (or prompt's) questions: internal SDK key -> public name, and back; and each
    resolver -> the SDK key it asks under."""

    public: dict[str, str]
    internal: dict[str, str]
    askers: dict[Callable[..., Any], str] = field(default_factory=dict)

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
    askers: dict[Callable[..., Any], str] = {}

    def visit(marker: SdkResolve, param: str) -> None:
        plan = next(p for p in plans if p.fn == marker.fn)
        if plan.wire_key in public:
            return
        askers[plan.fn] = plan.wire_key
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
    return WireNames(public=public, internal=internal, askers=askers)
