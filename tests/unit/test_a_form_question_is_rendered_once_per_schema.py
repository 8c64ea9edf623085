"""A form question is rendered (and digested) once per schema and message, not on every round.

The SDK's resolver renders a form `Elicit` as its wire `ElicitRequest` and digests it on round 1
and again on the retry, to pin an answer to the question shown; for a schema whose JSON Schema is
fixed (`tools_app.toolsets.rendered_once`, what our `Elicit` hands the SDK) both are a function of
the schema and the message, so `tools_app.sdk.memoize_form_questions` keeps them. The digest must be
the one the SDK computes for the same rendering, or a retry's answer would not match its question.
"""

from __future__ import annotations

from mcp.server.elicitation import render_elicitation_schema
from mcp.server.mcpserver import resolve
from mcp.server.mcpserver.resolve import Elicit as SdkElicit
from mcp_types import ElicitRequest, ElicitRequestFormParams
from pydantic import BaseModel, Field

from tools_app.sdk import memoize_form_questions
from tools_app.toolsets import Elicit, is_rendered_once

# What `mcp_server.compose.build_server` does for every tenant's server (idempotent).
memoize_form_questions(fixed=is_rendered_once)


class Colour(BaseModel):
    colour: str = Field(description="A colour")


def sdk_digest(message: str, schema: type[BaseModel]) -> str:
    """The SDK's digest of a fresh rendering (an `ElicitRequest` nobody kept)."""
    fresh = ElicitRequest(
        params=ElicitRequestFormParams(message=message, requested_schema=render_elicitation_schema(schema))
    )
    return resolve._request_digest(fresh)


def test_a_form_question_is_rendered_once_per_schema_and_message() -> None:
    first = resolve._render_request(Elicit("Which colour?", Colour))
    again = resolve._render_request(Elicit("Which colour?", Colour))
    assert again is first
    assert resolve._request_digest(again) == resolve._request_digest(first) == sdk_digest("Which colour?", Colour)
    assert first.model_dump(mode="json", by_alias=True, exclude_none=True) == {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Which colour?",
            "requestedSchema": {
                "properties": {"colour": {"description": "A colour", "title": "Colour", "type": "string"}},
                "required": ["colour"],
                "title": "Colour",
                "type": "object",
            },
        },
    }


def test_another_message_is_another_question() -> None:
    shade = resolve._render_request(Elicit("Which shade?", Colour))
    assert shade is not resolve._render_request(Elicit("Which colour?", Colour))
    assert shade.model_dump(mode="json", by_alias=True)["params"]["message"] == "Which shade?"
    assert resolve._request_digest(shade) == sdk_digest("Which shade?", Colour)


def test_a_schema_whose_rendering_is_not_fixed_is_rendered_every_time() -> None:
    # The SDK's own `Elicit` with a plain model: nothing says its JSON Schema cannot change.
    first = resolve._render_request(SdkElicit("Which colour?", Colour))
    again = resolve._render_request(SdkElicit("Which colour?", Colour))
    assert again is not first
    assert resolve._request_digest(again) == resolve._request_digest(first) == sdk_digest("Which colour?", Colour)
