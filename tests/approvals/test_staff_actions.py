"""Staff act on pending elicitations from the admin: every action goes through the same services
as the webhook and the beat task, is audited, and tells the waiting client at once."""

from __future__ import annotations

import httpx2
import pytest

from approvals.models import Elicitation, ElicitationEvent, WebhookDelivery
from tests.approvals.conftest import CallInThread, admin_path, deliver, elicitation_id_of, payment_event
from tests.conftest import Cast, LiveServer
from tests.http import admin_messages, csrf, signed_in
from tests.mcp.clients import MODES


def act(staff: httpx2.Client, row: Elicitation, button: str, note: str = "") -> str:
    page = staff.get(admin_path(row))
    assert page.status_code == 200
    response = staff.post(
        admin_path(row, "decide"),
        data={"csrfmiddlewaretoken": csrf(page), button: "1", "note": note},
        follow_redirects=True,
    )
    assert response.status_code == 200, (response.status_code, response.text[:300])
    return admin_messages(response)


def refund(server: LiveServer, cast: Cast, mode: str, order_id: str) -> tuple[CallInThread, Elicitation]:
    arguments = {"order_id": order_id, "amount": "5"}
    call = CallInThread(server.mcp_url(), cast.token(server), mode, "request_refund", arguments).start()
    return call, Elicitation.objects.get(pk=elicitation_id_of(call.next_question().url))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("button", "status", "reply"),
    [
        ("_cancel", "cancelled", "Refund for order {order} cancelled."),
        ("_expire", "expired", "Refund for order {order} not decided in time: the request expired."),
        ("_deny", "declined", "Refund for order {order} denied: no receipt."),
    ],
)
def test_staff_action_ends_the_step_and_the_waiting_call_answers(
    server: LiveServer, cast: Cast, mode: str, button: str, status: str, reply: str
) -> None:
    order = f"S{button}-{mode}"
    call, row = refund(server, cast, mode, order)
    staff = signed_in(server, "staff", "staff-password-1")
    assert "the waiting client is told" in act(staff, row, button, "no receipt")
    call.join()
    assert call.text == reply.format(order=order)
    row.refresh_from_db()
    assert row.status == status
    event = ElicitationEvent.objects.exclude(status="pending").get(elicitation=row)  # after the opening line
    assert (event.via, event.actor, event.status) == ("staff", cast.user("staff"), status)


def test_marking_a_payment_completed_needs_a_reason_and_is_audited(
    server: LiveServer, cast: Cast, booking: int
) -> None:
    call = CallInThread(server.mcp_url(), cast.token(server), "2026-07-28", "pay_deposit", {"booking_id": booking})
    row = Elicitation.objects.get(pk=elicitation_id_of(call.start().next_question().url))
    staff = signed_in(server, "staff", "staff-password-1")
    confirm = staff.get(admin_path(row, "complete"))
    assert "No money was received for this payment." in confirm.text
    missing = staff.post(admin_path(row, "complete"), data={"csrfmiddlewaretoken": csrf(confirm), "reason": " "})
    assert missing.status_code == 200 and "This field is required." in missing.text
    row.refresh_from_db()
    assert row.status == "pending"
    done = staff.post(
        admin_path(row, "complete"),
        data={"csrfmiddlewaretoken": csrf(confirm), "reason": "paid by bank transfer, ref 991"},
        follow_redirects=True,
    )
    assert f"Completed {row.pk} by hand; the waiting client is told." in admin_messages(done)
    call.join()
    assert f"Booking {booking}" in call.text and "not confirmed" not in call.text
    row.refresh_from_db()
    assert (row.status, row.completed_by_user, row.completed_by_event) == ("completed", cast.user("staff"), None)
    event = ElicitationEvent.objects.exclude(status="pending").get(elicitation=row)  # after the opening line
    assert event.note == "completed by hand, no money received through sandbox: paid by bank transfer, ref 991"


def test_the_detail_page_shows_digest_url_deliveries_and_audit_trail(
    server: LiveServer, cast: Cast, booking: int
) -> None:
    call = CallInThread(server.mcp_url(), cast.token(server), "2026-07-28", "pay_deposit", {"booking_id": booking})
    row = Elicitation.objects.get(pk=elicitation_id_of(call.start().next_question().url))
    assert deliver(server, payment_event(row)).status_code == 200
    call.join()
    page = signed_in(server, "staff", "staff-password-1").get(admin_path(row))
    delivery = WebhookDelivery.objects.get(elicitation=row)
    for shown in (row.args_digest, row.url, delivery.event_id, "Audit trail", f"{delivery.provider} event"):
        assert shown in page.text, shown


def test_list_filters_and_search(server: LiveServer, cast: Cast, booking: int) -> None:
    call = CallInThread(server.mcp_url(), cast.token(server), "2026-07-28", "pay_deposit", {"booking_id": booking})
    row = Elicitation.objects.get(pk=elicitation_id_of(call.start().next_question().url))
    assert deliver(server, payment_event(row)).status_code == 200
    call.join()
    reference = row.payment.provider_reference
    staff = signed_in(server, "staff", "staff-password-1")

    def listed(query: str) -> bool:
        return row.pk in staff.get(f"/admin/approvals/elicitation/?{query}").text

    assert listed(f"q={reference}")  # by provider reference
    assert listed(f"q={row.subject}")  # by principal
    assert listed("kind__exact=payment&status__exact=completed&age=1h")
    assert not listed("age=older")
    assert not listed("kind__exact=approval")
    # Money for an ended step is flagged and has its own filter.
    assert deliver(server, payment_event(row, id=f"evt_again_{row.pk}")).status_code == 200
    assert listed("flagged=yes")


def test_staff_without_the_change_permission_cannot_act(server: LiveServer, cast: Cast) -> None:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    viewer, _ = get_user_model().objects.get_or_create(username="viewer-approvals", is_staff=True)
    viewer.set_password("viewer-password-1")
    viewer.save()
    viewer.user_permissions.add(Permission.objects.get(codename="view_elicitation"))
    call, row = refund(server, cast, "2026-07-28", "perm-1")
    http = signed_in(server, "viewer-approvals", "viewer-password-1")
    page = http.get(admin_path(row))
    assert page.status_code == 200
    response = http.post(admin_path(row, "decide"), data={"csrfmiddlewaretoken": csrf(page), "_approve": "1"})
    assert response.status_code == 403
    row.refresh_from_db()
    assert row.status == "pending"
    staff = signed_in(server, "staff", "staff-password-1")
    act(staff, row, "_cancel")
    call.join()
