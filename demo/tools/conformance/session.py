"""2025-11-25 fixtures that ask the client mid-call over the session (`ctx.session.*`)."""

from __future__ import annotations

import json
from typing import Any

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ElicitResult, SamplingMessage, TextContent

from demo.tools.conformance.shared import text_result, toolset


@toolset.tool(description="Requests LLM sampling from the client (sampling/createMessage)")
async def test_sampling(prompt: str, ctx: Context) -> CallToolResult:
    result = await ctx.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(text=prompt))],
        max_tokens=100,
        related_request_id=ctx.request_id,
    )
    content = result.content
    text = content.text if isinstance(content, TextContent) else content
    return text_result(f"LLM response: {text}")


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
    return text_result(f"User response: action={result.action}, content={json.dumps(result.content)}")


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
    return text_result(f"Elicitation completed: action={result.action}, content={json.dumps(result.content)}")


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
    return text_result(f"Elicitation completed: action={result.action}, content={json.dumps(result.content)}")
