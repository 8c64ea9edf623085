"""The fixtures the official MCP conformance suite calls (`@modelcontextprotocol/conformance`).

Names, arguments and replies are the suite's, not ours: a scenario looks a tool, prompt or
resource up by name and compares what comes back. Both protocol generations are covered:
2025-11-25 tools ask the client mid-call over the session (`ctx.session.*`), 2026-07-28 tools
answer with an `InputRequiredResult` and read the client's `input_responses` on the retry.

Protocol methods a toolset cannot provide (`completion/complete`, `resources/subscribe`,
`logging/setLevel`) are served for every tenant by `mcpsite.protocol_methods`.
"""

from __future__ import annotations

import asyncio
import base64
import json
import struct
import zlib
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.prompts.base import UserMessage
from mcp.server.mcpserver.resolve import Resolve
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    AudioContent,
    CallToolResult,
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    CreateMessageResultWithTools,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    EmbeddedResource,
    ImageContent,
    InputRequest,
    InputRequiredResult,
    ListRootsRequest,
    ListRootsResult,
    SamplingMessage,
    TextContent,
    TextResourceContents,
)
from pydantic import BaseModel, Field

from tools_app.toolsets import Elicit, Toolset

# The public conformance tenant serves anyone: a sleep a caller sets is bounded (the suite's
# longest is 60 s).
MAX_SLOW_SECONDS = 300

toolset = Toolset(description="Fixtures for the official MCP conformance suite (both protocol generations)")


def _png_1x1_red() -> bytes:
    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    pixel_row = b"\x00\xff\x00\x00"  # filter byte, then one RGB pixel
    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1x1, 8-bit RGB
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(pixel_row)) + chunk(b"IEND", b"")
    )


def _wav_silence() -> bytes:
    samples = b"\x80" * 80  # 10 ms of 8 kHz, 8-bit mono silence
    fmt = struct.pack("<IHHIIHH", 16, 1, 1, 8000, 8000, 1, 8)
    riff = b"RIFF" + struct.pack("<I", 36 + len(samples)) + b"WAVE"
    return riff + b"fmt " + fmt + b"data" + struct.pack("<I", len(samples)) + samples


# The suite decodes media and checks the MIME type, so these are real (tiny) files.
PNG = _png_1x1_red()
PNG_B64 = base64.b64encode(PNG).decode()
WAV_B64 = base64.b64encode(_wav_silence()).decode()


def _text(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=text)])


def _form(message: str, properties: dict[str, Any], required: list[str]) -> ElicitRequest:
    schema = {"type": "object", "properties": properties, "required": required}
    return ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema))


def _sampling(prompt: str, max_tokens: int) -> CreateMessageRequest:
    message = SamplingMessage(role="user", content=TextContent(text=prompt))
    return CreateMessageRequest(params=CreateMessageRequestParams(messages=[message], max_tokens=max_tokens))


def _ask_name() -> ElicitRequest:
    return _form("What is your name?", {"name": {"type": "string"}}, ["name"])


def _ask_ok() -> ElicitRequest:
    return _form("Please confirm", {"ok": {"type": "boolean"}}, ["ok"])


def _accepted(response: object) -> dict[str, Any] | None:
    """The form content of an accepted elicitation response; None for anything else."""
    if isinstance(response, ElicitResult) and response.action == "accept":
        return dict(response.content or {})
    return None


def _declared(ctx: Context, capability: str) -> bool:
    capabilities = ctx.client_capabilities
    return capabilities is not None and getattr(capabilities, capability, None) is not None


# ---------------------------------------------------------------- content (both generations)


@toolset.tool(description="Returns simple text content")
def test_simple_text() -> CallToolResult:
    return _text("This is a simple text response for testing.")


@toolset.tool(description="Returns image content (1x1 red PNG)")
def test_image_content() -> CallToolResult:
    return CallToolResult(content=[ImageContent(data=PNG_B64, mime_type="image/png")])


@toolset.tool(description="Returns audio content (audio/wav)")
def test_audio_content() -> CallToolResult:
    return CallToolResult(content=[AudioContent(data=WAV_B64, mime_type="audio/wav")])


@toolset.tool(description="Returns an embedded text resource")
def test_embedded_resource() -> CallToolResult:
    resource = TextResourceContents(
        uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."
    )
    return CallToolResult(content=[EmbeddedResource(resource=resource)])


