"""The compiled tool calls (`mcp_server.compiled_calls`) answer exactly as the SDK's handler does.

A differential test: every request of the corpus below is played, in process, to the same tenant
server twice, once with the compiled layer in place and once without it (the SDK's handler
answers), and both must give the same status, headers, body (the same JSON text, key order included;
a sealed requestState is compared after unsealing, without its ``iat`` and ``exp``) and log lines. A two-round call is
played as a sequence on each path (round 1, then the retry with that path's own state: a state is
spent once). The corpus holds valid calls of every outcome (text, other content, a tool error
result, a tool that raises a tool error, an unexpected exception or a protocol error, a result the
SDK converts, input required, a retry, a task), every kind of invalid envelope, params, arguments,
header and state, and the methods and tools the layer must leave to the SDK; the test checks that
the compiled layer answered the calls it should, and only those. When an SDK upgrade changes what
the layer re-states (a result's shape, an error's wording or log line), this fails.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

import pytest
from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Resolve, Sample
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, CreateMessageResult, InputRequiredResult, SamplingMessage, TextContent
from pydantic import BaseModel, Field

from approvals.models import Elicitation
from bench.asgi import Exchange, post_scope
from mcp_server.compiled_calls import CompiledToolCalls
from mcp_server.compose import build_server
from mcp_server.endpoint import TenantEndpoint
from mcpsite.keyring import ring
from tools_app import discovery
from tools_app.tenant import TenantInfo
from tools_app.toolsets import Elicit, Toolset

PATH = "/t/differential/mcp"
VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}
URL_CAPABLE: dict[str, Any] = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}}}
"""The `_meta` of a client that also takes URL-mode questions (payments, approvals)."""
URL_TOOLS = {"pay_deposit", "request_refund"}
SAMPLING: dict[str, Any] = {"io.modelcontextprotocol/clientCapabilities": {"sampling": {}}}
"""The `_meta` of a client that takes sampling requests (and no elicitation)."""

# ------------------------------------------------------------------ tools only this test serves

fixtures = Toolset("differential", description="Tools of every shape the compiled layer meets")


@fixtures.tool()
async def shout(text: str, times: int = 1) -> str:
    """Text, upper-cased `times` times."""
    return " ".join([text.upper()] * times)


@fixtures.tool(structured_output=False)
def whisper(text: str) -> str:
    """A sync tool (run on a worker thread) without structured output."""
    return text.lower()


@fixtures.tool()
async def count(items: list[int]) -> int:
    """Not text: the SDK converts the result."""
    return sum(items)


@fixtures.tool()
async def lies() -> str:
    """Declares text and returns a number: the SDK's conversion refuses it."""
    return 5  # type: ignore[return-value]


@fixtures.tool()
async def brief(text: str) -> Annotated[str, Field(max_length=3)]:
    """Declares a constrained text: the SDK's conversion checks it, so the result is not re-stated."""
    return text


@fixtures.tool()
async def refuses(reason: str) -> str:
    raise ToolError(reason)


@fixtures.tool()
async def crashes() -> str:
    raise RuntimeError("secret internals")


@fixtures.tool()
async def protocol_error() -> str:
    raise MCPError(code=-32042, message="no such thing here", data={"why": "fixture"})


@fixtures.tool()
async def answers_a_result() -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text="built by hand")], structured_content={"k": 1})


class Pick(BaseModel):
    pick: str


RESOLVER_RUNS: list[str] = []
"""Each run of `ask_pick`'s body: a replayed retry must not run it (the claim comes first)."""


async def ask_pick() -> Elicit[Pick]:
    RESOLVER_RUNS.append("ask_pick")
    return Elicit("Which one?", Pick)


@fixtures.tool()
async def choose(label: str, pick: Annotated[Pick, Resolve(ask_pick)]) -> str:
    return f"{label}: {pick.pick}"


class Size(BaseModel):
    size: int = Field(ge=1, le=10)


async def ask_size() -> Elicit[Size]:
    return Elicit("How big?", Size)


@fixtures.tool()
async def choose_two(
    label: str, pick: Annotated[Pick, Resolve(ask_pick)], size: Annotated[Size, Resolve(ask_size)]
) -> str:
    """Two independent questions, asked in one round."""
    return f"{label}: {pick.pick} x{size.size}"


@fixtures.tool()
async def choose_or_not(pick: Annotated[ElicitationResult[Pick], Resolve(ask_pick)]) -> str:
    """Takes the outcome itself (accepted, declined or cancelled)."""
    return f"picked {pick.data.pick}" if isinstance(pick, AcceptedElicitation) else f"no pick: {pick.action}"


def upper_label(label: str) -> str:
    """A pure resolver (sync: on a worker thread) reading a tool argument by name."""
    return label.upper()


