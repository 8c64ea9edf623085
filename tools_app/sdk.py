"""The one door to the `mcp` SDK's insides: every private name we use is imported or read here.

Each entry says why we need it and which public API would replace it; an SDK upgrade that renames
one changes this file only (the SDK is pinned in ``requirements.lock``). Everything else imports
the SDK's public modules, or these names from here.

Subclasses that override private methods stay beside the behaviour they add, and are listed here:

- `mcp_server.sessions.CappedSessionManager` (a `StreamableHTTPSessionManager`) overrides
  ``_handle_stateful_request`` (to answer a refused admission with 429), ``_admit_session`` (the
  per-principal session cap, counted under the SDK's session-creation lock) and
  ``_discard_session`` (releasing the count). A public admission hook would replace all three.

Behaviour of the SDK re-stated beside ours, each held to the SDK by a test:

- `mcpsite.toolcall_metrics` counts requestState refusals by reason from the SDK's own log record
  (logger ``mcp.server.request_state``; the wire error is frozen on purpose and says no reason). A
  public refusal hook would replace it (`tests/operate/test_metrics_move_with_real_tool_calls.py`).
- `mcpsite.roles.unknown_tool` answers a tool outside a member's role as the SDK answers a tool it
  does not have; no public call answers "unknown" for a tool the server has
  (`tests/mcp/test_a_tool_outside_the_members_role_is_unlisted_and_unknown.py`).

Not covered by a public parameter: our layers stand around the SDK's built-ins (one outside them,
the rest inside its requestState boundary), which ``MCPServer(middleware=...)`` cannot place, so
`mcp_server.compose.layers` writes the whole public ``server.middleware`` list in its one order from
`built_in_layers`; and the 2026-07-28 entry reads the lifespan's state from the manager (see
`lifespan_state`).

Run outside its runner: `serialize_result` is the runner's shaping of a handler's result, for
`mcp_server.compiled_calls`, which answers a plain 2026-07-28 call of a plain tool without the SDK's
handler (issue 31; held to the SDK's answers by `tests/mcp/test_compiled_calls_answer_as_the_sdk_does.py`).

Replaced, not just read: the resolver's ``_render_request`` and ``_request_digest`` (module globals of
``mcp.server.mcpserver.resolve``), wrapped to keep a fixed form question's rendering
(`memoize_form_questions`), and its ``_decode_state`` and ``_encode_state``, wrapped to code a state
of the SDK's own form without its model (`decode_state_directly`); the resolver's `Context` is
stood in for by a `RoundView` for the compiled calls (`resolve_arguments`); and `serve_one` is the
SDK's public one re-stated so that it skips unwinding an empty exit stack (it reads
`AsyncExitStack`'s ``_exit_callbacks``) and leaves no reference cycle behind (it calls the runner's
``_on_request``, not the cached ``on_request``). And a server's public ``create_initialization_options`` is
replaced on its instance by `declare_lists_changed`, as the SDK's runner calls it with no
notification options to pass.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable
from typing import Any

from mcp.server._otel import OpenTelemetryMiddleware

# The 2026-07-28 entry (`mcp_server.endpoint`) runs the SDK's own inbound ladder, answers and SSE framing
# without the SDK's per-request task group; the SDK has no public seam for them, so they come from
# its private module. A public "serve one stateless exchange into this response" API would replace
# them; `tests/mcp/test_modern_entry.py` requires both entries to answer alike.
from mcp.server._streamable_http_modern import (
    _INVALID_BODY,
    _SSE_HEADERS,
    _SSE_PING_INTERVAL,
    _acknowledge_notification,
    _is_notification_shaped,
    _mcp_param_rejection,
    _SingleExchangeDispatchContext,
    _sse_event,
    _to_jsonrpc_response,
    _write,
    _write_rejection,
)
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver import resolve as _resolve
from mcp.server.mcpserver.tools import Tool
from mcp.server.request_state import RequestStateBoundary
from mcp.server.runner import ServerRunner, aclose_shielded

# `CappedSessionManager` answers a refused admission the way the SDK answers its own refusals
# (same JSON-RPC error body and headers); the SDK does not export its helper.
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.streamable_http_manager import _error_response as error_response

__all__ = [
    "_INVALID_BODY",
    "_SSE_HEADERS",
    "_SSE_PING_INTERVAL",
    "OpenTelemetryMiddleware",
    "RoundView",
    "_SingleExchangeDispatchContext",
    "_acknowledge_notification",
    "_is_notification_shaped",
    "_mcp_param_rejection",
    "_sse_event",
    "_to_jsonrpc_response",
    "_write",
    "_write_rejection",
    "built_in_layers",
    "declare_lists_changed",
    "decode_state_directly",
    "error_response",
    "lifespan_state",
    "lowlevel_server",
    "memoize_form_questions",
    "resolve_arguments",
    "resolvers_read_context",
    "sdk_tool",
    "sdk_tools",
    "serialize_result",
    "serve_one",
]


def built_in_layers(server: MCPServer[Any]) -> tuple[OpenTelemetryMiddleware, RequestStateBoundary]:
    """The SDK's own layers of a server it just built, outermost first: its OpenTelemetry span per
    message, then its requestState boundary. `mcp_server.compose.layers` places ours around them.

    The SDK puts them in ``server.middleware`` with no public way to say where ours go
    (``middleware=`` only appends inside them) and does not re-export the span's class (it lives in
    ``mcp.server._otel``). Checked, not assumed: an SDK that adds, drops or reorders one fails here
    at the first build. A public ``MCPServer(telemetry=False)`` and an ordered-middleware parameter
    would replace this."""
    found = list(server.middleware)
    if (
        len(found) != 2
        or not isinstance(found[0], OpenTelemetryMiddleware)
        or not isinstance(found[1], RequestStateBoundary)
    ):
        raise RuntimeError(f"the SDK's built-in middleware changed: {[type(m).__name__ for m in found]}")
    return found[0], found[1]


def lowlevel_server(server: MCPServer[Any]) -> Server[Any]:
    """The low-level `Server` under an `MCPServer`: its public ``add_request_handler`` is how the SDK's
    docs (MethodBinding in ``mcp/server/extension.py``) say to serve methods `MCPServer` has no API for
    (``resources/subscribe``, ``logging/setLevel``), yet it is reachable only as ``_lowlevel_server``.
    A public ``MCPServer.add_request_handler`` would replace this."""
    return server._lowlevel_server


def declare_lists_changed(server: MCPServer[Any]) -> None:
    """The 2025-11-25 handshake of `server` declares ``listChanged`` for its tools and resources
    (`mcp_server.sessions.CappedSessionManager.tell_lists_changed` keeps that promise).

    Those flags come from the `NotificationOptions` handed to ``create_initialization_options``,
    which the SDK's runner calls with none (the SDK's own TODO L53: "capabilities ... require
    NotificationOptions to be passed externally"), so it is bound with them on this instance. At
    2026-07-28 the SDK derives them from ``subscriptions/listen`` and ignores these options. A server
    constructor parameter for them would replace this."""
    lowlevel = lowlevel_server(server)
    options = NotificationOptions(tools_changed=True, resources_changed=True)
    make = lowlevel.create_initialization_options
    lowlevel.create_initialization_options = functools.partial(make, options)  # type: ignore[method-assign]


def sdk_tool(server: MCPServer[Any], name: str) -> Tool | None:
    """The SDK's `Tool` record (argument model, input schema) for a registered tool: the URL-mode
    steps validate answers with it. `MCPServer` keeps them in ``_tool_manager`` with no public
    accessor; a public ``MCPServer.get_tool(name)`` would replace this."""
    return server._tool_manager.get_tool(name)


def lifespan_state(manager: StreamableHTTPSessionManager) -> Any:
    """What the server's lifespan yielded (the tenant's `TenantInfo`), ``None`` while the manager is not
    running: the 2026-07-28 entry hands it to each handler as the SDK's own app does. The manager keeps
    it as ``_lifespan_state``; a public read-only property would replace this. (Passing the
    `TenantInfo` to the entry directly would differ while the manager is not running, so it stays.)"""
    return manager._lifespan_state


_KEPT_DIGESTS: dict[int, tuple[Any, str]] = {}
"""id(kept request) -> (it, its digest), for `memoize_form_questions`; kept alive by its renderings."""


def kept_question(request: Any) -> bool:
    """Whether `request` is a form question `memoize_form_questions` keeps: the same object every
    round that asks it, never changed (the SDK only reads and serialises it)."""
    kept = _KEPT_DIGESTS.get(id(request))
    return kept is not None and kept[0] is request


def memoize_form_questions(fixed: Callable[[type[Any]], bool]) -> None:
    """Render each form question once per (schema, message) instead of on every round.

    The SDK's resolver renders a form `Elicit` as its wire `ElicitRequest` (``requestedSchema``, then
    a pydantic check of every property) and digests that rendering, to pin an answer to the exact
    question shown: on round 1 (one render, two digests) and again on the retry (one of each),
    about 150 µs of CPU per two-round call (bench/inproc.py). Both are a function of the schema
    class and the message when the schema's JSON Schema is fixed, which `fixed` says (our
    `tools_app.toolsets.rendered_once` classes). Those renderings are kept, and their digests with
    them; any other marker, and any rendering that raises, goes to the SDK's functions every time.
    The kept `ElicitRequest` is shared by the rounds that ask the same question: the SDK only reads
    and serialises it (the legacy back-channel sends `Elicit` through ``ctx.elicit``, never this).

    The SDK has no seam for either (``_render_request`` and ``_request_digest`` are module-level
    functions of the private part of ``mcp.server.mcpserver.resolve``, looked up at call time); a
    public per-schema rendering cache in the SDK would replace this. Idempotent.
    """
    render, digest = _resolve._render_request, _resolve._request_digest
    if getattr(render, "memoized", False):
        return
    rendered: dict[tuple[type[Any], str], Any] = {}
    digests = _KEPT_DIGESTS

    def render_once(marker: Any) -> Any:
        if not isinstance(marker, _resolve.Elicit) or not isinstance(marker.message, str) or not fixed(marker.schema):
            return render(marker)
        key = (marker.schema, marker.message)
        request = rendered.get(key)
        if request is None:
            request = render(marker)
            if len(rendered) >= 1024:  # bounded: a message may carry per-call text
                rendered.clear()
                digests.clear()
            rendered[key] = request
            digests[id(request)] = (request, digest(request))
        return request

    def digest_once(request: Any) -> str:
        kept = digests.get(id(request))
        if kept is not None and kept[0] is request:
            return kept[1]
        result: str = digest(request)
        return result

    render_once.memoized = True  # type: ignore[attr-defined]
    _resolve._render_request = render_once
    _resolve._request_digest = digest_once


def decode_state_directly() -> None:
    """Decode and encode the resolver's own progress (the plaintext inside a ``requestState``)
    without a pydantic model on the way, when it is in the form the SDK itself encodes.

    Each round the SDK's resolver builds its `_State` model to decode the state (an empty one
    when there is none) and builds it again to encode the next, dumping it in JSON mode: ~25 µs
    of a round's CPU (bench/inproc.py). The state is always the SDK's own encoding (the boundary
    authenticates it), so a state of exactly that form (the three keys, version 3, each outcome an
    action, its data and its digest) becomes the same models by ``model_construct`` from the
    parsed JSON; anything else goes to the SDK's decoder. Outcomes whose data ``json.dumps``
    encodes as the JSON-mode dump does (JSON's own types: no NaN or infinity, no bytes, dates or
    models) are encoded directly; any other goes to the SDK's encoder. Held to the SDK's functions
    by `tests/unit/test_the_resolvers_state_is_coded_as_the_sdk_codes_it.py`.

    The two are module-level functions of ``mcp.server.mcpserver.resolve``, looked up at call time,
    with no seam; a cheaper codec in the SDK would replace this. Idempotent."""
    decode, encode = _resolve._decode_state, _resolve._encode_state
    if getattr(decode, "direct", False):
        return
    state_model, entry_model, version = _resolve._State, _resolve._StateEntry, _resolve._STATE_VERSION
    actions = frozenset({"accept", "decline", "cancel"})
    state_keys, entry_keys = frozenset({"v", "outcomes", "asked"}), frozenset({"action", "data", "q"})
    construct_state, construct_entry = state_model.model_construct, entry_model.model_construct

    def decode_directly(request_state: str | None) -> Any:
        if not request_state:  # the SDK's `_State(v=version)`
            return construct_state({"v"}, v=version, outcomes={}, asked={})
        try:
            raw = json.loads(request_state)
        except ValueError:
            return decode(request_state)
        if type(raw) is not dict or raw.keys() != state_keys or type(raw["v"]) is not int or raw["v"] != version:
            return decode(request_state)
        outcomes, asked = raw["outcomes"], raw["asked"]
        if type(outcomes) is not dict or type(asked) is not dict or not all(type(q) is str for q in asked.values()):
            return decode(request_state)
        entries = {}
        for key, entry in outcomes.items():
            if type(entry) is not dict or entry.keys() != entry_keys:
                return decode(request_state)
            action, q = entry["action"], entry["q"]
            if type(action) is not str or action not in actions or not (q is None or type(q) is str):
                return decode(request_state)
            entries[key] = construct_entry(action=action, data=entry["data"], q=q)
        return construct_state(v=version, outcomes=entries, asked=asked)

    def encode_directly(outcomes: Any, asked: Any) -> str:
        wire = {}
        for key, entry in outcomes.items():
            if type(entry) is not entry_model or not _plain_json(entry.data):
                return encode(outcomes, asked)
            wire[key] = {"action": entry.action, "data": entry.data, "q": entry.q}
        if not all(type(key) is str and type(q) is str for key, q in asked.items()):
            return encode(outcomes, asked)
        return json.dumps({"v": version, "outcomes": wire, "asked": dict(asked)}, separators=(",", ":"))

    decode_directly.direct = True  # type: ignore[attr-defined]
    decode_directly.sdk = decode  # type: ignore[attr-defined]  # for the test holding them alike
    encode_directly.sdk = encode  # type: ignore[attr-defined]
    _resolve._decode_state = decode_directly
    _resolve._encode_state = encode_directly


def _plain_json(value: Any) -> bool:
    """Whether `value` is made of JSON's own types only (dicts with string keys, lists, strings,
    finite floats, ints, booleans, None): what the JSON-mode dump of an ``Any`` leaves as it is."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is float:
        return math.isfinite(value)
    if kind is dict:
        return all(type(key) is str and _plain_json(item) for key, item in value.items())
    if kind is list:
        return all(map(_plain_json, value))
    return False