@toolset.tool(description="Returns text, image and embedded resource content")
def test_multiple_content_types() -> CallToolResult:
    resource = TextResourceContents(
        uri="test://mixed-content-resource",
        mime_type="application/json",
        text=json.dumps({"test": "data", "value": 123}, separators=(",", ":")),
    )
    return CallToolResult(
        content=[
            TextContent(text="Multiple content types test:"),
            ImageContent(data=PNG_B64, mime_type="image/png"),
            EmbeddedResource(resource=resource),
        ]
    )


@toolset.tool(description="Always returns an error result (isError: true)")
def test_error_handling() -> CallToolResult:
    return CallToolResult(
        content=[TextContent(text="This tool intentionally returns an error for testing")], is_error=True
    )


@toolset.tool(description="Reports progress 0/100, 50/100, 100/100")
async def test_tool_with_progress(ctx: Context) -> CallToolResult:
    for step, progress in enumerate((0, 50, 100)):
        if step:
            await asyncio.sleep(0.05)  # the suite checks the notifications arrive one by one, in order
        await ctx.report_progress(progress, 100)
    return _text("Progress tool completed")


@toolset.tool(description="Sends three info log notifications while running (2025-11-25)")
async def test_tool_with_logging(ctx: Context) -> CallToolResult:
    # `ctx.log` is deprecated at 2026-07-28 (SEP-2577) and warns; this fixture exists to exercise it.
    for step, message in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
        if step:
            await asyncio.sleep(0.05)
        await ctx.log("info", message)
    return _text("Logging tool completed")


@toolset.tool(description="Closes the POST SSE stream mid-call; the result arrives after the client reconnects")
async def test_reconnection(ctx: Context) -> CallToolResult:
    await asyncio.sleep(0.1)
    await ctx.close_sse_stream()  # a no-op unless the transport has an event store to resume from
    await asyncio.sleep(0.2)
    return _text("Reconnection test completed")


@toolset.tool(description="Echoes a parameter that is mirrored into the Mcp-Param-Region HTTP header")
def test_custom_header(
    region: Annotated[
        str, Field(description="Region (mirrored as Mcp-Param-Region)", json_schema_extra={"x-mcp-header": "Region"})
    ],
) -> CallToolResult:
    return _text(f"region={region}")


# ---------------------------------------------------------------- 2025-11-25: asking mid-call over the session


@toolset.tool(description="Requests LLM sampling from the client (sampling/createMessage)")
async def test_sampling(prompt: str, ctx: Context) -> CallToolResult:
    result = await ctx.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(text=prompt))],
        max_tokens=100,
        related_request_id=ctx.request_id,
    )
    content = result.content
    text = content.text if isinstance(content, TextContent) else content
    return _text(f"LLM response: {text}")


async def _ask(ctx: Context, message: str, properties: dict[str, Any], required: list[str]) -> ElicitResult:
    # Raw schemas on purpose: the scenarios need keywords a pydantic model does not emit (enumNames, oneOf).
    schema = {"type": "object", "properties": properties, "required": required}
    result: ElicitResult = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
    return result


@toolset.tool(description="Requests user input from the client (elicitation/create)")
async def test_elicitation(message: str, ctx: Context) -> CallToolResult:
    properties = {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    }
    result = await _ask(ctx, message, properties, ["username", "email"])
    return _text(f"User response: action={result.action}, content={json.dumps(result.content)}")


SEP1034_DEFAULTS = {
    "name": {"type": "string", "description": "User name", "default": "John Doe"},
    "age": {"type": "integer", "description": "User age", "default": 30},
    "score": {"type": "number", "description": "User score", "default": 95.5},
    "status": {
        "type": "string",
        "description": "User status",
        "enum": ["active", "inactive", "pending"],
        "default": "active",
    },
    "verified": {"type": "boolean", "description": "Verification status", "default": True},
}


@toolset.tool(description="Elicitation with defaults for every primitive type (SEP-1034)")
async def test_elicitation_sep1034_defaults(ctx: Context) -> CallToolResult:
    result = await _ask(ctx, "Please review and update the form fields with defaults", SEP1034_DEFAULTS, [])
    return _text(f"Elicitation completed: action={result.action}, content={json.dumps(result.content)}")


