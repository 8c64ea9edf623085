"""How a step is fulfilled, in each generation: `url_step` (the resolver decorator) opens or reuses
the step's row through the registered `UrlStepStore`, then

- 2025-11-25: asks over the back-channel and waits in-call (`_fulfil_back_channel`);
- 2026-07-28: records the pending step in the call's `tools_app.rounds.Round` under the SDK wire key
  of the resolver that asked, and returns the SDK a private `Elicit` subclass (`_UrlAsk`) as its
  placeholder, which `RoundMiddleware` finds under that key, renders as a URL-mode request and
  carries in requestState; a retry whose row is still pending is held open up to the store's
  `hold_seconds()`.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pydantic_core
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Elicit as SdkElicit
from mcp.server.mcpserver.utilities.context_injection import find_context_parameter
from mcp.shared.exceptions import MCPError, UrlElicitationRequiredError
from mcp_types import (
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    ClientCapabilities,
    ElicitationCapability,
    ElicitRequestURLParams,
    FormElicitationCapability,
    MissingRequiredClientCapabilityErrorData,
    UrlElicitationCapability,
)
from mcp_types.version import is_version_at_least
from pydantic import BaseModel, ConfigDict

from tools_app.principal import Principal
from tools_app.rounds import INPUT_REQUIRED_VERSION, UrlAsk, current_round
from tools_app.sdk import sdk_tool
from tools_app.toolsets import CONTEXT_PARAMETER, present_as, resolved_parameters, tenant_of
from tools_app.urlmode.steps import UrlOutcome, UrlStep
from tools_app.urlmode.store import PendingStep, StepRefused, StepState, UrlStepStore

# --- the resolver decorator ---------------------------------------------------------------


def url_step(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Make `fn` (a resolver that may return a `UrlStep`) resolve to the step's `UrlOutcome`.

    `fn` keeps its parameters (tool arguments by name, other `Resolve(...)` dependencies, the
    `Context`); a value that is not a step passes through unchanged, so a resolver can skip
    the step (nothing to pay) by returning an outcome itself.
    """
    own_context = find_context_parameter(fn)
    parameters = resolved_parameters(fn) + ([] if own_context is not None else [CONTEXT_PARAMETER])

    async def resolver(**kwargs: Any) -> Any:
        ctx = kwargs[own_context] if own_context is not None else kwargs.pop(CONTEXT_PARAMETER.name)
        result = fn(**kwargs)
        if inspect.isawaitable(result):
            result = await result
        if not isinstance(result, UrlStep):
            return result
        return await _fulfil(result, ctx, asker=resolver)

    return present_as(resolver, fn, parameters)


# --- fulfilling a step --------------------------------------------------------------------


class _UrlOpened(BaseModel):
    """Placeholder form schema of the private marker; never reaches the wire."""

    model_config = ConfigDict(title="Open the link")


class _UrlAsk(SdkElicit[_UrlOpened]):
    """A pending step as the SDK sees it: a form question it batches and tracks like any other."""

    def __init__(self, message: str) -> None:
        super().__init__(message, _UrlOpened)


def _uses_input_required(ctx: Context[Any, Any]) -> bool:
    version = ctx.protocol_version
    return version is not None and is_version_at_least(version, INPUT_REQUIRED_VERSION)


def _client_address(ctx: Context[Any, Any]) -> str:
    """The caller's address (uvicorn's, which believes X-Forwarded-For from a trusted proxy only):
    what an anonymous caller's unfinished steps are counted against."""
    client = getattr(ctx.request_context.request, "client", None)
    return str(getattr(client, "host", "") or "")


def _canonical(value: Any) -> Any:
    """JSON for what `json` cannot encode; a Decimal by its value, so 3, "3" and "3.00" are one."""
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    return pydantic_core.to_jsonable_python(value)


def _call_identity(ctx: Context[Any, Any]) -> tuple[str, str]:
    """The tool and the digest of its arguments *as the tool's own model validated them*: `1`,
    `"1"` and `1.0` for an `int` are one call (one row, one charge), not three. The arguments
    already passed that validation (the SDK ran it before any resolver), so this cannot fail."""
    params = ctx.request_context.params or {}
    name = str(params.get("name", ""))
    digest = arguments_digest(ctx.mcp_server, name, params.get("arguments") or {})
    if digest is None:
        raise RuntimeError(f"URL-mode step outside a registered tool ({name!r})")
    return name, digest


def arguments_digest(server: Any, name: str, arguments: dict[str, Any]) -> str | None:
    """The digest a step of tool `name` called with `arguments` is kept under (None: no such tool).
    Raises pydantic's `ValidationError` for arguments the tool would refuse. Also what a view of
    the step finds its row by (`approvals.ui_views`)."""
    tool = sdk_tool(server, name)
    if tool is None:
        return None
    meta = tool.fn_metadata
    validated = meta.arg_model.model_validate(meta.pre_parse_json(arguments)).model_dump(by_alias=True)
    return canonical_digest(validated)


def canonical_digest(value: Any) -> str:
    """SHA-256 of `value` as canonical JSON (sorted keys, no spaces, a Decimal by its value): the
    one form every arguments digest is taken of. Called alone for arguments no tool validated (an
    unknown tool, arguments it refused), which the audit log digests as sent (`audit.writer`)."""
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()


