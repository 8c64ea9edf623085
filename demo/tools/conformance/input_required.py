"""2026-07-28 fixtures that answer with an `InputRequiredResult` (SEP-2322) and read the client's
`input_responses` on the retry."""

from __future__ import annotations

from mcp.server.mcpserver import Context
from mcp_types import (
    CallToolResult,
    CreateMessageResult,
    CreateMessageResultWithTools,
    InputRequest,
    InputRequiredResult,
    ListRootsRequest,
    ListRootsResult,
    TextContent,
)

from demo.tools.conformance.shared import (
    accepted,
    ask_name,
    ask_ok,
    declared,
    form_question,
    sampling_question,
    text_result,
    toolset,
)

# Each tool answers the first round with its questions (and requestState, which the SDK seals
# with the tenant's key ring) and completes once the retry carries the expected answers.


@toolset.tool(description="MRTR: one elicitation input request keyed user_name")
def test_input_required_result_elicitation(ctx: Context) -> CallToolResult | InputRequiredResult:
    content = accepted((ctx.input_responses or {}).get("user_name"))
    if content is not None:
        return text_result(f"Hello, {content.get('name', 'unknown')}!")
    return InputRequiredResult(input_requests={"user_name": ask_name()})


@toolset.tool(description="MRTR: one sampling input request keyed capital_question")
def test_input_required_result_sampling(ctx: Context) -> CallToolResult | InputRequiredResult:
    response = (ctx.input_responses or {}).get("capital_question")
    if isinstance(response, CreateMessageResult | CreateMessageResultWithTools):
        text = response.content.text if isinstance(response.content, TextContent) else None
        return text_result(f"Sampling response: {text}")
    return InputRequiredResult(
        input_requests={"capital_question": sampling_question("What is the capital of France?", 100)}
    )


@toolset.tool(description="MRTR: one roots/list input request keyed client_roots")
def test_input_required_result_list_roots(ctx: Context) -> CallToolResult | InputRequiredResult:
    response = (ctx.input_responses or {}).get("client_roots")
    if isinstance(response, ListRootsResult):
        return text_result(f"Client roots: {', '.join(str(root.uri) for root in response.roots)}")
    return InputRequiredResult(input_requests={"client_roots": ListRootsRequest()})


@toolset.tool(description="MRTR: requestState round-trip; completes with 'state-ok'")
def test_input_required_result_request_state(ctx: Context) -> CallToolResult | InputRequiredResult:
    if ctx.request_state == "request-state-round-1" and "confirm" in (ctx.input_responses or {}):
        return text_result("state-ok: requestState validated")
    return InputRequiredResult(input_requests={"confirm": ask_ok()}, request_state="request-state-round-1")


@toolset.tool(description="MRTR: elicitation + sampling + roots/list in one InputRequiredResult")
def test_input_required_result_multiple_inputs(ctx: Context) -> CallToolResult | InputRequiredResult:
    asked: dict[str, InputRequest] = {
        "user_name": ask_name(),
        "greeting": sampling_question("Generate a greeting", 50),
        "client_roots": ListRootsRequest(),
    }
    if ctx.request_state == "multi-inputs" and asked.keys() <= (ctx.input_responses or {}).keys():
        return text_result("All inputs received")
    return InputRequiredResult(input_requests=asked, request_state="multi-inputs")


@toolset.tool(description="MRTR: three rounds with evolving requestState")
def test_input_required_result_multi_round(ctx: Context) -> CallToolResult | InputRequiredResult:
    answered = ctx.input_responses or {}
    if ctx.request_state == "round-2" and "step2" in answered:
        return text_result("Multi-round complete")
    if ctx.request_state == "round-1" and "step1" in answered:
        color = form_question("Step 2: What is your favorite color?", {"color": {"type": "string"}}, ["color"])
        return InputRequiredResult(input_requests={"step2": color}, request_state="round-2")
    name = form_question("Step 1: What is your name?", {"name": {"type": "string"}}, ["name"])
    return InputRequiredResult(input_requests={"step1": name}, request_state="round-1")


@toolset.tool(description="MRTR: integrity-protected requestState (the SDK seals and verifies it)")
def test_input_required_result_tampered_state(ctx: Context) -> CallToolResult | InputRequiredResult:
    if ctx.request_state == "tamper-check" and "confirm" in (ctx.input_responses or {}):
        return text_result("state verified")
    return InputRequiredResult(input_requests={"confirm": ask_ok()}, request_state="tamper-check")


@toolset.tool(description="MRTR: only asks for inputs matching declared client capabilities")
def test_input_required_result_capabilities(ctx: Context) -> CallToolResult | InputRequiredResult:
    if ctx.input_responses:
        return text_result("capabilities flow complete")
    offered: dict[str, InputRequest] = {}
    if declared(ctx, "sampling"):
        offered["capital_question"] = sampling_question("What is 2+2?", 20)
    if declared(ctx, "elicitation"):
        offered["user_name"] = ask_name()
    if declared(ctx, "roots"):
        offered["client_roots"] = ListRootsRequest()
    if not offered:
        return text_result("client declared no input capabilities")
    return InputRequiredResult(input_requests=offered)
