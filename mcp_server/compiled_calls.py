"""Compiled 2026-07-28 tool calls: the innermost layer, answering a plain ``tools/call`` of a plain
tool without the SDK's generic handler (issue 31; DESIGN decision 1 is relaxed for this path only).

What a plain call costs inside the SDK's handler is mostly generic machinery the tool does not use:
the params validated again against the per-version surface and then as `CallToolRequestParams`, a
`Context` built for a tool that takes none, the result converted through a pydantic adapter and
then validated and dumped again through the per-version surface (about half of `_inner`'s time,
`bench/inproc.py --profile plain`). When a tenant's server is built, `CompiledToolCalls.for_server`
looks at each of its tools once and compiles the ones it can answer exactly as the SDK does:

- the tool takes no `Context` and does not run as a task (no extension but Tasks intercepts
  ``tools/call``, and ``tools/call`` has no cache hint);
- a tool without ``Resolve(...)`` parameters has its arguments validated and its function called
  (a sync one on a worker thread) by the SDK's own `validate_arguments` and `call_fn`;
- a tool with them has its round run after the round's replay claim is in
  (`mcpsite.keyring.settle_claim`, which guards the SDK's handler the same way). When none of its
  resolvers takes the `Context`, by `_run_round`: `Tool.run`'s steps (the arguments validated, the
  SDK's own resolution of the parameters, with their questions, recorded outcomes and answers, the
  function called, each failure worded as `Tool.run` words it), with a `tools_app.sdk.RoundView`
  (the four things the resolution reads of a `Context`) in place of the SDK's `Context`, a pydantic
  model built per call. Otherwise by the SDK's own `Tool.run`, handed the SDK's `Context` built as
  its handler builds it. A retry's params are checked first by the SDK's two checks, in its
  runner's order (the 2026-07-28 surface's, `checked_on_surface`; the handler's params type,
  `typed_params`), each validating an elicitation's answer as the one member of its
  ``inputResponses`` union it can be; for a tool whose resolvers take no `Context`, a retry both
  checks would accept is known without running them whole (`_retry_checked`: the envelope checked
  once, the state a string, each answer validated as those two members), and any other is left to
  them;
- a ``str`` it returns becomes the result the SDK builds for it (text content, and the
  ``{"result": ...}`` structured content when the tool declares that output, unconstrained);
  anything else goes through the SDK's own ``convert_result`` and the runner's shaping for the wire
  (`tools_app.sdk.serialize_result`); a failure is worded and logged as `Tool.run` and the SDK's
  handler word and log it, then shaped the same way. These two, the text result and the failure's
  words and log line, and `Tool.run`'s steps around the resolution (`_run_round`), are all this
  module re-states;
- a round 1 that asks the same kept form questions as a round before it (`tools_app.sdk.kept_question`)
  reuses the SDK's shaping of that round with its own ``requestState`` (`_input_required`).

Everything else is handed to the SDK's handler unchanged (``call_next``): another method, another
protocol version, a tool that is not compiled, params with anything but ``name``, ``arguments`` and
the request envelope's three ``_meta`` keys (``task``, a progress token, a log level; and
``inputResponses`` and ``requestState`` for a tool without resolvers), arguments that are not an
object, arguments the model of a tool without resolvers refuses (the SDK words that refusal), or a
retry's params either of the SDK's checks refuses. Being the innermost layer, every layer of ours
and the SDK's requestState boundary run around it exactly as they do around the SDK's handler.

`tests/mcp/test_compiled_calls_answer_as_the_sdk_does.py` plays a corpus of requests through a
tenant served with and without this layer and requires the same answers and log lines; it fails
when an SDK upgrade changes what this module re-states (the result's shape, the error wording).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import UnionType
from typing import Any, Union, get_args, get_origin

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError, UnexpectedResourceError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, InputRequiredResult, TextContent
from mcp_types.methods import CLIENT_REQUESTS, validate_client_request
from pydantic import BaseModel, ValidationError

from mcp_tasks.extension import TasksExtension
from mcpsite.keyring import settle_claim
from mcpsite.metrics import COMPILED_TOOL_CALLS, COUNTING
from tools_app import sdk

logger = logging.getLogger("mcp.server.mcpserver.server")
"""The SDK's handler's logger: a failing compiled call logs the line the SDK's would, under its name."""

