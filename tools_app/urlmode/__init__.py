"""URL-mode steps for tool authors: payments, staff approvals and consent, resolver style.

A resolver decorated with `url_step` returns a step (`Payment`, `Approval`, `Consent`) the way a
form resolver returns `Elicit`; the tool receives how it ended (`Completed`, `Declined`,
`Cancelled`, `Expired`) through ``Annotated[UrlOutcome, Resolve(resolver)]``. Every step is a
row kept by the registered `UrlStepStore` (`approvals` provides it: an `Elicitation`), reused by a
repeated call, so it survives restarts and is completed by a webhook, a staff decision or the user
on a page, in whichever process.

The SDK's resolvers know form questions (`Elicit`) but no URL mode, so the step rides the SDK's
own machinery and is translated at its public seams (see README, "URL-mode elicitations"):

- 2025-11-25: the resolver itself asks over the back-channel (`Context.elicit_url`, the row id as
  elicitation id), waits in-call for the row to end, else answers the SDK's
  `UrlElicitationRequiredError` (-32042); ``notifications/elicitation/complete`` follows from
  whichever process holds the session (the store's `notify_session_on_end`).
- 2026-07-28: a pending step is returned to the SDK as a private `Elicit` subclass, so it is
  batched and carried in requestState exactly like the tool's form questions; `UrlModeMiddleware`
  (inside the requestState boundary, installed by `UrlModeToolset`) swaps its rendering for a
  URL-mode request on the way out, records the row id in the state, and takes the client's
  URL-mode answer out again on the way in. A retry whose row is still pending is held open up to
  the store's `hold_seconds()` (``APPROVALS["HOLD_SECONDS"]``) and otherwise answered with the request state alone.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import typing
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any, Protocol, cast

import pydantic_core
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import principal_components
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Elicit as SdkElicit
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.context_injection import find_context_parameter
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from mcp.shared.exceptions import MCPError, UrlElicitationRequiredError
from mcp_types import (
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    ClientCapabilities,
    ElicitationCapability,
    ElicitRequestURLParams,
    FormElicitationCapability,
    InputRequiredResult,
    MissingRequiredClientCapabilityErrorData,
    UrlElicitationCapability,
)
from mcp_types.methods import is_input_required
from mcp_types.version import is_version_at_least
from pydantic import BaseModel, ConfigDict

from mcpsite.sdk import sdk_tool
from tools_app.toolsets import CONTEXT_PARAMETER, Toolset, present_as, resolved_parameters, tenant_of
from tools_app.wirestate import unwrap_state, wire_result, wrap_state

_INPUT_REQUIRED_VERSION = "2026-07-28"
_STATE_KEY = "mcpsite.url"

# --- what a resolver returns ---------------------------------------------------------------


@dataclass(frozen=True)
class UrlStep:
    """Base of the steps; `reference` names the step within the call (reused on a repeat)."""

    reference: str
    expires_in: float | None = field(default=None, kw_only=True)

    kind: typing.ClassVar[str]

    @property
    def message(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class Payment(UrlStep):
    """Ask the user to pay `amount` `currency` on the provider's checkout page."""

    amount: str | Decimal = "0"
    currency: str = "EUR"
    description: str = ""
    provider: str = "sandbox"

    kind = "payment"

    @property
    def message(self) -> str:
        what = self.description or self.reference
        return f"Please pay {Decimal(self.amount):.2f} {self.currency.upper()} for {what}."


@dataclass(frozen=True)
class Approval(UrlStep):
    """Wait for a staff member to approve or deny (admin); the user gets a status page."""

    reason: str = ""
    # The sum the decision is about (a refund), shown to staff as a field.
    amount: str | Decimal | None = None
    currency: str = "EUR"

    kind = "approval"

    @property
    def message(self) -> str:
        return f"This needs a staff approval: {self.reason}. Follow its status at the link."


@dataclass(frozen=True)
class Consent(UrlStep):
    """Ask the user to agree to `text` on a consent page."""

    text: str = ""

    kind = "consent"

    @property
    def message(self) -> str:
        return f"Your consent is needed: {self.text}"


# --- what the tool receives ---------------------------------------------------------------


