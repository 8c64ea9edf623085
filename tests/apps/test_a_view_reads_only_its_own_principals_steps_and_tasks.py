"""A view reads only what its principal may read, as the status pages and tasks/get: another
user and another tenant learn nothing of a step or a task, nor cancel it; a userless token and a
caller without a token are refused."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_tasks.models import Task
from mcpsite.models import Tenant
from tests.apps.conftest import TOOLSETS, screenshot
from tests.apps.host import AppsHost
from tests.conftest import Cast, LiveServer
from tests.oauth.test_only_active_members_tokens_are_accepted import stored_token
from tests.tasks.conftest import rpc, start, wait_for

ARGS = {"order_id": "C-7", "amount": "9.00"}


def step_status(host: AppsHost, arguments: dict[str, Any] = ARGS) -> dict[str, Any]:
    return host.request(
        "tools/call", {"name": "step_status", "arguments": {"tool": "request_refund", "arguments": arguments}}
    )


def text(result: dict[str, Any]) -> str:
    return " ".join(c["text"] for c in result["content"])


def test_another_user_and_another_tenant_find_nothing_of_a_step(server: LiveServer, cast: Cast, alice: str) -> None:
    with AppsHost(server.mcp_url("apps"), alice) as host:
        host.call_in_background("request_refund", ARGS)
        url = host.asked.get(timeout=20).url
        mine = step_status(host)["structuredContent"]
        assert mine["status"] == "pending"
        assert mine["decider"] == "Staff of Apps"

    bob = cast.token(server, "bob", slug="apps")
    elsewhere = cast.token(server, "alice", slug="apps-two")  # alice herself, at another tenant
    for mcp_url, token in ((server.mcp_url("apps"), bob), (server.mcp_url("apps-two"), elsewhere)):
        with AppsHost(mcp_url, token) as other:
            theirs = step_status(other)
            assert theirs["structuredContent"] == {**{k: "" for k in mine}, "status": "none"}
            assert url not in str(theirs)


def test_a_payment_card_never_carries_the_providers_session(server: LiveServer, alice: str, booking: int) -> None:
    from approvals.models import Elicitation
    from tests.approvals.conftest import deliver, elicitation_id_of, payment_event

    with AppsHost(server.mcp_url("apps"), alice) as host:
        call = host.call_in_background("pay_deposit", {"booking_id": booking})
        row = Elicitation.objects.select_related("payment").get(pk=elicitation_id_of(host.asked.get(timeout=20).url))
        deliver(server, payment_event(row))
        call.result(timeout=20)
        card = host.request(
            "tools/call",
            {"name": "step_status", "arguments": {"tool": "pay_deposit", "arguments": {"booking_id": booking}}},
        )
    row.refresh_from_db()
    assert card["structuredContent"]["status"] == "completed"
    assert card["structuredContent"]["url"] == ""
    assert row.payment.provider_reference and row.payment.provider_reference not in str(card)
    assert row.outcome["receipt"]["event_id"] not in str(card)


def test_another_user_and_another_tenant_can_neither_read_nor_cancel_a_task(
    server: LiveServer, cast: Cast, alice: str, page: Any
) -> None:
    url = server.mcp_url("apps")
    task_id = start(url, alice, seconds=60, title="private")
    bob = cast.token(server, "bob", slug="apps")
    elsewhere = cast.token(server, "alice", slug="apps-two")
    for mcp_url, token in ((url, bob), (server.mcp_url("apps-two"), elsewhere)):
        with AppsHost(mcp_url, token) as other:
            for tool in ("task_view_status", "task_view_cancel", "show_task"):
                refused = other.request("tools/call", {"name": tool, "arguments": {"task_id": task_id}})
                assert refused["isError"] is True
                assert text(refused).endswith(": Unknown taskId")  # as tasks/get answers: no id can be probed
    assert Task.objects.get(pk=task_id).status == Task.Status.WORKING

    with AppsHost(url, bob) as other:  # and the card says so, in bob's host
        view = other.show(page, "show_task", {"task_id": task_id})
        view.locator("#error").wait_for(state="visible", timeout=10_000)
        assert view.locator("#error").inner_text() == "Unknown taskId"
        assert view.locator("#badge").inner_text() == "Unavailable"
        assert view.locator("#cancel").is_hidden()
        screenshot(page, "task-not-yours")
    assert wait_for(url, alice, task_id, "working")["status"] == "working"
    rpc(url, "tasks/cancel", {"taskId": task_id}, alice)


@pytest.mark.parametrize("tool", ["step_status", "task_view_status", "task_view_cancel"])
def test_a_userless_token_is_refused(server: LiveServer, cast: Cast, tool: str) -> None:
    arguments = {"tool": "request_refund", "arguments": ARGS} if tool == "step_status" else {"task_id": "tsk_x"}
    response = rpc(
        server.mcp_url("apps"),
        "tools/call",
        {"name": tool, "arguments": arguments},
        stored_token(server, user=None, slug="apps"),
    )
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]


def test_a_caller_without_a_token_is_refused_at_a_public_tenant(server: LiveServer, django_db_blocker: Any) -> None:
    with django_db_blocker.unblock():
        Tenant.objects.update_or_create(
            slug="apps-open", defaults={"name": "Open apps", "toolsets": TOOLSETS, "public": True}
        )
    task_id = start(server.mcp_url("apps-open"), None, seconds=0, title="anyone")
    for tool, arguments in (
        ("step_status", {"tool": "request_refund", "arguments": ARGS}),
        ("task_view_status", {"task_id": task_id}),
        ("task_view_cancel", {"task_id": task_id}),
    ):
        answer = rpc(server.mcp_url("apps-open"), "tools/call", {"name": tool, "arguments": arguments}).json()["result"]
        assert answer["isError"] is True
        assert "only to the person" in text(answer)