@fixtures.tool()
async def tagged(label: str, tag: Annotated[str, Resolve(upper_label)]) -> str:
    return f"{label} [{tag}]"


async def ask_pick_in_context(ctx: Context) -> Elicit[Pick]:
    """A resolver that takes the SDK's `Context`: the compiled path builds it as the handler does."""
    return Elicit(f"Which one, {ctx.protocol_version} ({ctx.client_capabilities is not None})?", Pick)


async def picked_size(pick: Annotated[Pick, Resolve(ask_pick_in_context)], ctx: Context) -> int:
    """A resolver depending on another one, and on the context."""
    return len(pick.pick) + (ctx.request_state is not None)


@fixtures.tool()
async def asks_in_context(label: str, size: Annotated[int, Resolve(picked_size)]) -> dict[str, Any]:
    """Not text: the SDK converts the result (structured)."""
    return {"label": label, "size": size}


async def resolver_refuses(label: str) -> str:
    raise ToolError(f"no {label} today")


@fixtures.tool()
async def resolver_fails(label: str, value: Annotated[str, Resolve(resolver_refuses)]) -> str:
    return value


async def resolver_crashes() -> str:
    raise RuntimeError("resolver internals")


@fixtures.tool()
async def resolver_breaks(value: Annotated[str, Resolve(resolver_crashes)]) -> str:
    return value


@fixtures.tool()
async def resolved_but_lies(tag: Annotated[str, Resolve(upper_label)], label: str) -> str:
    """Declares text and returns a number: the conversion refuses it, after the resolvers ran."""
    return 5  # type: ignore[return-value]


async def resolver_raises_a_protocol_error() -> str:
    raise MCPError(code=-32043, message="not from a resolver", data={"why": "fixture"})


@fixtures.tool()
async def resolver_protocol_error(value: Annotated[str, Resolve(resolver_raises_a_protocol_error)]) -> str:
    return value


@fixtures.tool()
async def asks_by_hand(pick: Annotated[Pick, Resolve(ask_pick)]) -> str:
    """Its body also returns an `InputRequiredResult` (undeclared): an authoring bug, a crash."""
    return InputRequiredResult(request_state="mine")  # type: ignore[return-value]


async def ask_model(label: str) -> Sample:
    """A resolver that samples the client's model instead of asking the user."""
    return Sample([SamplingMessage(role="user", content=TextContent(type="text", text=f"Name {label}"))], max_tokens=20)