async def serve_one(
    server: Server[Any], dctx: Any, method: str, params: Any, *, connection: Any, lifespan_state: Any
) -> dict[str, Any]:
    """The SDK's `mcp.server.runner.serve_one`, without unwinding an exit stack nothing entered.

    The SDK's version always unwinds ``connection.exit_stack`` under a shielded, bounded anyio
    cancel scope on the way out: two cancel scopes and a timer per request, ~25 µs of CPU
    (bench/inproc.py), though on the single-exchange path nothing enters the per-request
    connection's stack (no handler of ours does). It is still unwound, exactly as the SDK does,
    whenever something did. Reads the stack's ``_exit_callbacks`` (CPython's `AsyncExitStack`
    keeps them there since 3.7); an SDK ``serve_one`` that skipped an empty stack would replace
    this.

    It calls the runner's ``_on_request`` itself, not its ``on_request``: that is a
    ``cached_property`` answering the bound method, and caching it on the runner made a reference
    cycle (the runner holds a method that holds the runner) that took the request's `Connection`
    and its capabilities with it, 17 objects a request that only the garbage collector could free:
    a young collection every ~30 requests instead of every ~300 (`bench/inproc.py --gc`). For a
    runner that serves one request, the cache saves nothing.
    """
    runner = ServerRunner(server, connection, lifespan_state)
    try:
        return await runner._on_request(dctx, method, params)
    finally:
        if connection.exit_stack._exit_callbacks:
            await aclose_shielded(connection)


