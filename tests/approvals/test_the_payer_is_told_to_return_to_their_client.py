"""After Pay (or Cancel) on the sandbox checkout page, the payer, who never signed in to this site,
stays on the checkout page, which says how the payment ended and to return to their client (the
client was told when the webhook completed the row). Before this, Pay led to the status page,
and so to a bare "Sign in" form. Headless Chromium at 1366 px, screenshots in test-output/."""

from __future__ import annotations

from typing import Any

from approvals.models import Elicitation
from tests.approvals.conftest import open_payment
from tests.conftest import Cast, LiveServer

WIDTH = 1366


def checkout(page: Any, server: LiveServer, row: Elicitation) -> None:
    page.set_viewport_size({"width": WIDTH, "height": 800})
    page.goto(f"{server.url}/approvals/checkout/{row.pk}/")
    assert page.text_content("#amount") == "20.00 EUR"


def test_after_paying_the_payer_reads_that_the_payment_was_received(server: LiveServer, cast: Cast, page: Any) -> None:
    row = open_payment(tenant_id=cast.tenant("demo").pk, reference="deposit-payer-pays")
    checkout(page, server, row)
    page.click("button[value=pay]")
    page.wait_for_selector("#status[data-status=completed]")
    assert page.url == f"{server.url}/approvals/checkout/{row.pk}/"
    assert page.text_content("#status").strip() == "Payment received. Thank you."
    assert page.text_content("#next-step") == (
        "You can close this page and return to your assistant: it has already been told."
    )
    assert "Sign in" not in page.inner_text("body")
    row.refresh_from_db()
    assert row.status == Elicitation.Status.COMPLETED


def test_after_cancelling_the_payer_reads_that_nothing_was_charged(server: LiveServer, cast: Cast, page: Any) -> None:
    row = open_payment(tenant_id=cast.tenant("demo").pk, reference="deposit-payer-cancels")
    checkout(page, server, row)
    page.click("button[value=cancel]")
    page.wait_for_selector("#status[data-status=cancelled]")
    assert page.text_content("#status").strip() == "Payment cancelled: nothing was charged."
    assert "return to your assistant" in page.text_content("#next-step")
    assert "Sign in" not in page.inner_text("body")