def _titled(*options: tuple[str, str]) -> list[dict[str, str]]:
    return [{"const": value, "title": title} for value, title in options]


SEP1330_ENUMS = {
    "untitledSingle": {"type": "string", "description": "Untitled single", "enum": ["option1", "option2", "option3"]},
    "titledSingle": {
        "type": "string",
        "description": "Titled single",
        "oneOf": _titled(("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option")),
    },
    "legacyEnum": {
        "type": "string",
        "description": "Legacy titled enum",
        "enum": ["opt1", "opt2", "opt3"],
        "enumNames": ["Option One", "Option Two", "Option Three"],
    },
    "untitledMulti": {
        "type": "array",
        "description": "Untitled multi",
        "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
    },
    "titledMulti": {
        "type": "array",
        "description": "Titled multi",
        "items": {
            "anyOf": _titled(("value1", "First Choice"), ("value2", "Second Choice"), ("value3", "Third Choice"))
        },
    },
}


@toolset.tool(description="Elicitation with all five enum schema variants (SEP-1330)")
async def test_elicitation_sep1330_enums(ctx: Context) -> CallToolResult:
    result = await _ask(ctx, "Please select options from the enum fields", SEP1330_ENUMS, [])
    return _text(f"Elicitation completed: action={result.action}, content={json.dumps(result.content)}")


# ---------------------------------------------------------------- 2026-07-28: stateless wire diagnostics


@toolset.tool(description="Requires the sampling client capability; rejects with -32021 when undeclared")
def test_missing_capability(ctx: Context) -> CallToolResult:
    if not _declared(ctx, "sampling"):
        raise MCPError(
            code=MISSING_REQUIRED_CLIENT_CAPABILITY,
            message="Client did not declare the sampling capability",
            data={"requiredCapabilities": {"sampling": {}}},
        )
    return _text("sampling capability present")


@toolset.tool(description="Asks for input via InputRequiredResult (never an independent request on the stream)")
def test_streaming_elicitation(ctx: Context) -> CallToolResult | InputRequiredResult:
    if "answer" in (ctx.input_responses or {}):
        return _text("streaming elicitation complete")
    question = _form("Please answer", {"answer": {"type": "string"}}, ["answer"])
    return InputRequiredResult(input_requests={"answer": question})


@toolset.tool(description="Attempts to log; nothing may be sent unless the request opted in via _meta logLevel")
async def test_logging_tool(ctx: Context) -> CallToolResult:
    await ctx.log("info", "test_logging_tool ran")
    return _text("logging tool done")


@toolset.tool(description="Diagnostic hook: emits a tools list_changed notification")
async def test_trigger_tool_change(ctx: Context) -> CallToolResult:
    # MCPServer declares listChanged at 2026-07-28, so the suite needs a way to make one happen.
    await ctx.notify_tools_changed()
    return _text("tools list changed")


@toolset.tool(description="Diagnostic hook: emits a prompts list_changed notification")
async def test_trigger_prompt_change(ctx: Context) -> CallToolResult:
    await ctx.notify_prompts_changed()
    return _text("prompts list changed")


# ---------------------------------------------------------------- 2026-07-28: InputRequiredResult (SEP-2322)
# Each tool answers the first round with its questions (and requestState, which the SDK seals
# with the tenant's key ring) and completes once the retry carries the expected answers.


@toolset.tool(description="MRTR: one elicitation input request keyed user_name")
def test_input_required_result_elicitation(ctx: Context) -> CallToolResult | InputRequiredResult:
    content = _accepted((ctx.input_responses or {}).get("user_name"))
    if content is not None:
        return _text(f"Hello, {content.get('name', 'unknown')}!")
    return InputRequiredResult(input_requests={"user_name": _ask_name()})


@toolset.tool(description="MRTR: one sampling input request keyed capital_question")
def test_input_required_result_sampling(ctx: Context) -> CallToolResult | InputRequiredResult:
    response = (ctx.input_responses or {}).get("capital_question")
    if isinstance(response, CreateMessageResult | CreateMessageResultWithTools):
        text = response.content.text if isinstance(response.content, TextContent) else None
        return _text(f"Sampling response: {text}")
    return InputRequiredResult(input_requests={"capital_question": _sampling("What is the capital of France?", 100)})


