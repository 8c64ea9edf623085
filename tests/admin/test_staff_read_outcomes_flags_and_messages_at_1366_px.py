"""What staff read in the admin at 1366 px, in headless Chromium (screenshots in
test-output/screenshots/): how a step ended as a sentence, not raw JSON; only flagged webhook
deliveries marked (a boolean column drew a red cross on every delivery that was fine); the
message after a decision keeps the id as written (the admin capitalised it to "El_…")."""

from __future__ import annotations

import uuid
from typing import Any

from approvals.models import Elicitation, WebhookDelivery
from approvals.providers.sandbox import signed_delivery
from approvals.services.staff import elicitation_end_by_staff
from approvals.services.webhooks import webhook_receive
from mcpsite.actors import Actor, Via
from tests.approvals.conftest import admin_path, open_payment, opened_for, payment_event
from tests.conftest import ROOT, Cast, LiveServer, sign_in_to_admin

SHOTS = ROOT / "test-output" / "screenshots"
LQ, RQ = "\N{LEFT DOUBLE QUOTATION MARK}", "\N{RIGHT DOUBLE QUOTATION MARK}"


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"staff-read-{name}.png"), full_page=True)


def paid(cast: Cast, reference: str) -> tuple[Elicitation, WebhookDelivery]:
    """A payment completed by a signed sandbox event, through the receiver a provider posts to."""
    row = open_payment(tenant_id=cast.tenant("demo").pk, reference=reference)
    body, headers = signed_delivery(payment_event(row))
    delivery = webhook_receive(provider="sandbox", body=body, headers=headers)
    row.refresh_from_db()
    return row, delivery


def test_a_paid_payment_reads_paid_with_its_receipt_and_only_money_for_nothing_is_flagged(
    live: LiveServer, cast: Cast, page: Any
) -> None:
    row, fine = paid(cast, f"deposit-read-{uuid.uuid4().hex[:6]}")
    body, headers = signed_delivery(payment_event(row, id=f"evt_again_{row.pk}"))
    again = webhook_receive(provider="sandbox", body=body, headers=headers)  # money for an ended step
    assert (fine.flagged, again.flagged) == (False, True)
    page.set_viewport_size({"width": 1366, "height": 900})
    sign_in_to_admin(page, live, admin_path(row))

    assert page.inner_text("div.field-ended div.readonly") == (
        f"Paid 20.00 EUR through sandbox, receipt {row.payment.provider_reference} (event {fine.event_id})."
    )
    assert '"receipt"' not in page.inner_text("fieldset:has(div.field-ended)")
    assert page.inner_text(f"tr:has-text('{again.event_id}') td.field-flag") == (
        "Flagged: money arrived for nothing, look at it"
    )
    assert page.inner_text(f"tr:has-text('{fine.event_id}'):not(:has-text('evt_again')) td.field-flag") == ""
    assert page.locator("#content-main img[alt=False]").count() == 0  # no red cross anywhere
    shot(page, "paid-payment")

    page.goto(f"{live.url}/admin/approvals/webhookdelivery/?q={row.pk}")
    cells = page.locator("#result_list td.field-flag").all_inner_texts()
    assert sorted(cells) == ["", "Flagged: money arrived for nothing, look at it"]
    assert page.locator("#result_list img[alt=False]").count() == 0
    shot(page, "deliveries")


def test_a_denied_approval_reads_who_denied_it_and_the_note(live: LiveServer, cast: Cast, page: Any) -> None:
    row = opened_for(live, cast.user("alice"), Elicitation.Kind.APPROVAL)
    elicitation_end_by_staff(
        elicitation=row, action="deny", actor=Actor(Via.STAFF, cast.user("staff")), note="no receipt"
    )
    page.set_viewport_size({"width": 1366, "height": 900})
    sign_in_to_admin(page, live, admin_path(row))
    assert page.inner_text("div.field-ended div.readonly") == f"Denied by staff with note {LQ}no receipt{RQ}."
    shot(page, "denied-approval")


def test_the_message_after_approving_keeps_the_id_as_written(live: LiveServer, cast: Cast, page: Any) -> None:
    row = opened_for(live, cast.user("alice"), Elicitation.Kind.APPROVAL)
    assert row.pk.startswith("el_")
    page.set_viewport_size({"width": 1366, "height": 900})
    sign_in_to_admin(page, live, admin_path(row))
    page.fill("#decision-note", "receipt seen")
    page.click("#staff-actions input[name=_approve]")
    page.wait_for_selector("ul.messagelist")
    assert page.inner_text("ul.messagelist") == f"Approved {row.pk}; the waiting client is told."
    assert page.inner_text("div.field-ended div.readonly") == f"Approved by staff with note {LQ}receipt seen{RQ}."
    shot(page, "approved-message")
