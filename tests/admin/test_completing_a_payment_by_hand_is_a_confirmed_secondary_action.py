"""On a pending payment the admin's buttons end it unpaid (Cancel, the default, and Expire);
completing it by hand is a link to a confirmation page, like the admin's delete confirmation,
that says no money was received and asks why. The reason and the staff member land in the audit
trail. Before this, the most prominent button was "Mark completed". Headless Chromium at 1366 px,
screenshots in test-output/screenshots/; the refusals over plain HTTP."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from approvals.models import Elicitation, ElicitationEvent
from tests.approvals.conftest import admin_path, open_payment
from tests.conftest import ROOT, Cast, LiveServer, sign_in_to_admin
from tests.http import csrf, signed_in

SHOTS = ROOT / "test-output" / "screenshots"


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"complete-by-hand-{name}.png"), full_page=True)


def test_staff_complete_a_payment_by_hand_only_after_saying_why(live: LiveServer, cast: Cast, page: Any) -> None:
    row = open_payment(tenant_id=cast.tenant("demo").pk, reference="deposit-by-hand")
    page.set_viewport_size({"width": 1366, "height": 900})
    sign_in_to_admin(page, live, admin_path(row))

    # The default (most prominent) button is the safe one; nothing on the page completes it at once.
    buttons = page.locator("#staff-actions input[type=submit]")
    assert buttons.evaluate_all("inputs => inputs.map(i => i.value)") == ["Cancel", "Expire"]
    assert page.get_attribute("#staff-actions input.default", "value") == "Cancel"
    assert " ".join(page.inner_text("#complete-by-hand").split()) == (
        "Paid another way (no money through the provider)? Complete by hand… (asks you to confirm and say why)"
    )
    shot(page, "1-pending-payment")

    page.click("#complete-by-hand a")
    page.wait_for_url(f"**{admin_path(row, 'complete')}")
    said = " ".join(page.inner_text("#no-money").split())
    assert said.startswith(f"No money was received for this payment. No provider has confirmed 20.00 EUR for {row.pk}")
    assert "tells the waiting client that 20.00 EUR was paid" in said
    shot(page, "2-confirm")

    page.click("input[value='Yes, complete it by hand']")  # without a reason
    assert "This field is required." in page.inner_text(".errorlist")
    row.refresh_from_db()
    assert row.status == Elicitation.Status.PENDING
    shot(page, "3-reason-required")

    page.fill("textarea[name=reason]", "paid by bank transfer, ref 991")
    page.click("input[value='Yes, complete it by hand']")
    page.wait_for_url(f"**{admin_path(row)}")
    assert page.inner_text("ul.messagelist") == (
        f"Completed {row.pk} by hand; the waiting client is told. "
        "The audit trail records that no money was received, your name and your reason."
    )
    assert page.inner_text("div.field-ended div.readonly") == (
        "Completed by hand by staff: no money was received through a provider; "
        "the client was told 20.00 EUR was paid. Reason: \N{LEFT DOUBLE QUOTATION MARK}paid by bank transfer, "
        "ref 991\N{RIGHT DOUBLE QUOTATION MARK}."
    )
    shot(page, "4-completed")
    row.refresh_from_db()
    assert (row.status, row.completed_by_user, row.completed_by_event) == ("completed", cast.user("staff"), None)
    event = ElicitationEvent.objects.exclude(status="pending").get(elicitation=row)
    assert (event.via, event.actor, event.note) == (
        "staff",
        cast.user("staff"),
        "completed by hand, no money received through sandbox: paid by bank transfer, ref 991",
    )


def test_the_decide_buttons_no_longer_complete_a_payment(live: LiveServer, cast: Cast) -> None:
    row = open_payment(tenant_id=cast.tenant("demo").pk, reference="deposit-old-button")
    staff = signed_in(live, "staff", "staff-password-1")
    page = staff.get(admin_path(row))
    response = staff.post(admin_path(row, "decide"), data={"csrfmiddlewaretoken": csrf(page), "_complete": "1"})
    assert (response.status_code, response.text) == (400, "no action chosen")
    row.refresh_from_db()
    assert row.status == Elicitation.Status.PENDING


def test_staff_without_the_change_permission_may_not_complete_by_hand(live: LiveServer, cast: Cast) -> None:
    viewer, _ = get_user_model().objects.get_or_create(username="viewer-by-hand", is_staff=True)
    viewer.set_password("viewer-password-1")
    viewer.save()
    viewer.user_permissions.add(Permission.objects.get(codename="view_elicitation"))
    row = open_payment(tenant_id=cast.tenant("demo").pk, reference="deposit-viewer")
    http = signed_in(live, "viewer-by-hand", "viewer-password-1")
    page = http.get(admin_path(row))
    assert page.status_code == 200
    assert "Complete by hand" not in page.text and 'name="_cancel"' not in page.text
    assert http.get(admin_path(row, "complete")).status_code == 403
    refused = http.post(admin_path(row, "complete"), data={"csrfmiddlewaretoken": csrf(page), "reason": "paid in cash"})
    assert refused.status_code == 403
    row.refresh_from_db()
    assert row.status == Elicitation.Status.PENDING
    assert not ElicitationEvent.objects.filter(elicitation=row).exclude(status="pending").exists()
