"""A task whose tool asks through a URL-mode step (a staff approval) parks as ``input_required``
with the URL-mode request; staff approving it (here through the operator API) resumes the task,
which completes with the decision. Nobody polls the approval: its row ending does it."""

from __future__ import annotations

from approvals.models import Elicitation
from tests.api.conftest import api, machine_client
from tests.approvals.conftest import elicitation_id_of
from tests.conftest import Cast, LiveServer
from tests.tasks.conftest import result, rpc, serve, wait_for

URL_AND_FORM: dict[str, object] = {"elicitation": {"form": {}, "url": {}}}


def test_a_task_parked_on_an_approval_completes_once_staff_approve(live: LiveServer, cast: Cast) -> None:
    url = serve(live, "reports", ["alice", "bob"], cast)
    alice = cast.token(live, "alice", "reports")
    params = {"name": "approved_export", "arguments": {"title": "payroll"}}
    created = result(rpc(url, "tools/call", params, alice, capabilities=URL_AND_FORM))
    assert created["resultType"] == "task"

    parked = wait_for(url, alice, created["taskId"], "input_required")
    [request] = parked["inputRequests"].values()
    assert request["method"] == "elicitation/create"
    assert (request["params"]["mode"], request["params"]["message"]) == (
        "url",
        "This needs a staff approval: export the payroll report. Follow its status at the link.",
    )
    row = Elicitation.objects.get(pk=elicitation_id_of(request["params"]["url"]))
    assert (row.status, row.subject) == ("pending", str(cast.user("alice").pk))

    with api(live, machine_client(live, "staff", ["approvals:write"]).token) as http:
        assert http.post(f"/elicitations/{row.pk}/approve/", json={"note": "fine"}).status_code == 200

    done = wait_for(url, alice, created["taskId"], "completed")
    assert done["result"]["content"] == [{"type": "text", "text": "payroll: exported"}]
