"""A task is its principal's, at its tenant: another member, another tenant's member, an anonymous
caller and a userless token each get nothing from ``tasks/get``, ``tasks/update`` or ``tasks/cancel``,
and an id that exists answers exactly like one that does not (ids cannot be probed)."""

from __future__ import annotations

import pytest

from tests.conftest import Cast, LiveServer
from tests.oauth.test_only_active_members_tokens_are_accepted import stored_token
from tests.tasks.conftest import error, result, rpc, start

UNKNOWN = {"code": -32602, "message": "Unknown taskId"}
METHODS = [
    ("tasks/get", {}),
    ("tasks/update", {"inputResponses": {"confirm": {"action": "accept", "content": {}}}}),
    ("tasks/cancel", {}),
]


@pytest.mark.parametrize(("method", "extra"), METHODS)
def test_another_member_of_the_tenant_is_told_the_task_does_not_exist(
    live: LiveServer, cast: Cast, reports: str, method: str, extra: dict[str, object]
) -> None:
    alice, bob = cast.token(live, "alice", "reports"), cast.token(live, "bob", "reports")
    task_id = start(reports, alice, seconds=30)

    assert error(rpc(reports, method, {"taskId": task_id, **extra}, bob)) == UNKNOWN
    assert error(rpc(reports, method, {"taskId": "tsk_" + "x" * 43, **extra}, bob)) == UNKNOWN
    assert result(rpc(reports, "tasks/get", {"taskId": task_id}, alice))["status"] == "working"
    rpc(reports, "tasks/cancel", {"taskId": task_id}, alice)


@pytest.mark.parametrize(("method", "extra"), METHODS)
def test_another_tenants_member_is_told_the_task_does_not_exist(
    live: LiveServer, cast: Cast, reports: str, other_reports: str, method: str, extra: dict[str, object]
) -> None:
    alice, mallory = cast.token(live, "alice", "reports"), cast.token(live, "mallory", "reports-other")
    task_id = start(reports, alice, seconds=30)

    assert error(rpc(other_reports, method, {"taskId": task_id, **extra}, mallory)) == UNKNOWN
    refused = rpc(reports, method, {"taskId": task_id, **extra}, mallory)
    assert refused.status_code == 401
    assert 'error="invalid_token"' in refused.headers["www-authenticate"]
    assert result(rpc(reports, "tasks/get", {"taskId": task_id}, alice))["status"] == "working"
    rpc(reports, "tasks/cancel", {"taskId": task_id}, alice)


@pytest.mark.parametrize(("method", "extra"), METHODS)
def test_an_anonymous_caller_and_a_userless_token_are_refused(
    live: LiveServer, cast: Cast, reports: str, method: str, extra: dict[str, object]
) -> None:
    alice = cast.token(live, "alice", "reports")
    task_id = start(reports, alice, seconds=30)

    anonymous = rpc(reports, method, {"taskId": task_id, **extra})
    assert anonymous.status_code == 401
    assert anonymous.headers["www-authenticate"].startswith("Bearer ")
    userless = rpc(reports, method, {"taskId": task_id, **extra}, stored_token(live, user=None, slug="reports"))
    assert userless.status_code == 401
    assert 'error="invalid_token"' in userless.headers["www-authenticate"]
    assert result(rpc(reports, "tasks/get", {"taskId": task_id}, alice))["status"] == "working"
    rpc(reports, "tasks/cancel", {"taskId": task_id}, alice)


def test_the_principal_reads_and_cancels_its_own_task(live: LiveServer, cast: Cast, reports: str) -> None:
    alice = cast.token(live, "alice", "reports")
    task_id = start(reports, alice, seconds=30)

    assert result(rpc(reports, "tasks/cancel", {"taskId": task_id}, alice)).keys() == {"resultType", "_meta"}
    assert result(rpc(reports, "tasks/get", {"taskId": task_id}, alice))["status"] == "cancelled"
    again = result(rpc(reports, "tasks/cancel", {"taskId": task_id}, alice))  # idempotent
    assert again["resultType"] == "complete" and "status" not in again
