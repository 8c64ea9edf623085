"""The 2026-07-28 first round is an InputRequiredResult with one URL-mode request and sealed
state; the same call (principal, tool, arguments, reference) reuses its row, another user's
does not; a client that declines to open the link gets the declined outcome."""

from __future__ import annotations

import json
from typing import Any

import pytest

from approvals.models import Elicitation
from tests.approvals.conftest import CallInThread, elicitation_id_of
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import MODES, raw_post


def first_round(server: LiveServer, token: str, booking: int) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "pay_deposit",
            "arguments": {"booking_id": booking},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
            },
        },
    }
    response = raw_post(
        server.mcp_url(), json.dumps(body).encode(), token, **{"Mcp-Method": "tools/call", "Mcp-Name": "pay_deposit"}
    )
    assert response.status_code == 200, response.text
    return dict(response.json()["result"])


def test_first_round_asks_for_the_url_and_repeats_reuse_the_row(server: LiveServer, cast: Cast, booking: int) -> None:
    alice = cast.token(server, "alice")
    first = first_round(server, alice, booking)

    assert first["resultType"] == "input_required"
    (request,) = first["inputRequests"].values()
    assert request["method"] == "elicitation/create"
    assert request["params"]["mode"] == "url"
    assert "elicitationId" not in request["params"]  # gone from the protocol at 2026-07-28
    assert first["requestState"].startswith("k1.")  # sealed by the key ring

    again = first_round(server, alice, booking)
    bobs = first_round(server, cast.token(server, "bob"), booking)

    url = request["params"]["url"]
    assert next(iter(again["inputRequests"].values()))["params"]["url"] == url
    assert next(iter(bobs["inputRequests"].values()))["params"]["url"] != url
    rows = Elicitation.objects.filter(reference=f"deposit-{booking}")
    assert rows.count() == 2
    assert rows.get(subject=str(cast.user("alice").pk)).pk == elicitation_id_of(url)


@pytest.mark.parametrize("mode", MODES)
def test_declining_to_open_the_link_declines_the_payment(
    server: LiveServer, cast: Cast, booking: int, mode: str
) -> None:
    call = CallInThread(
        server.mcp_url(), cast.token(server), mode, "pay_deposit", {"booking_id": booking}, answer="decline"
    ).start()
    row_id = elicitation_id_of(call.next_question().url)
    call.join()
    assert call.text == f"Booking {booking} not confirmed: the payment was declined."
    assert Elicitation.objects.get(pk=row_id).status == Elicitation.Status.DECLINED