@toolset.tool(description="MRTR: one roots/list input request keyed client_roots")
def test_input_required_result_list_roots(ctx: Context) -> CallToolResult | InputRequiredResult:
    response = (ctx.input_responses or {}).get("client_roots")
    if isinstance(response, ListRootsResult):
        return _text(f"Client roots: {', '.join(str(root.uri) for root in response.roots)}")
    return InputRequiredResult(input_requests={"client_roots": ListRootsRequest()})


@toolset.tool(description="MRTR: requestState round-trip; completes with 'state-ok'")
def test_input_required_result_request_state(ctx: Context) -> CallToolResult | InputRequiredResult:
    if ctx.request_state == "request-state-round-1" and "confirm" in (ctx.input_responses or {}):
        return _text("state-ok: requestState validated")
    return InputRequiredResult(input_requests={"confirm": _ask_ok()}, request_state="request-state-round-1")


@toolset.tool(description="MRTR: elicitation + sampling + roots/list in one InputRequiredResult")
def test_input_required_result_multiple_inputs(ctx: Context) -> CallToolResult | InputRequiredResult:
    asked: dict[str, InputRequest] = {
        "user_name": _ask_name(),
        "greeting": _sampling("Generate a greeting", 50),
        "client_roots": ListRootsRequest(),
    }
    if ctx.request_state == "multi-inputs" and asked.keys() <= (ctx.input_responses or {}).keys():
        return _text("All inputs received")
    return InputRequiredResult(input_requests=asked, request_state="multi-inputs")


@toolset.tool(description="MRTR: three rounds with evolving requestState")
def test_input_required_result_multi_round(ctx: Context) -> CallToolResult | InputRequiredResult:
    answered = ctx.input_responses or {}
    if ctx.request_state == "round-2" and "step2" in answered:
        return _text("Multi-round complete")
    if ctx.request_state == "round-1" and "step1" in answered:
        color = _form("Step 2: What is your favorite color?", {"color": {"type": "string"}}, ["color"])
        return InputRequiredResult(input_requests={"step2": color}, request_state="round-2")
    name = _form("Step 1: What is your name?", {"name": {"type": "string"}}, ["name"])
    return InputRequiredResult(input_requests={"step1": name}, request_state="round-1")


@toolset.tool(description="MRTR: integrity-protected requestState (the SDK seals and verifies it)")
def test_input_required_result_tampered_state(ctx: Context) -> CallToolResult | InputRequiredResult:
    if ctx.request_state == "tamper-check" and "confirm" in (ctx.input_responses or {}):
        return _text("state verified")
    return InputRequiredResult(input_requests={"confirm": _ask_ok()}, request_state="tamper-check")


@toolset.tool(description="MRTR: only asks for inputs matching declared client capabilities")
def test_input_required_result_capabilities(ctx: Context) -> CallToolResult | InputRequiredResult:
    if ctx.input_responses:
        return _text("capabilities flow complete")
    offered: dict[str, InputRequest] = {}
    if _declared(ctx, "sampling"):
        offered["capital_question"] = _sampling("What is 2+2?", 20)
    if _declared(ctx, "elicitation"):
        offered["user_name"] = _ask_name()
    if _declared(ctx, "roots"):
        offered["client_roots"] = ListRootsRequest()
    if not offered:
        return _text("client declared no input capabilities")
    return InputRequiredResult(input_requests=offered)


# ---------------------------------------------------------------- Tasks extension (SEP-2663, `mcp_tasks`)
# Each runs as a durable task for a client that declared io.modelcontextprotocol/tasks.


@toolset.tool(description="Sync only: says hello")
def greet(name: str) -> CallToolResult:
    return _text(f"Hello, {name}!")


@toolset.tool(task="optional", description="Task-supporting: sleeps `seconds`, then answers")
async def slow_compute(
    seconds: Annotated[float, Field(ge=0, le=MAX_SLOW_SECONDS, description="How long to sleep")] = 1.0, label: str = ""
) -> CallToolResult:
    await asyncio.sleep(seconds)
    return _text(f"Computed {label or 'result'} after {seconds:g}s")


@toolset.tool(task="required", description="Task-required: reports a tool execution error after about a second")
async def failing_job() -> CallToolResult:
    await asyncio.sleep(1)
    return CallToolResult(content=[TextContent(text="failing_job failed, as it always does")], is_error=True)