@dataclass(frozen=True)
class Completed:
    """Paid, approved or agreed; `receipt` says by what (provider event, staff decision...)."""

    elicitation_id: str
    receipt: dict[str, Any]


@dataclass(frozen=True)
class Declined:
    elicitation_id: str
    note: str = ""


@dataclass(frozen=True)
class Cancelled:
    elicitation_id: str
    reason: str = ""


@dataclass(frozen=True)
class Expired(Cancelled):
    """Nobody finished it in time (a kind of cancellation: ``case Cancelled()`` matches it too)."""


UrlOutcome = Completed | Declined | Cancelled


# --- where steps are kept (the port; `approvals` provides it) --------------------------------


@dataclass(frozen=True)
class PendingStep:
    """A step's row that has not ended yet: what the client is shown."""

    elicitation_id: str
    message: str
    url: str
    # The store's own handle on the row (it reads it back in `end_by_client`); opaque here.
    ref: Any = field(default=None, compare=False, repr=False)


StepState = UrlOutcome | PendingStep


class StepRefused(Exception):
    """The store opens no row for this step (e.g. the principal's cap); the message says why,
    to the caller."""


class UrlStepStore(Protocol):
    """Where URL-mode steps are kept and how their end is learnt. The framework knows no rows:
    the app that keeps them registers one store (`url_step_store_register`) in its ``ready()``."""

    async def open(
        self,
        step: UrlStep,
        *,
        tenant_id: int,
        principal: tuple[str, str, str],
        tool: str,
        args_digest: str,
        known_ids: list[str],
    ) -> StepState:
        """The row for this step of this call (the one shown, else the live one, else a new one),
        pending or how it ended. Raises `StepRefused`."""
        ...

    async def end_by_client(self, step: PendingStep, action: str | None) -> StepState:
        """The client declined (`action` "decline") or cancelled the step; how the row stands now."""
        ...

    async def wait_for_end(self, step: PendingStep, seconds: float) -> StepState:
        """How the row stands after it ended or `seconds` passed, whichever is first."""
        ...

    def notify_session_on_end(self, elicitation_id: str, session: Any) -> None:
        """Send this 2025-11-25 session ``notifications/elicitation/complete`` when the row ends."""
        ...

    def hold_seconds(self) -> float:
        """How long a 2026-07-28 retry whose row is still pending is held open."""
        ...

    def legacy_wait_seconds(self) -> float:
        """How long a 2025-11-25 call waits in-call for the row to end."""
        ...


_store: UrlStepStore | None = None


def url_step_store_register(store: UrlStepStore) -> None:
    global _store
    _store = store


def url_step_store() -> UrlStepStore:
    if _store is None:
        raise RuntimeError("no UrlStepStore registered (approvals registers one in ApprovalsConfig.ready())")
    return _store


def _ended(state: StepState) -> UrlOutcome:
    if isinstance(state, PendingStep):
        raise ValueError(f"elicitation {state.elicitation_id} is still pending")
    return state


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
        return await _fulfil(result, ctx)

    return present_as(resolver, fn, parameters)


# --- fulfilling a step --------------------------------------------------------------------


class _UrlOpened(BaseModel):
    """Placeholder form schema of the private marker; never reaches the wire."""

    model_config = ConfigDict(title="Open the link")


class _UrlAsk(SdkElicit[_UrlOpened]):
    """A pending step as the SDK sees it: a form question it batches and tracks like any other."""

    def __init__(self, message: str) -> None:
        super().__init__(message, _UrlOpened)


@dataclass
class _Ask:
    elicitation_id: str
    message: str
    url: str
    shown: bool


@dataclass
class _Round:
    """This 2026-07-28 round: rows the client was already shown (-> its answer this round, if
    any) and the steps resolvers asked (keyed by the placeholder question's message)."""

    shown: dict[str, str | None] = field(default_factory=dict)
    asks: dict[str, _Ask] = field(default_factory=dict)


_round: ContextVar[_Round | None] = ContextVar("mcpsite_url_round", default=None)


def _uses_input_required(ctx: Context[Any, Any]) -> bool:
    version = ctx.protocol_version
    return version is not None and is_version_at_least(version, _INPUT_REQUIRED_VERSION)


