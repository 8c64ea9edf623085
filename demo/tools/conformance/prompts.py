"""Prompt fixtures (`prompts/get`, one of them asking with an `InputRequiredResult`)."""

from __future__ import annotations

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.prompts.base import UserMessage
from mcp_types import EmbeddedResource, ImageContent, InputRequiredResult, TextResourceContents

from demo.tools.conformance.shared import PNG_B64, accepted, form_question, toolset


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
    content = accepted((ctx.input_responses or {}).get("user_context"))
    if content is not None:
        return [UserMessage(f"Prompt using context: {content.get('context', '')}")]
    question = form_question("What context should the prompt use?", {"context": {"type": "string"}}, ["context"])
    return InputRequiredResult(input_requests={"user_context": question})