def subscriptions(server: MCPServer[Any]) -> Any:
    """The server's subscription bus, which its handler hands every tool's `Context`.

    `mcp_server.compiled_calls` builds that `Context` as the handler does; a public accessor on
    `MCPServer` would replace this."""
    return server._subscriptions


def sdk_tools(server: MCPServer[Any]) -> list[Tool]:
    """Every `Tool` record of `server` (`mcp_server.compiled_calls` compiles them when the tenant's
    server is built). The same private ``_tool_manager`` as `sdk_tool`; its public ``list_tools``
    answers wire `Tool` models, not the records."""
    return server._tool_manager.list_tools()


def serialize_result(server: Server[Any], method: str, version: str, result: Any) -> dict[str, Any]:
    """The SDK's shaping of a handler's result for the wire (cache hints, the per-version surface's
    sieve, ``resultType``, the ``serverInfo`` stamp), exactly as its runner does it after a handler.

    `mcp_server.compiled_calls` answers a call without the SDK's handler and hands the result it
    does not build itself to this, so it re-states none of it. It is ``ServerRunner._serialize``,
    which reads only the server; a public "shape this result" function would replace it."""
    runner = ServerRunner(server, None, None)  # type: ignore[arg-type]  # the connection is not read
    shaped: dict[str, Any] = runner._serialize(method, version, result)
    return shaped


