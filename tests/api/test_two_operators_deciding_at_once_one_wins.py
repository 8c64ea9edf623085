"""Two operators approving and denying the same approval at the same moment: one gets 200, the
other 409, and the row's audit trail holds exactly one decision."""

from __future__ import annotations

import threading

import httpx2

from approvals.models import Elicitation
from tests.api.conftest import api, machine_client
from tests.approvals.conftest import opened_for
from tests.conftest import Cast, LiveServer


def race(server: LiveServer, row_id: str, tokens: list[str]) -> dict[str, httpx2.Response]:
    """POST approve (first token) and deny (second) at the same moment; verb -> response."""
    barrier = threading.Barrier(2)
    answers: dict[str, httpx2.Response] = {}

    def decide(verb: str, token: str) -> None:
        with api(server, token) as http:
            http.get("/elicitations/?page_size=1")  # connected and authenticated before the barrier
            barrier.wait()
            answers[verb] = http.post(f"/elicitations/{row_id}/{verb}/", json={"note": verb})

    threads = [threading.Thread(target=decide, args=pair) for pair in zip(["approve", "deny"], tokens, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return answers


def test_an_approve_and_a_deny_racing_give_one_200_and_one_409(server: LiveServer, cast: Cast) -> None:
    tokens = [machine_client(server, name, ["approvals:write"]).token for name in ("ops", "staff")]
    for _ in range(5):  # several rounds: each time the two requests really meet at the row lock
        row = opened_for(server, cast.user("alice"), Elicitation.Kind.APPROVAL)
        answers = race(server, row.pk, tokens)

        statuses = sorted(response.status_code for response in answers.values())
        assert statuses == [200, 409], {verb: r.text for verb, r in answers.items()}
        loser = next(r for r in answers.values() if r.status_code == 409)
        row.refresh_from_db()
        assert loser.json() == {"detail": f"elicitation {row.pk} is {row.status}, not pending", "status": row.status}
        decisions = list(row.events.exclude(via="client").values_list("via", "status"))
        assert decisions == [("api", row.status)]
