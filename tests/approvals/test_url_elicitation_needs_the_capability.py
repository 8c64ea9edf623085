"""A URL-mode step is asked only of a client that declared URL-mode elicitation (the spec forbids
sending it to one that did not). Any other client gets -32021, as the SDK answers a missing
capability, before a row exists: a refused call stores nothing."""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import MISSING_REQUIRED_CLIENT_CAPABILITY

from approvals.models import Elicitation
from tests.approvals.raw import legacy_call, modern_call
from tests.conftest import Cast, LiveServer

URL_ONLY: dict[str, Any] = {"elicitation": {"url": {}}}
BOTH: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}
URL_MISSING = "Client did not declare the url elicitation capability required by tool 'pay_deposit'"
BOTH_MISSING = "Client did not declare the form and url elicitation capabilities required by tool 'pay_deposit'"


def no_row_for(booking: int) -> bool:
    return not Elicitation.objects.filter(reference=f"deposit-{booking}").exists()


@pytest.mark.parametrize(
    ("capabilities", "message", "required"),
    [
        ({}, BOTH_MISSING, BOTH),
        ({"elicitation": {"form": {}}}, URL_MISSING, URL_ONLY),
        # The step rides the SDK as a form question too, which the SDK checks against `form`.
        ({"elicitation": {"url": {}}}, BOTH_MISSING, BOTH),
    ],
    ids=["nothing", "form-only", "url-only"],
)
def test_a_2026_client_without_url_and_form_elicitation_is_refused_and_no_row_is_stored(
    server: LiveServer, cast: Cast, booking: int, capabilities: dict[str, Any], message: str, required: Any
) -> None:
    response = modern_call(server.mcp_url(), cast.token(server), "pay_deposit", {"booking_id": booking}, capabilities)

    assert response["error"] == {
        "code": MISSING_REQUIRED_CLIENT_CAPABILITY,
        "message": message,
        "data": {"requiredCapabilities": required},
    }
    assert no_row_for(booking)


@pytest.mark.parametrize("capabilities", [{}, {"elicitation": {}}, {"elicitation": {"form": {}}}])
def test_a_2025_client_without_url_elicitation_is_refused_and_no_row_is_stored(
    server: LiveServer, cast: Cast, booking: int, capabilities: dict[str, Any]
) -> None:
    """A bare ``elicitation: {}`` (clients from before URL mode) means form only."""
    response = legacy_call(server.mcp_url(), cast.token(server), "pay_deposit", {"booking_id": booking}, capabilities)

    assert response["error"] == {
        "code": MISSING_REQUIRED_CLIENT_CAPABILITY,
        "message": URL_MISSING,
        "data": {"requiredCapabilities": URL_ONLY},
    }
    assert no_row_for(booking)


def test_the_sdk_client_without_an_elicitation_callback_gets_minus_32021_on_2025(
    server: LiveServer, cast: Cast, booking: int
) -> None:
    token = cast.token(server)

    async def call() -> MCPError:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30.0))
        # No elicitation callback: the SDK client then declares no elicitation capability at all.
        async with http, Client(streamable_http_client(server.mcp_url(), http_client=http), mode="legacy") as client:
            with pytest.raises(MCPError) as refused:
                await client.call_tool("pay_deposit", {"booking_id": booking})
            return refused.value

    error = anyio.run(call)
    assert (error.code, error.message) == (MISSING_REQUIRED_CLIENT_CAPABILITY, URL_MISSING)
    assert no_row_for(booking)