@fixtures.tool()
async def named(label: str, name: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    content = name.content
    return f"{label}: {content.text if isinstance(content, TextContent) else '?'}"


TOOLSETS = ("conformance", "differential", "payments")
COMPILED = {
    "brief",
    "resolver_protocol_error",
    "asks_by_hand",
    "named",
    "choose",
    "choose_two",
    "choose_or_not",
    "pay_deposit",
    "request_refund",
    "tagged",
    "asks_in_context",
    "resolver_fails",
    "resolver_breaks",
    "resolved_but_lies",
    "greet",
    "shout",
    "whisper",
    "count",
    "lies",
    "refuses",
    "crashes",
    "protocol_error",
    "answers_a_result",
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_error_handling",
    "test_custom_header",
}


# ------------------------------------------------------------------ the corpus


def body(method: str, params: Any = None, *, id: Any = 7) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def call(name: Any, arguments: Any = None, meta: dict[str, Any] | None = None, **extra: Any) -> bytes:
    params: dict[str, Any] = {"name": name, "_meta": {**META, **(meta or {})}, **extra}
    if arguments is not None:
        params["arguments"] = arguments
    return body("tools/call", params)


def headers(payload: bytes, **change: str) -> list[tuple[str, str]]:
    try:
        message = json.loads(payload)
    except ValueError:
        message = None
    if not isinstance(message, dict):
        message = {}
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    base = {
        "host": "127.0.0.1:8000",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": message.get("method", "tools/call"),
        "content-length": str(len(payload)),
    }
    if isinstance(name, str):
        base["mcp-name"] = name
    base.update({key.replace("_", "-"): value for key, value in change.items()})
    return [(k, v) for k, v in base.items() if v != ""]


# name -> (body, header changes, taken by the compiled layer)
CORPUS: dict[str, tuple[bytes, dict[str, str], bool]] = {
    # Answered by the compiled layer: each outcome.
    "text": (call("shout", {"text": "hi"}), {}, True),
    "text, defaulted argument given": (call("shout", {"text": "hi", "times": 2}), {}, True),
    "text, a number sent as a string (the SDK pre-parses JSON)": (call("shout", {"text": "a", "times": "3"}), {}, True),
    "text, extra argument": (call("shout", {"text": "hi", "colour": "red"}), {}, True),
    "sync tool, no structured output": (call("whisper", {"text": "LOUD"}), {}, True),
    "a result the SDK converts": (call("count", {"items": [1, 2, 3]}), {}, True),
    "a result the SDK's conversion refuses": (call("lies"), {}, True),
    "a result built by the tool": (call("answers_a_result"), {}, True),
    "a constrained text within its bound": (call("brief", {"text": "abc"}), {}, True),
    "a constrained text beyond its bound": (call("brief", {"text": "abcdef"}), {}, True),
    "tool error raised": (call("refuses", {"reason": "not today"}), {}, True),
    "unexpected exception": (call("crashes"), {}, True),
    "protocol error raised": (call("protocol_error"), {}, True),
    "arguments absent": (call("test_simple_text"), {}, True),
    "arguments null": (body("tools/call", {"name": "test_simple_text", "arguments": None, "_meta": META}), {}, True),
    "no _meta": (body("tools/call", {"name": "test_simple_text"}), {}, False),
    "image": (call("test_image_content", {}), {}, True),
    "audio": (call("test_audio_content", {}), {}, True),
    "embedded resource": (call("test_embedded_resource", {}), {}, True),
    "several kinds of content": (call("test_multiple_content_types", {}), {}, True),
    "error result": (call("test_error_handling", {}), {}, True),
    "declared header matches": (call("test_custom_header", {"region": "eu"}), {"mcp_param_region": "eu"}, True),
    # Refused before any handler: both paths alike, the layer never reached.
    "declared header differs": (call("test_custom_header", {"region": "eu"}), {"mcp_param_region": "us"}, False),
    "declared header missing": (call("test_custom_header", {"region": "eu"}), {}, False),
    "Mcp-Name disagrees": (call("shout", {"text": "hi"}), {"mcp_name": "whisper"}, False),
    "Mcp-Method disagrees": (call("shout", {"text": "hi"}), {"mcp_method": "tools/list"}, False),
    "no routing headers": (call("shout", {"text": "hi"}), {"mcp_method": "", "mcp_name": ""}, False),
    "unknown version header": (call("shout", {"text": "hi"}), {"mcp_protocol_version": "2099-01-01"}, False),
    "parse error": (b'{"jsonrpc": "2.0", "id": 1, "method": ', {}, False),
    "not JSON-RPC": (b'{"id": 1, "method": "tools/call"}', {}, False),
    "batch": (b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', {}, False),
    "no SSE in Accept": (call("shout", {"text": "hi"}), {"accept": "application/json"}, False),
    "foreign Host": (call("shout", {"text": "hi"}), {"host": "evil.example"}, False),
    "envelope version disagrees": (
        call("shout", {"text": "hi"}, {"io.modelcontextprotocol/protocolVersion": "2025-11-25"}),
        {},
        False,
    ),
    "client info malformed": (call("shout", {"text": "hi"}, {"io.modelcontextprotocol/clientInfo": 5}), {}, False),
    "capabilities malformed": (
        call("shout", {"text": "hi"}, {"io.modelcontextprotocol/clientCapabilities": []}),
        {},
        False,
    ),
    # Left to the SDK's handler by the layer: it words the refusal, or the call is not plain.
    "argument of the wrong type": (call("shout", {"text": 5}), {}, False),
    "required argument missing": (call("shout", {}), {}, False),
    "arguments not an object": (call("shout", ["hi"]), {}, False),
    "arguments a string": (call("shout", "hi"), {}, False),
    "unknown tool": (call("no_such_tool", {}), {}, False),
    "name not a string": (call(5, {}), {"mcp_name": "5"}, False),
    "name a list": (call(["shout"], {"text": "hi"}), {}, False),
    "name missing": (body("tools/call", {"arguments": {}, "_meta": META}), {}, False),
    "params not an object": (body("tools/call", ["shout"]), {}, False),
    "unknown params key": (call("shout", {"text": "hi"}, surprise=1), {}, False),
    "progress token": (call("shout", {"text": "hi"}, {"progressToken": "p-1"}), {}, False),
    "progress token of the wrong type": (call("shout", {"text": "hi"}, {"progressToken": [1]}), {}, False),
    "log level": (call("shout", {"text": "hi"}, {"io.modelcontextprotocol/logLevel": "info"}), {}, False),
    "log level unknown": (call("shout", {"text": "hi"}, {"io.modelcontextprotocol/logLevel": "loud"}), {}, False),
    "_meta not an object": (body("tools/call", {"name": "shout", "arguments": {"text": "hi"}, "_meta": 5}), {}, False),
    "task asked of a plain tool": (call("shout", {"text": "hi"}, task={"ttl": 1000}), {}, False),
    "requestState on a plain tool": (call("shout", {"text": "hi"}, requestState="forged"), {}, False),
    "inputResponses on a plain tool": (call("shout", {"text": "hi"}, inputResponses={"x": {}}), {}, False),
    "a tool that takes a Context": (call("test_tool_with_logging", {}), {}, False),
    # Tools with `Resolve(...)` parameters: each round answered by the compiled layer through the
    # SDK's `Tool.run` (the retries, which need a state, are `RETRIES` below).
    "a tool that asks (round 1)": (call("choose", {"label": "x"}), {}, True),
    "two questions in one round": (call("choose_two", {"label": "x"}), {}, True),
    "a pure resolver, nothing asked": (call("tagged", {"label": "x"}), {}, True),
    "a resolver taking the Context, behind another": (call("asks_in_context", {"label": "x"}), {}, True),
    "a resolver raising a tool error": (call("resolver_fails", {"label": "x"}), {}, True),
    "a resolver crashing": (call("resolver_breaks", {}), {}, True),
    "a resolver raising a protocol error": (call("resolver_protocol_error", {}), {}, True),
    "resolved, then the conversion refuses": (call("resolved_but_lies", {"label": "x"}), {}, True),
    "a URL-mode step, the client takes no URL mode": (
        call("request_refund", {"order_id": "o-1", "amount": "5.00"}),
        {},
        True,
    ),
    "a URL-mode step asked (a staff approval)": (
        call("request_refund", {"order_id": "o-1", "amount": "5.00"}, URL_CAPABLE),
        {},
        True,
    ),
    "a URL-mode step's tool, an argument out of bounds": (
        call("request_refund", {"order_id": "o-1", "amount": "-5"}),
        {},
        True,
    ),
    "a URL-mode step asked (a payment, its resolver reading the Context)": (
        call("pay_deposit", {"booking_id": 404}, URL_CAPABLE),
        {},
        True,
    ),
    "an asking tool, the client declares no capabilities": (
        body(
            "tools/call",
            {
                "name": "choose",
                "arguments": {"label": "x"},
                "_meta": {"io.modelcontextprotocol/protocolVersion": VERSION},
            },
        ),
        {},
        False,
    ),
    "an asking tool, the client takes URL mode only": (
        call("choose", {"label": "x"}, {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"url": {}}}}),
        {},
        True,
    ),
    "a sampling resolver, the client takes sampling": (call("named", {"label": "x"}, SAMPLING), {}, True),
    "a sampling resolver, the client takes no sampling": (call("named", {"label": "x"}), {}, True),
    "an asking tool's argument of the wrong type": (call("choose", {"label": 5}), {}, True),
    "an asking tool's argument missing": (call("choose", {}), {}, True),
    "an asking tool, arguments absent": (call("choose"), {}, True),
    "an asking tool, arguments not an object": (call("choose", ["x"]), {}, False),
    "an asking tool, unknown params key": (call("choose", {"label": "x"}, surprise=1), {}, False),
    "an asking tool, progress token": (call("choose", {"label": "x"}, {"progressToken": "p-1"}), {}, False),
    "an asking tool, client info malformed": (
        call("choose", {"label": "x"}, {"io.modelcontextprotocol/clientInfo": 5}),
        {},
        False,
    ),
    "an asking tool, a task asked": (call("choose", {"label": "x"}, task={"ttl": 1000}), {}, False),
    "an asking tool, a forged requestState": (call("choose", {"label": "x"}, requestState="forged"), {}, False),
    "an asking tool, answers without a state": (
        call("choose", {"label": "x"}, inputResponses={"pick": {"action": "accept", "content": {"pick": "a"}}}),
        {},
        True,
    ),
    "an asking tool, answers not objects": (call("choose", {"label": "x"}, inputResponses={"pick": 5}), {}, False),
    "an asking tool, answers of an unknown action": (
        call("choose", {"label": "x"}, inputResponses={"pick": {"action": "maybe"}}),
        {},
        False,
    ),
    "a task tool, called plainly": (call("protocol_error_job", {}), {}, False),
    "a task-required tool, called plainly": (call("failing_job", {}), {}, False),
    "a sync tool's own result": (call("greet", {"name": "Ada"}), {}, True),
    "tools/list": (body("tools/list", {"_meta": META}), {}, False),
    "ping": (body("ping", {"_meta": META}), {}, False),
    "unknown method": (body("no/such", {"_meta": META}), {}, False),
    "notification": (json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled"}).encode(), {}, False),
}


# ------------------------------------------------------------------ playing both paths


@pytest.fixture
def served_fixtures(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(discovery.toolsets, "differential", fixtures)
    fixtures.name = "differential"
    yield


@pytest.fixture
def loaded_ring() -> None:
    ring.reload()  # the process's ring, as a server's start loads it: a round 1 seals under it


@pytest.fixture
async def endpoint(served_fixtures: None, loaded_ring: None) -> AsyncIterator[tuple[TenantEndpoint, list[Any]]]:
    info = TenantInfo(id=1, slug="differential", name="Differential", public=True, toolsets=TOOLSETS, version="v1")
    server, app = build_server(info)
    assert isinstance(app, TenantEndpoint)
    async with server.session_manager.run():
        yield app, server.middleware


def compiled_layer(layers: list[Any]) -> CompiledToolCalls:
    layer = layers[-1]
    assert isinstance(layer, CompiledToolCalls), "the compiled layer is the innermost"
    return layer


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[tuple[str, str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((record.name, record.levelname, record.getMessage()))


async def play(
    app: TenantEndpoint, payload: bytes, change: dict[str, str], path: str = PATH, sealed: list[str] | None = None
) -> tuple[Any, list[tuple[str, str, str]]]:
    """One exchange: (status, headers, body with each requestState unsealed) and its log lines;
    the state as sent (sealed) is appended to `sealed`, if given."""
    lines = Lines()
    root = logging.getLogger()
    root.addHandler(lines)
    level = root.level
    root.setLevel(logging.DEBUG)
    try:
        exchange = Exchange(payload)
        await app(post_scope(path, headers(payload, **change)), exchange.receive, exchange.send)
    finally:
        root.removeHandler(lines)
        root.setLevel(level)
    status, kind, answer = exchange.answer()
    if kind == "text/event-stream":
        answer = events(answer)
    if sealed is not None and isinstance(answer, dict) and isinstance(answer.get("result"), dict):
        state = answer["result"].get("requestState")
        if isinstance(state, str):
            sealed.append(state)
    opened = unsealed(answer)
    sent = dict(exchange.headers)
    if opened is not answer:
        del sent["content-length"]  # a sealed state's length varies with the times sealed in it
    kept = [(name, level, _ELICITATION_ID.sub("el_<id>", text)) for name, level, text in lines.lines]
    kept = [line for line in kept if not noise(line)]
    return (status, sent, Ordered(minted_ids_hidden(opened))), kept


class Ordered(dict[str, Any]):
    """A body that compares equal only to the same body with its keys in the same order (what a
    client reads byte by byte: the README's examples), still readable as the parsed JSON."""

    def __init__(self, body: Any) -> None:
        super().__init__(body if isinstance(body, dict) else {"": body})
        self.text = json.dumps(body)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Ordered) and self.text == other.text

    __hash__ = None

    def __repr__(self) -> str:
        return self.text


_ELICITATION_ID = re.compile(r"el_[A-Za-z0-9_-]{8,}")


def minted_ids_hidden(answer: Any) -> Any:
    """`answer` with each URL-mode elicitation's id (minted at random when its row opens, also in
    its URL) as a placeholder: each path opens its own row (`forget_url_steps`)."""
    if not isinstance(answer, dict | list):
        return answer
    return json.loads(_ELICITATION_ID.sub("el_<id>", json.dumps(answer)))


async def forget_url_steps() -> None:
    """Remove the URL-mode rows a path opened, so the other path opens its own (and logs it), as
    a first call does, instead of finding the first path's (a repeated step reuses its row)."""
    await Elicitation.objects.all().adelete()


def events(stream: str) -> Any:
    """An SSE answer (a URL-mode step held open) as its one message, parsed. The comments between
    (keep-alive pings) depend on timing, not on the path: left out."""
    data = [line.removeprefix("data:").strip() for line in stream.splitlines() if line.startswith("data:")]
    assert len(data) == 1, stream
    return json.loads(data[0])


def noise(line: tuple[str, str, str]) -> bool:
    """Lines that differ between any two exchanges whatever path answers: the asyncio debug chatter."""
    return line[0] == "asyncio"


def unsealed(answer: Any) -> Any:
    """`answer` with its requestState opened with the site's ring, less the times it was minted at."""
    if isinstance(answer, dict):
        result = answer.get("result")
        if isinstance(result, dict) and isinstance(result.get("requestState"), str):
            claims = json.loads(ring.unseal(result["requestState"]))
            claims.pop("iat"), claims.pop("exp")
            answer = {**answer, "result": {**result, "requestState": claims}}
    return answer


async def both(
    app: TenantEndpoint, layers: list[Any], payload: bytes, change: dict[str, str], path: str = PATH
) -> tuple[Any, Any, int]:
    """(compiled path's answer and lines, SDK path's, calls the compiled layer took)."""
    layer = compiled_layer(layers)
    before = layer.taken
    compiled = await play(app, payload, change, path)
    taken = layer.taken - before
    await forget_url_steps()
    layers.remove(layer)
    try:
        sdk = await play(app, payload, change, path)
    finally:
        layers.append(layer)
    return compiled, sdk, taken


pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore:The logging capability is deprecated")]


@pytest.mark.anyio
@pytest.mark.parametrize("case", list(CORPUS))
async def test_both_paths_answer_alike(endpoint: tuple[TenantEndpoint, list[Any]], case: str) -> None:
    app, layers = endpoint
    payload, change, takes = CORPUS[case]
    compiled, sdk, taken = await both(app, layers, payload, change)
    assert compiled[0] == sdk[0]
    assert compiled[1] == sdk[1]
    assert taken == (1 if takes else 0), "the compiled layer took what it should, and only that"


def accept(content: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": content}


# name -> (tool, round 1's arguments, the retry's inputResponses for round 1's question keys, the
# retry's arguments if they differ, whether the compiled layer answers the retry)
RETRIES: dict[str, tuple[str, dict[str, Any], Any, dict[str, Any] | None, bool]] = {
    "accepted": ("choose", {"label": "x"}, lambda keys: {keys[0]: accept({"pick": "b"})}, None, True),
    "accepted, content of the wrong type": (
        "choose",
        {"label": "x"},
        lambda k: {k[0]: accept({"pick": 5})},
        None,
        True,
    ),
    "accepted, no content": ("choose", {"label": "x"}, lambda keys: {keys[0]: {"action": "accept"}}, None, True),
    "declined": ("choose", {"label": "x"}, lambda keys: {keys[0]: {"action": "decline"}}, None, True),
    "cancelled": ("choose", {"label": "x"}, lambda keys: {keys[0]: {"action": "cancel"}}, None, True),
    "declined, the tool takes the outcome": ("choose_or_not", {}, lambda k: {k[0]: {"action": "decline"}}, None, True),
    "accepted, the tool takes the outcome": ("choose_or_not", {}, lambda k: {k[0]: accept({"pick": "c"})}, None, True),
    "both of two answered": (
        "choose_two",
        {"label": "x"},
        lambda keys: {keys[0]: accept({"pick": "b"}), keys[1]: accept({"size": 3})},
        None,
        True,
    ),
    "one of two answered: asked again": (
        "choose_two",
        {"label": "x"},
        lambda k: {k[0]: accept({"pick": "b"})},
        None,
        True,
    ),
    "one of two out of its bounds": (
        "choose_two",
        {"label": "x"},
        lambda keys: {keys[0]: accept({"pick": "b"}), keys[1]: accept({"size": 99})},
        None,
        True,
    ),
    "behind another resolver, with the Context": (
        "asks_in_context",
        {"label": "x"},
        lambda k: {k[0]: accept({"pick": "abc"})},
        None,
        True,
    ),
    "accepted, then the body asks by hand": ("asks_by_hand", {}, lambda k: {k[0]: accept({"pick": "b"})}, None, True),
    "sampled": (
        "named",
        {"label": "x"},
        lambda k: {k[0]: {"role": "assistant", "content": {"type": "text", "text": "Ada"}, "model": "m"}},
        None,
        True,
    ),
    "sampled, an elicitation's answer instead": ("named", {"label": "x"}, lambda k: {k[0]: accept({})}, None, True),
    "no answers, the state alone": ("choose", {"label": "x"}, lambda keys: None, None, True),
    "a URL-mode step not decided yet": (
        "request_refund",
        {"order_id": "o-2", "amount": "5.00"},
        lambda k: None,
        None,
        True,
    ),
    "an answer to an unknown key": (
        "choose",
        {"label": "x"},
        lambda keys: {"elsewhere": accept({"pick": "b"})},
        None,
        False,
    ),
    "answers not objects": ("choose", {"label": "x"}, lambda keys: {keys[0]: 5}, None, False),
    "an answer of an unknown action": (
        "choose",
        {"label": "x"},
        lambda keys: {keys[0]: {"action": "maybe"}},
        None,
        False,
    ),
    "arguments changed (bound into the state)": (
        "choose",
        {"label": "x"},
        lambda keys: {keys[0]: accept({"pick": "b"})},
        {"label": "y"},
        False,
    ),
}


async def two_rounds(app: TenantEndpoint, layer: CompiledToolCalls, case: str) -> tuple[list[Any], list[int]]:
    """Round 1 of a case, its retry (with this path's own state) and the retry played again:
    their answers and log lines, and how many of each the compiled layer answered."""
    tool, arguments, answers, changed, _ = RETRIES[case]
    played: list[Any] = []
    taken: list[int] = []
    before = layer.taken
    meta = URL_CAPABLE if tool in URL_TOOLS else SAMPLING if tool == "named" else None
    first, first_lines, sealed = await play_sealed(app, call(tool, arguments, meta))
    taken.append(layer.taken - before)
    result = first[2]["result"]
    assert result["resultType"] == "input_required", first
    responses = answers(list(result["inputRequests"]))
    extra: dict[str, Any] = {"requestState": sealed}
    if responses is not None:
        extra["inputResponses"] = responses
    retry = call(tool, arguments if changed is None else changed, meta, **extra)
    before = layer.taken
    second, second_lines, _ = await play_sealed(app, retry)
    taken.append(layer.taken - before)
    runs = len(RESOLVER_RUNS)
    before = layer.taken
    replayed, replayed_lines, _ = await play_sealed(app, retry)
    taken.append(layer.taken - before)
    assert len(RESOLVER_RUNS) == runs, "a replayed retry ran no resolver: the claim is settled first"
    played += [first, first_lines, second, second_lines, replayed, replayed_lines]
    return played, taken


async def play_sealed(app: TenantEndpoint, payload: bytes) -> tuple[Any, list[tuple[str, str, str]], str | None]:
    """`play`, and the requestState as the client got it (sealed), if the answer carried one."""
    sealed: list[str] = []
    answer, lines = await play(app, payload, {}, sealed=sealed)
    return answer, lines, sealed[0] if sealed else None


@pytest.mark.anyio
@pytest.mark.parametrize("case", list(RETRIES))
async def test_each_retry_answers_alike(endpoint: tuple[TenantEndpoint, list[Any]], case: str, settings: Any) -> None:
    """Round 1, the retry and its replay, played on each path (each with its own state: a state is
    spent once), answer alike; the compiled layer answers round 1 and the retries it should."""
    # A URL-mode step not decided yet is held open this long before the retry is answered again.
    settings.APPROVALS = {**settings.APPROVALS, "HOLD_SECONDS": 0.3}
    app, layers = endpoint
    layer = compiled_layer(layers)
    compiled, taken = await two_rounds(app, layer, case)
    await forget_url_steps()
    layers.remove(layer)
    try:
        sdk, sdk_taken = await two_rounds(app, layer, case)
    finally:
        layers.append(layer)
    assert compiled == sdk
    assert sdk_taken == [0, 0, 0]
    assert taken == [1, 1 if RETRIES[case][4] else 0, 0], "the layer answered round 1 and the retry; never the replay"
    if "result" in compiled[2][2]:  # the retry spent its state: the replay is refused
        replay_error = compiled[4][2]["error"]
        assert (replay_error["code"], replay_error["message"]) == (-32602, "Invalid or expired requestState")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("case", "text"),
    [
        ("accepted", "x: b"),
        ("sampled", "x: Ada"),
        ("accepted, then the body asks by hand", "Error executing tool asks_by_hand"),
    ],
)
async def test_a_retry_answered_here_completes_the_call(
    endpoint: tuple[TenantEndpoint, list[Any]], case: str, text: str
) -> None:
    """The corpus's answers are compared between the paths; this pins what they are for the call the
    benchmark makes (and a sampled one, and a body that asks by hand: a crash, worded as one), so
    both paths cannot agree on a wrong answer."""
    app, layers = endpoint
    answers, taken = await two_rounds(app, compiled_layer(layers), case)
    assert answers[2][2]["result"]["content"][0]["text"] == text
    assert taken == [1, 1, 0]


@pytest.mark.anyio
@pytest.mark.parametrize(("tool", "shapings"), [("choose", 1), ("choose_two", 1), ("request_refund", 3)])
async def test_a_round_asking_again_answers_as_the_sdk_shapes_it(
    endpoint: tuple[TenantEndpoint, list[Any]], tool: str, shapings: int
) -> None:
    """A round 1 asking the kept questions a round before it asked is answered from the shaping
    kept then (the SDK's shaping is not run again), and answers as the SDK's handler does: each
    path plays round 1 three times, with other arguments each time (other states). A URL-mode
    step's placeholder question is not a kept one: the SDK shapes each of those rounds."""
    app, layers = endpoint
    layer = compiled_layer(layers)
    shaped = 0
    shape = layer._shaped

    def counted(result: Any) -> dict[str, Any]:
        nonlocal shaped
        shaped += 1
        return shape(result)

    layer._shaped = counted  # type: ignore[method-assign]
    meta = URL_CAPABLE if tool in URL_TOOLS else None
    arguments = [{"label": f"x{i}"} for i in range(3)]
    if tool == "request_refund":
        arguments = [{"order_id": f"o-{i}", "amount": "5.00"} for i in range(3)]
    compiled = [await play(app, call(tool, args, meta), {}) for args in arguments]
    assert shaped == shapings, "a kept question's round shaped by the SDK once, then from the kept shaping"
    await forget_url_steps()
    layers.remove(layer)
    try:
        sdk = [await play(app, call(tool, args, meta), {}) for args in arguments]
    finally:
        layers.append(layer)
    assert compiled == sdk
    states = [answer[0][2]["result"]["requestState"] for answer in compiled]
    assert len({json.dumps(state, sort_keys=True) for state in states}) == 3, "each round keeps its own state"


@pytest.mark.anyio
async def test_a_round_asking_again_carries_its_own_progress(endpoint: tuple[TenantEndpoint, list[Any]]) -> None:
    """A round asking a kept question again after other answers were recorded carries its own
    state (what this call was answered so far), not the state of the round its shaping was kept
    from: two calls of `choose_two` answer the first question differently and the second alike."""
    app, layers = endpoint
    layer = compiled_layer(layers)

    async def calls() -> list[Any]:
        played = []
        for pick in ("b", "c"):
            first, _, sealed = await play_sealed(app, call("choose_two", {"label": "x"}))
            pick_key, size_key = list(first[2]["result"]["inputRequests"])
            partial = call(
                "choose_two", {"label": "x"}, requestState=sealed, inputResponses={pick_key: accept({"pick": pick})}
            )
            again, _, sealed = await play_sealed(app, partial)
            assert list(again[2]["result"]["inputRequests"]) == [size_key], again
            done = call(
                "choose_two", {"label": "x"}, requestState=sealed, inputResponses={size_key: accept({"size": 3})}
            )
            last, _, _ = await play_sealed(app, done)
            assert last[2]["result"]["content"][0]["text"] == f"x: {pick} x3", last
            played += [first, again, last]
        return played

    compiled = await calls()
    layers.remove(layer)
    try:
        sdk = await calls()
    finally:
        layers.append(layer)
    assert compiled == sdk


@pytest.mark.anyio
async def test_the_layer_compiles_the_plain_tools_and_only_them(endpoint: tuple[TenantEndpoint, list[Any]]) -> None:
    _, layers = endpoint
    layer = compiled_layer(layers)
    served = {tool for toolset in TOOLSETS for tool in discovery.toolsets[toolset].tool_names()}
    assert {name for name in served if name in layer} == COMPILED


ROUNDS_WITHOUT_CONTEXT = {
    "choose",
    "resolver_protocol_error",
    "asks_by_hand",
    "named",
    "choose_two",
    "choose_or_not",
    "tagged",
    "resolver_fails",
    "resolver_breaks",
    "resolved_but_lies",
}


@pytest.mark.anyio
async def test_the_rounds_run_here_are_of_tools_whose_resolvers_take_no_context(
    endpoint: tuple[TenantEndpoint, list[Any]],
) -> None:
    """A tool whose resolvers take no `Context` has its rounds run by the layer (`_run_round`: the
    SDK's resolution with a `RoundView` in the Context's place); one with such a resolver, by the
    SDK's `Tool.run` with the SDK's `Context`. The corpus and the retries cover both kinds."""
    _, layers = endpoint
    layer = compiled_layer(layers)
    assert {name for name, compiled in layer._tools.items() if compiled.without_context} == ROUNDS_WITHOUT_CONTEXT
    assert {name for name, compiled in layer._tools.items() if compiled.resolving} - ROUNDS_WITHOUT_CONTEXT == {
        "asks_in_context",
        "pay_deposit",
        "request_refund",
    }


@pytest.mark.anyio
async def test_the_corpus_reaches_every_outcome(endpoint: tuple[TenantEndpoint, list[Any]]) -> None:
    """The corpus is worth something only if both paths produced each kind of answer: check it."""
    app, _ = endpoint
    seen: dict[str, str] = {}
    for case, (payload, change, _) in CORPUS.items():
        (status, _, answer), _ = await play(app, payload, change)
        seen.setdefault(f"http {status}", case)
        if isinstance(answer, dict) and "error" in answer:
            seen.setdefault(f"error {answer['error']['code']}", case)
        elif isinstance(answer, dict) and "result" in answer:
            seen.setdefault("tool error" if answer["result"].get("isError") else answer["result"]["resultType"], case)
    assert {"complete", "tool error", "input_required"} <= seen.keys()
    assert {"http 200", "http 202", "http 400", "http 404", "http 406", "http 421"} <= seen.keys()
    assert {
        "error -32700",
        "error -32600",
        "error -32602",
        "error -32601",
        "error -32603",
        "error -32042",
        "error -32043",
    } <= seen.keys()
