"""book_table is the SDK documentation's elicitation example, word for word, in both generations:
the question, the form's schema, an accepted date checked again (a full one is asked about
again), and the answer names the booking it created (so a model can call pay_deposit for it)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp_types import ElicitRequestParams, ElicitResult

from demo.models import Booking
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import MODES, connect, text

QUESTION = "No tables for 2 on {date}. Would you like to try another date?"
SCHEMA = {
    "properties": {
        "accept_alternative": {"description": "Try another date?", "title": "Accept Alternative", "type": "boolean"},
        "date": {
            "default": "2025-12-26",
            "description": "Alternative date (YYYY-MM-DD)",
            "title": "Date",
            "type": "string",
        },
    },
    "required": ["accept_alternative"],
    "type": "object",
}


@pytest.mark.parametrize("mode", MODES)
def test_a_full_alternative_is_asked_about_again_and_the_booking_id_is_said(
    live: LiveServer, cast: Cast, mode: str
) -> None:
    token = cast.token(live)
    seen: list[tuple[str, dict[str, Any]]] = []
    answers = iter(["2025-12-25", "2025-12-27"])  # the first alternative is full too

    def answer(params: ElicitRequestParams) -> ElicitResult:
        # The top-level title is the SDK's rendering choice (one generation sends it): not compared.
        schema = {k: v for k, v in params.requested_schema.items() if k != "title"}  # type: ignore[union-attr]
        seen.append((params.message, schema))
        return ElicitResult(action="accept", content={"accept_alternative": True, "date": next(answers)})

    async def scenario() -> str:
        async with connect(live.mcp_url(), token, mode=mode, answer=answer) as c:
            return text(await c.call_tool("book_table", {"date": "2025-12-25", "party_size": 2}))

    reply = anyio.run(scenario)
    booking = Booking.objects.filter(date="2025-12-27", party_size=2).latest("pk")
    assert reply == f"Booked a table for 2 on 2025-12-27 (booking {booking.pk})."
    assert [message for message, _ in seen] == [QUESTION.format(date="2025-12-25")] * 2
    assert [schema for _, schema in seen] == [SCHEMA, SCHEMA]