@toolset.tool(task="optional", description="Task-supporting: fails with a protocol-level error")
async def protocol_error_job() -> CallToolResult:
    raise MCPError(code=INTERNAL_ERROR, message="protocol_error_job broke, as it always does")


@toolset.tool(task="optional", description="Task-supporting: asks to confirm, then deletes (nothing, really)")
def confirm_delete(filename: str, ctx: Context) -> CallToolResult | InputRequiredResult:
    content = _accepted((ctx.input_responses or {}).get("confirm"))
    if content is not None:
        return _text(f"Deleted {filename}" if content.get("confirm") else f"Kept {filename}")
    question = _form(f"Delete {filename}?", {"confirm": {"type": "boolean"}}, ["confirm"])
    return InputRequiredResult(input_requests={"confirm": question})


@toolset.tool(task="optional", description="Task-supporting: asks two questions at once")
def multi_input(ctx: Context) -> CallToolResult | InputRequiredResult:
    answers = {key: _accepted(value) for key, value in (ctx.input_responses or {}).items()}
    if answers.get("first") is not None and answers.get("second") is not None:
        return _text(f"Both answered: {answers['first']} and {answers['second']}")
    properties = {"name": {"type": "string"}, "confirm": {"type": "boolean"}}
    return InputRequiredResult(
        input_requests={
            "first": _form("First question", properties, ["name"]),
            "second": _form("Second question", properties, ["name"]),
        }
    )


class UserName(BaseModel):
    name: str


async def ask_user_name() -> Elicit[UserName]:
    return Elicit("What is your name?", UserName)


@toolset.tool(task="required", ask_before_task=True, description="Asks a name on the call, then runs as a task")
async def test_tool_with_task(user: Annotated[UserName, Resolve(ask_user_name)]) -> CallToolResult:
    await asyncio.sleep(0.5)
    return _text(f"Task done for {user.name}")


# ---------------------------------------------------------------- prompts


@toolset.prompt(description="A simple prompt without arguments")
def test_simple_prompt() -> list[UserMessage]:
    return [UserMessage("This is a simple prompt for testing.")]


@toolset.prompt(description="A prompt with two required arguments")
def test_prompt_with_arguments(arg1: str, arg2: str) -> list[UserMessage]:
    return [UserMessage(f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")]


@toolset.prompt(description="A prompt embedding a resource")
def test_prompt_with_embedded_resource(resourceUri: str) -> list[UserMessage]:  # the suite's argument name
    resource = TextResourceContents(
        uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing."
    )
    return [
        UserMessage(EmbeddedResource(resource=resource)),
        UserMessage("Please process the embedded resource above."),
    ]


@toolset.prompt(description="A prompt with image content")
def test_prompt_with_image() -> list[UserMessage]:
    return [
        UserMessage(ImageContent(data=PNG_B64, mime_type="image/png")),
        UserMessage("Please analyze the image above."),
    ]


@toolset.prompt(description="MRTR on prompts/get: asks for context via elicitation")
def test_input_required_result_prompt(ctx: Context) -> list[UserMessage] | InputRequiredResult:
    content = _accepted((ctx.input_responses or {}).get("user_context"))
    if content is not None:
        return [UserMessage(f"Prompt using context: {content.get('context', '')}")]
    question = _form("What context should the prompt use?", {"context": {"type": "string"}}, ["context"])
    return InputRequiredResult(input_requests={"user_context": question})


# ---------------------------------------------------------------- resources


@toolset.resource(
    "test://static-text", name="static-text", description="A static text resource", mime_type="text/plain"
)
def static_text() -> str:
    return "This is the content of the static text resource."


@toolset.resource(
    "test://static-binary", name="static-binary", description="A static binary resource (PNG)", mime_type="image/png"
)
def static_binary() -> bytes:
    return PNG


@toolset.resource(
    "test://watched-resource",
    name="watched-resource",
    description="A resource clients may subscribe to",
    mime_type="text/plain",
)
def watched_resource() -> str:
    return "Watched resource content."


@toolset.resource(
    "test://template/{id}/data", name="template-data", description="A templated resource", mime_type="application/json"
)
def template_data(id: str) -> str:  # the parameter is named after the URI template variable
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"}, separators=(",", ":"))