def _principal() -> tuple[str, str, str]:
    token = get_access_token()
    if token is None:
        return ("", "", "")
    client_id, issuer, subject = principal_components(token)
    return (client_id or "", issuer or "", subject or "")


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
    arguments = params.get("arguments") or {}
    tool = sdk_tool(ctx.mcp_server, name)
    if tool is None:
        raise RuntimeError(f"URL-mode step outside a registered tool ({name!r})")
    meta = tool.fn_metadata
    validated = meta.arg_model.model_validate(meta.pre_parse_json(arguments)).model_dump(by_alias=True)
    canonical = json.dumps(validated, sort_keys=True, separators=(",", ":"), default=_canonical)
    return name, hashlib.sha256(canonical.encode()).hexdigest()


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


async def _fulfil(step: UrlStep, ctx: Context[Any, Any]) -> Any:
    modern = _uses_input_required(ctx)
    round_ = _round.get()
    if modern and round_ is None:
        raise RuntimeError("URL-mode steps need their toolset to be a tools_app.urlmode.UrlModeToolset")
    tool, args_digest = _call_identity(ctx)
    _require_url_elicitation(ctx, tool=tool, modern=modern)
    store = url_step_store()
    try:
        state = await store.open(
            step,
            tenant_id=tenant_of(ctx).id,
            principal=_principal(),
            tool=tool,
            args_digest=args_digest,
            known_ids=list(round_.shown) if round_ is not None else [],
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
    placeholder = f"{state.message} [{state.elicitation_id}]"
    round_.asks[placeholder] = _Ask(
        elicitation_id=state.elicitation_id, message=state.message, url=state.url, shown=shown
    )
    return _UrlAsk(placeholder)


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


# --- the middleware and the toolset that installs it --------------------------------------


def _unwrap_state(state: Any) -> tuple[str | None, dict[str, str]] | None:
    unwrapped = unwrap_state(state, _STATE_KEY)
    if unwrapped is None or not isinstance(unwrapped[1].get("rows"), dict):
        return None
    inner, ours = unwrapped
    return (inner if isinstance(inner, str) else None), {str(k): str(v) for k, v in ours["rows"].items()}


class UrlModeMiddleware:
    """Translates URL-mode steps at the 2026-07-28 wire (see the module docstring).

    Sits inside the SDK's requestState boundary, so it reads and writes the plaintext state;
    the boundary seals what it returns.
    """

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != "tools/call" or not is_version_at_least(ctx.protocol_version, _INPUT_REQUIRED_VERSION):
            return await call_next(ctx)
        round_ = _Round()
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
        token = _round.set(round_)
        try:
            result = await call_next(ctx)
        finally:
            _round.reset(token)
        if not round_.asks or not is_input_required(result):
            return result
        return self._rewrite(result, round_)

    @staticmethod
    def _rewrite(result: InputRequiredResult | dict[str, Any], round_: _Round) -> dict[str, Any]:
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


class UrlModeToolset(Toolset):
    """A `Toolset` whose tools may use `url_step` resolvers: installs `UrlModeMiddleware` once,
    and makes its tools refuse arguments they do not declare (see `_forbid_extra_arguments`)."""

    def install(self, server: MCPServer[Any]) -> None:
        super().install(server)
        for name in self.tool_names():
            tool = sdk_tool(server, name)
            if tool is not None:
                _forbid_extra_arguments(tool)
        if not any(isinstance(m, UrlModeMiddleware) for m in server.middleware):
            server.middleware.append(UrlModeMiddleware())


def _forbid_extra_arguments(tool: Tool) -> None:
    """An undeclared argument is refused, and the input schema says so (``additionalProperties:
    false``). The SDK's argument model ignores extra keys, which made ``{"booking_id": 1, "x": 1}``
    a different call from ``{"booking_id": 1}`` to nothing but our digest: a second charge.
    The SDK reads `fn_metadata.arg_model` on every call, so swapping it here takes effect."""
    loose = tool.fn_metadata.arg_model
    namespace = {"__module__": loose.__module__, "model_config": ConfigDict(extra="forbid")}
    strict = cast("type[ArgModelBase]", type(loose.__name__, (loose,), namespace))
    tool.fn_metadata.arg_model = strict
    tool.parameters = strict.model_json_schema(by_alias=True)
