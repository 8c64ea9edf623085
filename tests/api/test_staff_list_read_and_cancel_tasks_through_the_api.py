"""Staff with ``tasks:read`` list tasks (filtered by tenant, status, tool) and read one; with
``tasks:write`` they cancel a live one, and the client then reads it cancelled. A userless token
holding the scopes acts for nobody. (Who else is refused: test_only_staff_with_scope_and_permission_may_act.)"""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.utils import timezone
from oauth2_provider.models import AccessToken

from mcpsite import services as mcpsite_services
from tests.api.conftest import api, machine_client
from tests.conftest import Cast, LiveServer
from tests.tasks.conftest import result, rpc, serve, start


def test_staff_list_read_and_cancel_a_task(server: LiveServer, cast: Cast) -> None:
    url = serve(server, "reports", ["alice", "bob"], cast)
    alice = cast.token(server, "alice", "reports")
    task_id = start(url, alice, seconds=30, title="through-the-api")

    with api(server, machine_client(server, "ops", ["tasks:read", "tasks:write"]).token) as http:
        listed = http.get("/tasks/", params={"tenant": "reports", "status": "working", "tool": "long_report"})
        assert listed.status_code == 200
        assert task_id in [row["id"] for row in listed.json()["results"]]
        detail = http.get(f"/tasks/{task_id}/").json()
        assert (detail["tenant"], detail["status"], detail["arguments"]) == (
            "reports",
            "working",
            {"seconds": 30, "title": "through-the-api"},
        )
        assert detail["subject"] == str(cast.user("alice").pk)

        cancelled = http.post(f"/tasks/{task_id}/cancel/")
        assert (cancelled.status_code, cancelled.json()["status"]) == (200, "cancelled")
        again = http.post(f"/tasks/{task_id}/cancel/")  # an ended task stays as it ended
        assert (again.status_code, again.json()["status"]) == (200, "cancelled")
        assert http.get("/tasks/tsk_none/").status_code == 404
        assert http.get("/tasks/", params={"status": "sleeping"}).json() == {
            "status": "one of working, input_required, completed, failed, cancelled"
        }

    assert result(rpc(url, "tasks/get", {"taskId": task_id}, alice))["status"] == "cancelled"


def test_a_userless_token_with_the_task_scopes_is_refused(server: LiveServer, cast: Cast) -> None:
    token = AccessToken.objects.create(
        user=None,
        application=mcpsite_services.script_application(),
        token=secrets.token_urlsafe(32),
        expires=timezone.now() + timedelta(hours=1),
        scope="tasks:read tasks:write",
    ).token

    with api(server, token) as http:
        seen = [(r.status_code, r.json()) for r in (http.get("/tasks/"), http.post("/tasks/tsk_none/cancel/"))]
    assert seen == [(401, {"detail": "Authentication credentials were not provided."})] * 2
