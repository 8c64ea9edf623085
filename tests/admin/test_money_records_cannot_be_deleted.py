"""Payments, elicitations and webhook deliveries are money and audit records: no one deletes
them from the admin, a superuser included (no Delete link, no "delete selected" action, 403 on
the delete view), and their pages are read-only (no Save buttons; a POST to the change page is
403). Staff still act on a pending elicitation through its own buttons."""

from __future__ import annotations

import uuid

import pytest
from django.contrib import admin
from django.contrib.admin.utils import quote
from django.contrib.auth import get_user_model
from django.test import Client, RequestFactory

from approvals.models import Elicitation, Payment, WebhookDelivery
from mcpsite.models import Tenant
from tests.approvals.conftest import open_payment

pytestmark = pytest.mark.django_db

Record = tuple[str, Elicitation | Payment | WebhookDelivery]
SAVE_BUTTONS = ('name="_save"', 'name="_continue"', 'name="_addanother"')


@pytest.fixture
def staff() -> Client:
    client = Client()
    client.force_login(get_user_model().objects.get(username="staff"))  # a superuser
    return client


@pytest.fixture
def records() -> dict[str, Record]:
    """One of each record, by admin name: (its pk as the admin quotes it, the row)."""
    row = open_payment(tenant_id=Tenant.objects.get(slug="demo").pk, reference="deposit-keep")
    delivery = WebhookDelivery.objects.create(
        provider="sandbox",
        event_id=f"evt_{uuid.uuid4().hex}",
        event_type="checkout.session.completed",
        elicitation=row,
        outcome=WebhookDelivery.Outcome.MISMATCH,
        flagged=True,
    )
    return {
        "elicitation": (quote(row.pk), row),
        "payment": (quote(row.pk), row.payment),
        "webhookdelivery": (quote(delivery.pk), delivery),
    }


@pytest.mark.parametrize("name", ["elicitation", "payment", "webhookdelivery"])
def test_no_one_may_delete_a_money_record_from_the_admin(staff: Client, records: dict[str, Record], name: str) -> None:
    pk, record = records[name]
    assert staff.get(f"/admin/approvals/{name}/{pk}/delete/").status_code == 403
    assert staff.post(f"/admin/approvals/{name}/{pk}/delete/", {"post": "yes"}).status_code == 403

    changelist = staff.get(f"/admin/approvals/{name}/")
    assert changelist.status_code == 200
    assert 'value="delete_selected"' not in changelist.content.decode()
    staff.post(f"/admin/approvals/{name}/", {"action": "delete_selected", "_selected_action": [pk], "post": "yes"})

    request = RequestFactory().get("/admin/")
    request.user = get_user_model().objects.get(username="staff")
    assert admin.site.get_model_admin(type(record)).has_delete_permission(request, record) is False
    elicitation_id, delivery_id = str(records["elicitation"][1].pk), int(records["webhookdelivery"][1].pk)
    assert Payment.objects.filter(elicitation_id=elicitation_id).exists()  # and the elicitation it hangs off
    assert WebhookDelivery.objects.filter(pk=delivery_id, elicitation_id=elicitation_id).exists()


@pytest.mark.parametrize("name", ["elicitation", "payment", "webhookdelivery"])
def test_a_money_records_page_has_no_delete_link_and_no_save_buttons(
    staff: Client, records: dict[str, Record], name: str
) -> None:
    pk, _ = records[name]
    page = staff.get(f"/admin/approvals/{name}/{pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "deletelink" not in html and f"/{pk}/delete/" not in html
    for button in SAVE_BUTTONS:
        assert button not in html, button


def test_staff_still_act_on_a_pending_elicitation_but_cannot_save_it(staff: Client, records: dict[str, Record]) -> None:
    pk, record = records["elicitation"]
    row = Elicitation.objects.get(pk=record.pk)
    assert 'name="_cancel"' in staff.get(f"/admin/approvals/elicitation/{pk}/change/").content.decode()
    assert staff.post(f"/admin/approvals/elicitation/{pk}/change/", {"status": "completed"}).status_code == 403
    row.refresh_from_db()
    assert row.status == Elicitation.Status.PENDING
    assert staff.post(f"/admin/approvals/elicitation/{pk}/decide/", {"_cancel": "1", "note": "t"}).status_code == 302
    row.refresh_from_db()
    assert row.status == Elicitation.Status.CANCELLED


def test_a_tenant_with_elicitations_cannot_be_deleted_from_the_admin(staff: Client) -> None:
    tenant = Tenant.objects.create(slug=f"gone-{uuid.uuid4().hex[:6]}", name="Going away")
    row = open_payment(tenant_id=tenant.pk, reference="deposit-keep")

    page = staff.post(f"/admin/mcpsite/tenant/{tenant.pk}/delete/", {"post": "yes"})

    assert page.status_code == 200  # the admin's refusal page, not a redirect after deleting
    assert "<title>Cannot delete tenant" in page.content.decode()
    assert Tenant.objects.filter(pk=tenant.pk).exists()
    assert Elicitation.objects.filter(pk=row.pk).exists() and Payment.objects.filter(pk=row.pk).exists()