VERSION = "2026-07-28"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
_ENVELOPE_META = frozenset(
    {
        "io.modelcontextprotocol/protocolVersion",
        "io.modelcontextprotocol/clientInfo",
        "io.modelcontextprotocol/clientCapabilities",
    }
)
_PLAIN_PARAMS = frozenset({"name", "arguments", "_meta"})
_ROUND_PARAMS = _PLAIN_PARAMS | {"inputResponses", "requestState"}
_ENVELOPES_KEPT = 256
_ASKED_KEPT = 256
_ELICIT_KEYS = frozenset({"action", "content", "_meta"})
"""The keys of an elicitation's result (`ElicitResult`), the answer a form or URL-mode question gets."""


@dataclass(frozen=True)
class _Compiled:
    tool: Tool
    text: bool
    """The tool returns ``str``: the SDK's result for it is known (`_text_result`)."""
    wraps_text: bool
    """The tool declares the SDK's ``{"result": text}`` structured output for its ``str``."""
    resolving: bool = False
    """The tool has ``Resolve(...)`` parameters: its rounds are `_resolving`'s."""
    without_context: bool = False
    """Resolving, and no resolver of it takes the `Context`: its round is run here (`_run_round`)."""


class CompiledToolCalls:
    """The innermost `ServerMiddleware`: a call (or a round) of a compiled tool is answered here."""

    def __init__(self, server: MCPServer[Any], tools: Mapping[str, _Compiled]) -> None:
        self._mcp_server = server
        self._server: Server[Any] = sdk.lowlevel_server(server)
        self._subscriptions = sdk.subscriptions(server)
        entry = self._server.get_request_handler("tools/call")
        assert entry is not None, "an MCPServer serves tools/call"
        self._params_type = entry.params_type
        """What the SDK's runner types a call's params as for its handler (`CallToolRequestParams`)."""
        self._elicit_result = _only_member(self._params_type, _ELICIT_KEYS)
        """The one member of its ``inputResponses`` union an elicitation result's keys can be (`typed_params`)."""
        self._surface_elicit_result = _only_member(_surface_params(), _ELICIT_KEYS)
        """The same, of the 2026-07-28 surface's params (`checked_on_surface`)."""
        self._tools = dict(tools)
        self._envelopes: dict[str, bool] = {}
        self._asked: dict[tuple[tuple[str, int], ...], tuple[tuple[Any, ...], dict[str, Any]]] = {}
        """A round 1's shaped answer, by the kept questions it asks (`_input_required`)."""
        # The SDK deep-copies its stamp for every answer; of a flat one (strings: the tenant's
        # name, title and version) a shallow copy is the same fresh dict.
        stamp = self._server.server_info_stamp
        self._stamp = stamp if all(type(v) is str for v in stamp.values()) else None
        self.taken = 0
        """Calls answered here (the rest went to the SDK's handler); ``/metrics`` counts them too
        (``mcpsite_compiled_tool_calls_total``), for the path's share of a deployment's calls."""

    @classmethod
    def for_server(cls, server: MCPServer[Any], extensions: Sequence[Extension] = ()) -> CompiledToolCalls | None:
        """Compile the tools of `server` that it can (see the module's docstring); None if none.

        `extensions` are the server's: an extension that intercepts ``tools/call`` wraps the SDK's
        handler, which a compiled call does not run. The tasks extension passes every tool without
        a task declaration straight through, so those are compiled; any other interceptor, and
        nothing is."""
        lowlevel = sdk.lowlevel_server(server)
        if "tools/call" in lowlevel.cache_hints:
            return None  # the SDK would stamp its cache hint on each result: not re-stated here
        task_tools: set[str] = set()
        for extension in extensions:
            if isinstance(extension, TasksExtension):
                task_tools |= extension.task_tools.keys()
            elif type(extension).intercept_tool_call is not Extension.intercept_tool_call:
                return None
        compiled = {}
        for tool in sdk.sdk_tools(server):
            if tool.name in task_tools or tool.context_kwarg is not None:
                continue
            resolving = bool(tool.resolved_params)
            without_context = resolving and not sdk.resolvers_read_context(tool)
            if tool.fn_metadata.output_schema is None:
                text, wraps = _annotated_str(tool), False
            else:
                text = wraps = _wraps_str(tool)
            compiled[tool.name] = _Compiled(tool, text, wraps, resolving, without_context)
        return cls(server, compiled) if compiled else None

    def _plain_envelope(self, meta: Any) -> bool:
        """Whether `meta` holds only the request envelope's keys, each as the SDK's surface types it.

        The inbound ladder reads the envelope but does not type every part of it (a malformed
        ``clientInfo`` passes it); the SDK's params check does, answering -32602. So each envelope is
        checked once by that same check (`validate_client_request`) and remembered by its ``repr``
        (of parsed JSON, as exact as its text, and cheaper than dumping it again; keys in another
        order only make another entry): a client sends the same one on every call. With a plain
        name and object arguments (checked by the caller), nothing else in plain params can fail it.
        No envelope is not a plain one: the surface requires it (the inbound ladder, reading the
        version from it, refuses such a call before it gets here)."""
        if type(meta) is not dict or not meta.keys() <= _ENVELOPE_META:
            return False
        key = repr(meta)
        known = self._envelopes.get(key)
        if known is None:
            try:
                validate_client_request("tools/call", VERSION, {"name": "", "_meta": meta})
            except Exception:
                known = False
            else:
                known = True
            if len(self._envelopes) >= _ENVELOPES_KEPT:  # bounded whatever clients send
                self._envelopes.clear()
            self._envelopes[key] = known
        return known

    def _server_info(self) -> dict[str, Any]:
        return dict(self._stamp) if self._stamp is not None else self._server.server_info_stamp

    def __contains__(self, name: str) -> bool:
        return name in self._tools

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params
        if ctx.method != "tools/call" or ctx.protocol_version != VERSION or type(params) is not dict:
            return await call_next(ctx)
        name = params.get("name")
        compiled = self._tools.get(name) if type(name) is str else None
        if compiled is None:
            return await call_next(ctx)
        if compiled.resolving:
            return await self._resolving(ctx, call_next, compiled, params)
        if not params.keys() <= _PLAIN_PARAMS:
            return await call_next(ctx)
        meta, arguments = params.get("_meta"), params.get("arguments")
        if not (arguments is None or type(arguments) is dict) or not self._plain_envelope(meta):
            return await call_next(ctx)
        tool = compiled.tool
        try:
            validated = tool.fn_metadata.validate_arguments(arguments or {})
        except Exception:
            return await call_next(ctx)  # the SDK validates them again and words the refusal
        self._take()
        try:
            value = await tool.fn_metadata.call_fn(tool.fn, tool.is_async, validated)
        except MCPError:
            raise
        except Exception as exc:
            return self._shaped(_failed(tool, exc))
        return self._answer(compiled, value)

    async def _resolving(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext, compiled: _Compiled, params: dict[str, Any]
    ) -> HandlerResult:
        """A round of a tool with ``Resolve(...)`` parameters: round 1, or a retry carrying answers
        and the (already verified and unsealed) state. For a tool none of whose resolvers takes the
        `Context`, `_run_round` runs `Tool.run`'s steps around the SDK's own resolution; for any
        other, the SDK's `Tool.run` resolves and calls the tool, with the SDK's `Context` built as
        its handler builds it. Only the params they are handed are checked here instead of in the
        runner, and the result is shaped as the plain path does.

        Round 1 (a name, object arguments, the envelope) has no answers or state: all either path
        reads of its params, ``input_responses`` and ``request_state``, are None. A retry's params
        are checked at once when `_retry_checked` can tell both of the SDK's checks would accept
        them (a tool without Context-taking resolvers), and otherwise by those two checks, in the
        runner's order (the per-version surface, then the handler's params type, `typed_params`);
        anything either refuses goes to the SDK, which words the refusal."""
        keys = params.keys()
        arguments = params.get("arguments")
        if not keys <= _ROUND_PARAMS or not (arguments is None or type(arguments) is dict):
            return await call_next(ctx)
        typed: Any = None
        answers: dict[str, Any] | None = None
        state: str | None = None
        if keys <= _PLAIN_PARAMS:
            if not self._plain_envelope(params.get("_meta")):
                return await call_next(ctx)
        elif compiled.without_context and (checked := self._retry_checked(params)) is not None:
            answers, state = checked
        else:
            try:
                raw = elicitation_answers(params)
                checked_on_surface(self._surface_elicit_result, params, raw)
                typed = typed_params(self._params_type, self._elicit_result, params, raw)
            except Exception:
                return await call_next(ctx)
            arguments, answers, state = typed.arguments, typed.input_responses, typed.request_state
        # Nothing of the tool, its resolvers included, runs before the round's replay claim is in
        # (a state claimed before raises the frozen refusal here, as in front of the SDK's handler).
        await settle_claim(ctx.method)
        self._take()
        if compiled.without_context:
            return await self._run_round(ctx, compiled, arguments, answers, state)
        tool = compiled.tool
        context = Context(
            request_context=ctx, mcp_server=self._mcp_server, input_params=typed, subscriptions=self._subscriptions
        )
        try:
            value = await tool.run(arguments or {}, context)
        except MCPError:
            raise
        except Exception as exc:  # already worded by `Tool.run`
            return self._shaped(_answered(tool.name, exc))
        return self._answer(compiled, value)

    def _retry_checked(self, params: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None] | None:
        """A retry's answers (each typed as the SDK's handler types it) and its state, when the SDK's
        two checks of its params would accept them; None when that is not known here (the two
        checks then run, `checked_on_surface` and `typed_params`, and refuse or accept).

        Of params with no keys but a round's (`_ROUND_PARAMS`) and object arguments (checked by the
        caller), what either check could refuse is the envelope (`_plain_envelope`: each envelope
        checked once by the surface's check, as round 1's is), a state that is not a string (after
        the boundary a present one is its plaintext) and the answers; the answers are validated
        here as each check validates them (as the one member of each union they can be, the
        surface's and the handler's: `_only_member`), and nothing in either model relates them to
        the other fields. What the handler's typing hands on is those answers, the state and the
        arguments (the same values, re-validated as ``dict[str, Any]``). Held to the two checks by
        `tests/unit/test_a_retrys_params_are_typed_as_the_sdk_types_them.py`."""
        surface, member = self._surface_elicit_result, self._elicit_result
        state = params.get("requestState")
        if surface is None or member is None or not (state is None or type(state) is str):
            return None
        if not self._plain_envelope(params.get("_meta")):
            return None
        if params.get("inputResponses") is None:
            return None, state
        answers = elicitation_answers(params)
        if answers is None:
            return None
        typed = {}
        try:
            for key, answer in answers.items():
                surface.model_validate(answer, by_name=False)
                typed[key] = member.model_validate(answer, by_name=False)
        except ValidationError:
            return None
        return typed, state

    async def _run_round(
        self,
        ctx: ServerRequestContext[Any, Any],
        compiled: _Compiled,
        arguments: Any,
        answers: dict[str, Any] | None,
        state: str | None,
    ) -> HandlerResult:
        """`Tool.run` for a tool none of whose resolvers takes the `Context`: the arguments validated,
        the SDK's own resolution run with a `tools_app.sdk.RoundView` in the Context's place (a
        retry's typed `answers` and its unsealed `state`), then the tool called, each failure worded
        as `Tool.run` words it (`_failed`)."""
        tool = compiled.tool
        try:
            validated = tool.fn_metadata.validate_arguments(arguments or {})
        except ValidationError as exc:
            invalid = ToolError(f"Error executing tool {tool.name}: {exc}")
            invalid.__cause__ = exc
            return self._shaped(_answered(tool.name, invalid))
        except MCPError:
            raise
        except Exception as exc:
            crash = UnexpectedToolError(f"Error executing tool {tool.name}")
            crash.__cause__ = exc
            return self._shaped(_answered(tool.name, crash))
        view = sdk.RoundView(VERSION, answers, state, ctx.session.client_capabilities)
        try:
            resolved = await sdk.resolve_arguments(tool, validated, view)
            if type(resolved) is InputRequiredResult:
                return self._input_required(resolved)
            value = await tool.fn_metadata.call_fn(tool.fn, tool.is_async, validated, resolved)
            if isinstance(value, InputRequiredResult):
                raise RuntimeError(
                    "the tool returned an InputRequiredResult but its parameters use Resolve(...); "
                    "a call has one input_required channel, so the multi-round flow is driven "
                    "either by resolvers or by the tool body, not both"
                )
        except MCPError:
            raise
        except Exception as exc:
            return self._shaped(_failed(tool, exc))
        return self._answer(compiled, value)

    def _take(self) -> None:
        self.taken += 1
        if COUNTING:
            COMPILED_TOOL_CALLS.inc()

    def _answer(self, compiled: _Compiled, value: Any) -> dict[str, Any]:
        """What the tool returned, converted as the SDK converts it (a failure to convert answered as
        `Tool.run` and the handler answer it), shaped for the wire."""
        try:
            if compiled.text and type(value) is str:
                return _text_result(value, compiled.wraps_text, self._server_info())
            if type(value) is InputRequiredResult:
                return self._input_required(value)
            result: Any = compiled.tool.fn_metadata.convert_result(value)
        except MCPError:
            raise
        except Exception as exc:
            result = _failed(compiled.tool, exc)
        return self._shaped(result)

    def _input_required(self, result: InputRequiredResult) -> dict[str, Any]:
        """A round 1's answer: the SDK's shaping of `result`, kept per set of questions asked.

        The SDK shapes the whole result on every round (a dump, then the per-version surface's
        check and dump of every question). What a round asks is the same kept `ElicitRequest`
        objects every time for our fixed forms (`tools_app.sdk.kept_question`), so their shaped form
        is too: the SDK shapes the first such round, and later rounds asking the same questions
        reuse its answer with their own ``requestState``, a string the shaping passes through as
        it is. A round asking anything else is shaped by the SDK every time."""
        requests = result.input_requests
        if result.meta is not None or not requests or not all(map(sdk.kept_question, requests.values())):
            return self._shaped(result)
        # By identity: the kept answer holds the questions alive, so no other object takes their ids.
        key = tuple((name, id(request)) for name, request in requests.items())
        kept = self._asked.get(key)
        if kept is None:
            shaped = self._shaped(result)
            if shaped.get("requestState") != result.request_state:
                return shaped  # not passed through as it is: nothing to keep
            if len(self._asked) >= _ASKED_KEPT:
                self._asked.clear()
            kept = self._asked[key] = (tuple(requests.values()), copy.deepcopy(shaped))
            return shaped
        answer = dict(kept[1])
        answer["requestState"] = result.request_state
        return answer

    def _shaped(self, result: Any) -> dict[str, Any]:
        return sdk.serialize_result(self._server, "tools/call", VERSION, result)