def resolvers_read_context(tool: Tool) -> bool:
    """Whether a resolver of `tool` takes the SDK's `Context` (its plan fills a parameter with it).

    `mcp_server.compiled_calls` resolves the other tools' parameters with a `RoundView` in the
    `Context`'s place, which no resolver of theirs is handed. The plans are the SDK's per-tool
    ``resolver_plans`` (`build_resolver_plans`), whose parameter kinds are not public; a public
    "does this tool need a Context" flag would replace this."""
    return any(param.kind == "context" for plan in tool.resolver_plans.values() for param in plan.params.values())


class RoundView:
    """What the SDK's resolver reads of a `Context` at 2026-07-28 when no resolver takes one:
    the negotiated version, the retry's answers and (unsealed) state, the client's capabilities.

    `resolve_arguments` reads ``protocol_version``, ``input_responses`` and ``request_state``
    when it starts a call's resolution, and ``client_capabilities`` before it asks a question
    (``_require_capability``); it hands the `Context` itself only to a resolver parameter that
    takes one (`resolvers_read_context`), and its other uses of it (``session``, ``elicit``) are
    on the 2025-11-25 path, which a compiled call never takes. Building the SDK's `Context` (a
    pydantic model) for those four reads is what this saves. An SDK whose resolver reads anything
    else of it fails `tests/mcp/test_compiled_calls_answer_as_the_sdk_does.py` (an
    ``AttributeError`` answered as a crash on one path only)."""

    __slots__ = ("client_capabilities", "input_responses", "protocol_version", "request_state")

    def __init__(
        self, protocol_version: str, input_responses: Any, request_state: str | None, client_capabilities: Any
    ) -> None:
        self.protocol_version = protocol_version
        self.input_responses = input_responses
        self.request_state = request_state
        self.client_capabilities = client_capabilities


async def resolve_arguments(tool: Tool, validated: Any, view: RoundView) -> Any:
    """The SDK's resolution of `tool`'s ``Resolve(...)`` parameters (`Tool.run`'s own call), handed
    `view` in the `Context`'s place: the resolved values by parameter, or the round's
    `InputRequiredResult`. Only for a tool none of whose resolvers reads the Context."""
    return await _resolve.resolve_arguments(tool.resolved_params, tool.resolver_plans, validated, view)  # type: ignore[arg-type]
