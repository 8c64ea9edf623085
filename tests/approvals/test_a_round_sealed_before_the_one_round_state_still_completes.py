"""A requestState sealed before the one typed round state (issue 27 item 3), in the two nested
layers the two middlewares wrote then, is still read for one requestState lifetime after the
deploy: its retry answers the form question, and its URL-mode step is taken as shown.

The old state is made as the old server made it: a real first round's sealed state is opened with
the site's key ring, its plaintext put back in the old shape around the same SDK state (as the two
middlewares wrapped it: `tests.round_state_v1`) and sealed again by the ring, claims untouched."""

from __future__ import annotations

import json
from typing import Any

from approvals.models import Elicitation
from mcpsite.keyring import ring
from tests.approvals.conftest import deliver, elicitation_id_of, payment_event
from tests.approvals.raw import modern_call
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import raw_post
from tests.round_state_v1 import v1_state
from tools_app.roundstate import unwrap_round


def as_sealed_before(state: str) -> str:
    """`state` (sealed now) as the server before the change sealed the same round."""
    ring.reload()
    claims = json.loads(ring.unseal(state))
    unwrapped = unwrap_round(claims["s"])
    assert unwrapped is not None
    sdk_state, ours = unwrapped
    claims["s"] = v1_state(sdk_state, asked=ours.names, url_rows=ours.url or None)
    return ring.seal(json.dumps(claims, separators=(",", ":")).encode())


def retry(server: LiveServer, token: str, tool: str, arguments: dict[str, Any], **params: Any) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {
            "name": tool,
            "arguments": arguments,
            **params,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
            },
        },
    }
    response = raw_post(
        server.mcp_url(), json.dumps(body).encode(), token, **{"Mcp-Method": "tools/call", "Mcp-Name": tool}
    )
    return dict(response.json())


def test_a_form_questions_retry_with_the_old_state_completes(server: LiveServer, cast: Cast) -> None:
    token = cast.token(server)
    first = modern_call(server.mcp_url(), token, "provision", {"name": "orders"})["result"]
    assert list(first["inputRequests"]) == ["region"]
    old = as_sealed_before(first["requestState"])
    assert json.loads(json.loads(ring.unseal(old))["s"])["mcpsite.names"] == {"v": 1, "asked": ["region"]}

    # Refused as before the change, naming what the old state asked, and the state not spent:
    wrong = retry(server, token, "provision", {"name": "orders"}, inputResponses={"zone": {}}, requestState=old)
    assert wrong["error"]["message"] == (
        "inputResponses answers none of the pending inputRequests (got zone; expected region)"
    )
    answer = {"action": "accept", "content": {"region": "eu-west-1"}}
    done = retry(server, token, "provision", {"name": "orders"}, inputResponses={"region": answer}, requestState=old)
    assert done["result"]["content"][0]["text"] == "Provisioned 'orders' in eu-west-1."


def test_a_url_step_in_the_old_state_is_taken_as_shown(server: LiveServer, cast: Cast, booking: int) -> None:
    """The old URL-mode layer is read: the client's decline reaches the row it names (a state
    not read would leave the row pending and ask for the URL again)."""
    token = cast.token(server)
    first = modern_call(server.mcp_url(), token, "pay_deposit", {"booking_id": booking})["result"]
    ((key, request),) = first["inputRequests"].items()
    row_id = elicitation_id_of(request["params"]["url"])
    old = as_sealed_before(first["requestState"])
    assert json.loads(json.loads(json.loads(ring.unseal(old))["s"])["s"])["mcpsite.url"]["rows"] == {
        "demo.tools.payments:deposit": row_id
    }

    declined = retry(
        server,
        token,
        "pay_deposit",
        {"booking_id": booking},
        inputResponses={key: {"action": "decline"}},
        requestState=old,
    )
    assert declined["result"]["content"][0]["text"] == f"Booking {booking} not confirmed: the payment was declined."
    assert Elicitation.objects.get(pk=row_id).status == Elicitation.Status.DECLINED


def test_a_paid_step_in_the_old_state_completes_the_call(server: LiveServer, cast: Cast, booking: int) -> None:
    token = cast.token(server)
    first = modern_call(server.mcp_url(), token, "pay_deposit", {"booking_id": booking})["result"]
    ((key, request),) = first["inputRequests"].items()
    row = Elicitation.objects.get(pk=elicitation_id_of(request["params"]["url"]))
    old = as_sealed_before(first["requestState"])
    assert deliver(server, payment_event(row)).status_code == 200

    done = retry(
        server,
        token,
        "pay_deposit",
        {"booking_id": booking},
        inputResponses={key: {"action": "accept"}},
        requestState=old,
    )
    assert done["result"]["content"][0]["text"].startswith(f"Booking {booking} confirmed: deposit of 20.00 EUR paid")