def checked_on_surface(member: type[BaseModel] | None, params: dict[str, Any], answers: dict[str, Any] | None) -> None:
    """The SDK runner's first check of a retry's params, ``validate_client_request("tools/call",
    VERSION, params)``, each answer of a retry validated once instead of against every member of the
    ``inputResponses`` union (as `typed_params` does for the second).

    The check only accepts or refuses (raises). The union accepts an answer holding only an
    elicitation result's keys exactly when its one possible member, `member`, does (`_only_member`:
    every other requires a key it lacks), and the surface's params have no validator relating the
    answers to the other fields; so the params are checked with no answers, then each answer as
    `member`. `answers` is `elicitation_answers(params)`. Held to the SDK's check by
    `tests/unit/test_a_retrys_params_are_typed_as_the_sdk_types_them.py`."""
    if answers is None or member is None:
        validate_client_request("tools/call", VERSION, params)
        return
    validate_client_request("tools/call", VERSION, {**params, "inputResponses": None})
    for answer in answers.values():
        member.model_validate(answer, by_name=False)


def elicitation_answers(params: dict[str, Any]) -> dict[str, Any] | None:
    """`params`' ``inputResponses`` when each answer holds only an elicitation result's keys (what
    `checked_on_surface` and `typed_params` validate as one member each); else None."""
    answers = params.get("inputResponses")
    if type(answers) is not dict or not all(
        type(answer) is dict and answer.keys() <= _ELICIT_KEYS for answer in answers.values()
    ):
        return None
    return answers