def _canonical_json() -> Callable[[Any], str]:
    """The canonical form's encoder, built once. `json.JSONEncoder.encode` builds its C encoder
    anew on every call (with a dict to detect cycles), most of a small digest's cost; built once
    here with the same arguments, less the cycle check: a value parsed from JSON, or a model's
    dump of one, has no cycle (one would end in RecursionError, not ValueError). What it writes is
    `JSONEncoder.encode`'s, to the character (tests/unit/test_canonical_digest.py)."""
    options = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=_canonical)
    make = getattr(json.encoder, "c_make_encoder", None)  # untyped: the C accelerator's, or None
    if make is None:  # a Python built without the C accelerator: the encoder as it is
        return options.encode
    encode = make(
        None, options.default, json.encoder.encode_basestring_ascii, None, ":", ",", True, False, True
    )  # markers, default, encoder, indent, key and item separators, sort_keys, skipkeys, allow_nan

    def canonical(value: Any) -> str:
        return "".join(encode(value, 0))

    return canonical


canonical_json = _canonical_json()
"""`value` as canonical JSON text (`canonical_digest`'s form)."""


def _require_url_elicitation(ctx: Context[Any, Any], *, tool: str, modern: bool) -> None:
    """Refuse, before any row exists, a client that did not declare URL-mode elicitation (the
    spec forbids sending it one), the way the SDK refuses a missing capability (-32021).

    At 2026-07-28 the step also rides the SDK as a form question, which the SDK checks against
    the form capability; a client without it is refused here too, instead of after the row."""
    elicitation = ctx.client_capabilities.elicitation if ctx.client_capabilities is not None else None
    has_url = elicitation is not None and elicitation.url is not None
    has_form = elicitation is not None and elicitation.form is not None
    if has_url and (has_form or not modern):
        return
    needs_form = modern and not has_form
    required = ClientCapabilities(
        elicitation=ElicitationCapability(
            form=FormElicitationCapability() if needs_form else None, url=UrlElicitationCapability()
        )
    )
    name = "form and url elicitation capabilities" if needs_form else "url elicitation capability"
    data = MissingRequiredClientCapabilityErrorData(required_capabilities=required)
    raise MCPError(
        code=MISSING_REQUIRED_CLIENT_CAPABILITY,
        message=f"Client did not declare the {name} required by tool {tool!r}",
        data=data.model_dump(by_alias=True, mode="json", exclude_none=True),
    )


async def _fulfil(step: UrlStep, ctx: Context[Any, Any], *, asker: Callable[..., Any]) -> Any:
    modern = _uses_input_required(ctx)
    round_ = current_round.get()
    if modern and round_ is None:
        raise RuntimeError("URL-mode steps need their toolset to be a tools_app.urlmode.UrlModeToolset")
    tool, args_digest = _call_identity(ctx)
    _require_url_elicitation(ctx, tool=tool, modern=modern)
    store = tenant_of(ctx).url_steps
    if store is None:
        raise RuntimeError("this tenant's server was built without a URL-step store (TenantInfo.url_steps)")
    try:
        state = await store.open(
            step,
            tenant_id=tenant_of(ctx).id,
            principal=Principal.current(),
            tool=tool,
            args_digest=args_digest,
            known_ids=list(round_.shown) if round_ is not None else [],
            client_address=_client_address(ctx),
        )
    except StepRefused as exc:
        raise ToolError(str(exc)) from exc
    if not isinstance(state, PendingStep):
        return state
    if not modern:
        return await _fulfil_back_channel(state, ctx, store)
    assert round_ is not None
    shown = state.elicitation_id in round_.shown
    if shown:
        answer = round_.shown[state.elicitation_id]
        if answer in ("decline", "cancel"):
            state = await store.end_by_client(state, answer)
        else:
            state = await store.wait_for_end(state, store.hold_seconds())
        if not isinstance(state, PendingStep):
            return state
    round_.ask(asker, UrlAsk(elicitation_id=state.elicitation_id, message=state.message, url=state.url, shown=shown))
    return _UrlAsk(state.message)


def _ended(state: StepState) -> UrlOutcome:
    if isinstance(state, PendingStep):
        raise ValueError(f"elicitation {state.elicitation_id} is still pending")
    return state


async def _fulfil_back_channel(step: PendingStep, ctx: Context[Any, Any], store: UrlStepStore) -> UrlOutcome:
    """2025-11-25: ask now over the back-channel, then wait in-call for the row to end."""
    answer = await ctx.elicit_url(step.message, step.url, step.elicitation_id)
    if answer.action != "accept":
        return _ended(await store.end_by_client(step, answer.action))
    store.notify_session_on_end(step.elicitation_id, ctx.session)
    state = await store.wait_for_end(step, store.legacy_wait_seconds())
    if not isinstance(state, PendingStep):
        return state
    # Still open: tell the client to retry once notifications/elicitation/complete names it.
    raise UrlElicitationRequiredError(
        [ElicitRequestURLParams(message=state.message, url=state.url, elicitation_id=state.elicitation_id)]
    )
