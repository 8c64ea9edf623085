"""A refund waiting on a staff approval answers the moment an operator approves (or denies) it
through the API; the audit trail names the operator and the OAuth client it came through."""

from __future__ import annotations

import pytest

from approvals.models import Elicitation
from tests.api.conftest import api, machine_client
from tests.approvals.conftest import CallInThread, elicitation_id_of
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import MODES


def waiting_refund(server: LiveServer, cast: Cast, mode: str, order_id: str) -> tuple[CallInThread, str]:
    call = CallInThread(
        server.mcp_url(), cast.token(server), mode, "request_refund", {"order_id": order_id, "amount": "12.5"}
    ).start()
    return call, elicitation_id_of(call.next_question().url)


@pytest.mark.parametrize("mode", MODES)
def test_approving_through_the_api_answers_the_waiting_call(server: LiveServer, cast: Cast, mode: str) -> None:
    order_id = f"API-A-{mode}"
    call, row_id = waiting_refund(server, cast, mode, order_id)
    operator = machine_client(server, "ops", ["approvals:read", "approvals:write"])

    with api(server, operator.token) as http:
        pending = http.get("/elicitations/", params={"kind": "approval", "status": "pending"}).json()["results"]
        assert row_id in [row["id"] for row in pending]
        response = http.post(f"/elicitations/{row_id}/approve/", json={"note": "goodwill"})

    assert response.status_code == 200, response.text
    assert (response.json()["status"], response.json()["completed_by"]) == ("completed", "ops")
    call.join()
    assert call.text == f"Refund of 12.50 EUR for order {order_id} approved by ops (goodwill)."
    decision = Elicitation.objects.get(pk=row_id).events.get(status="completed")
    assert (decision.actor and decision.actor.username, decision.via, decision.oauth_client, decision.note) == (
        "ops",
        "api",
        operator.client_id,
        "approved: goodwill",
    )


def test_denying_through_the_api_refuses_the_waiting_call(server: LiveServer, cast: Cast) -> None:
    order_id = "API-D"
    call, row_id = waiting_refund(server, cast, "2026-07-28", order_id)
    with api(server, machine_client(server, "ops", ["approvals:write"]).token) as http:
        response = http.post(f"/elicitations/{row_id}/deny/", json={"note": "outside the window"})
    assert (response.status_code, response.json()["status"]) == (200, "declined")
    call.join()
    assert call.text == f"Refund for order {order_id} denied: outside the window."


def test_a_decision_on_an_ended_row_is_409_and_on_a_payment_400(server: LiveServer, cast: Cast) -> None:
    call, row_id = waiting_refund(server, cast, "2026-07-28", "API-E")
    with api(server, machine_client(server, "ops", ["approvals:write"]).token) as http:
        assert http.post(f"/elicitations/{row_id}/approve/", json={}).status_code == 200
        again = http.post(f"/elicitations/{row_id}/deny/", json={"note": "late"})
        assert (again.status_code, again.json()) == (
            409,
            {"detail": f"elicitation {row_id} is completed, not pending", "status": "completed"},
        )
        missing = http.post(f"/elicitations/{row_id}/complete/", json={})
        assert (missing.status_code, missing.json()) == (400, {"reason": ["This field is required."]})
        unknown = http.post("/elicitations/el_nothing/approve/", json={})
        assert (unknown.status_code, unknown.json()) == (404, {"detail": "No Elicitation matches the given query."})
    call.join()