def _surface_params() -> Any:
    """The 2026-07-28 surface's model of a ``tools/call``'s params (what `validate_client_request`
    checks them against), or None if the surface is not of that shape."""
    request = CLIENT_REQUESTS.get(("tools/call", VERSION))
    field = getattr(request, "model_fields", {}).get("params")
    return field.annotation if field is not None else None


def typed_params(
    params_type: type[BaseModel], member: type[BaseModel] | None, params: dict[str, Any], answers: dict[str, Any] | None
) -> Any:
    """`params` typed as the SDK's runner types a call's params for its handler
    (``params_type.model_validate``), each answer of a retry validated once instead of against every
    member of the ``inputResponses`` union.

    The union (`CreateMessageResult`, `ListRootsResult`, `ElicitResult` ...) tries each member on
    each answer, and the members that fail build their errors first. An answer holding only an
    elicitation result's keys can be no other member than `member` (`_only_member`: each other one
    requires a key it lacks), so it is validated as that member directly; params with any other
    answer, or without answers, are typed by the SDK's model whole. `answers` is
    `elicitation_answers(params)`. Held to the model by
    `tests/unit/test_a_retrys_params_are_typed_as_the_sdk_types_them.py`."""
    if answers is None or member is None:
        return params_type.model_validate(params, by_name=False)
    typed: Any = params_type.model_validate({**params, "inputResponses": None}, by_name=False)
    typed.input_responses = {key: member.model_validate(answer, by_name=False) for key, answer in answers.items()}
    return typed


def _only_member(params_type: Any, keys: frozenset[str]) -> type[BaseModel] | None:
    """The member of `params_type`'s ``inputResponses`` union (a ``dict[str, A | B | ...]``) that
    an answer with no keys but `keys` can validate as: the one member whose required fields all
    have their names among `keys`, when every member is a model ignoring keys it does not know.
    None when no member or more than one qualifies, or the field is not of that shape."""
    field = getattr(params_type, "model_fields", {}).get("input_responses")
    if field is None:
        return None
    annotation = field.annotation
    if get_origin(annotation) in (Union, UnionType):  # `dict[...] | None`
        annotation = next((arg for arg in get_args(annotation) if arg is not type(None)), None)
    if get_origin(annotation) is not dict:
        return None
    members = get_args(get_args(annotation)[1]) or (get_args(annotation)[1],)
    qualifying = []
    for member in members:
        if not (isinstance(member, type) and issubclass(member, BaseModel)):
            return None
        if member.model_config.get("extra", "ignore") != "ignore":
            return None
        required = {info.alias or name for name, info in member.model_fields.items() if info.is_required()}
        if required <= keys:
            qualifying.append(member)
    return qualifying[0] if len(qualifying) == 1 else None


def _annotated_str(tool: Tool) -> bool:
    """A tool without structured output whose function is annotated ``-> str``."""
    return getattr(tool.fn, "__annotations__", {}).get("return") in (str, "str")


def _wraps_str(tool: Tool) -> bool:
    """A tool whose declared structured output is the SDK's wrapping of a ``str``: ``{"result": text}``."""
    metadata = tool.fn_metadata
    fields = getattr(metadata.output_model, "model_fields", {})
    if not metadata.wrap_output or list(fields) != ["result"]:
        return False
    field = fields["result"]
    return field.annotation is str and not field.metadata  # a constrained str is the SDK's to check


def _text_result(text: str, wrapped: bool, server_info: dict[str, Any]) -> dict[str, Any]:
    """The SDK's answer to a tool that returned `text`: ``convert_result``'s `CallToolResult`, dumped
    and sieved through the 2026-07-28 surface, with its ``resultType`` and ``serverInfo`` stamp."""
    # In the SDK's order, key by key: a client may read the text as it comes (the README's examples do).
    result: dict[str, Any] = {"content": [{"text": text, "type": "text"}], "isError": False, "resultType": "complete"}
    if wrapped:
        result["structuredContent"] = {"result": text}
    result["_meta"] = {SERVER_INFO: server_info}
    return result


def _failed(tool: Tool, exc: Exception) -> CallToolResult:
    """`Tool.run`'s wrapping of a failure, then `_handle_call_tool`'s log line and answer for it."""
    if isinstance(exc, UnexpectedToolError | UnexpectedResourceError):
        wrapped: ToolError = UnexpectedToolError(f"Error executing tool {tool.name}: {exc}")
    elif isinstance(exc, ToolError | ResourceError):
        wrapped = ToolError(f"Error executing tool {tool.name}: {exc}")
    else:
        wrapped = UnexpectedToolError(f"Error executing tool {tool.name}")
    wrapped.__cause__ = exc
    return _answered(tool.name, wrapped)


def _answered(name: str, exc: Exception) -> CallToolResult:
    """`_handle_call_tool`'s log line and answer for what `Tool.run` raised (always wrapped by it)."""
    if isinstance(exc, ToolError) and not isinstance(exc, UnexpectedToolError):
        if isinstance(exc.__cause__, ValidationError):
            # Field names only: the rejected values are the caller's data.
            fields = sorted({".".join(str(part) for part in err["loc"]) for err in exc.__cause__.errors()})
            logger.info("Tool %r rejected arguments: %r", name, fields)
        else:
            logger.info("Tool %r failed: %r", name, str(exc))
    else:
        logger.error("Tool %r raised an unexpected exception", name, exc_info=exc)
    return CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True)
