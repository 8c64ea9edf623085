"""The elicitation list and change pages fit a 1366-px-wide screen (no sideways scrolling), in
headless Chromium, with screenshots in test-output/screenshots/."""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

from django.contrib.admin.utils import quote
from oauth2_provider.models import get_application_model

from approvals.models import Elicitation
from approvals.services.opening import PaymentTerms, elicitation_open
from tests.conftest import ROOT, Cast, LiveServer, sign_in_to_admin

SHOTS = ROOT / "test-output" / "screenshots"
WIDTH = 1366


def open_rows(live: LiveServer, cast: Cast) -> list[Elicitation]:
    app = get_application_model().objects.create(
        name="Claude Desktop for the whole team",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="http://127.0.0.1/callback",
    )
    tenant_id = cast.tenant("demo").pk
    principal = (app.client_id, live.url, str(cast.user("alice").pk))  # the server's issuer
    tag = uuid.uuid4().hex[:8]
    common: dict[str, Any] = {"tenant_id": tenant_id, "principal": principal, "message": "This needs a staff approval."}
    return [
        elicitation_open(
            **common,
            tool="book_table_with_deposit",
            args_digest=tag.ljust(64, "0"),
            kind=Elicitation.Kind.PAYMENT,
            reference=f"deposit-{tag}-long-booking-reference",
            payment=PaymentTerms(amount=Decimal("20.00"), currency="EUR", description="the deposit"),
        ),
        elicitation_open(
            **common,
            tool="request_refund",
            args_digest=tag.ljust(64, "1"),
            kind=Elicitation.Kind.APPROVAL,
            reference=f"refund-{tag}",
            amount=Decimal("1234567.89"),
            currency="EUR",
        ),
    ]


def overflow(page: Any, name: str) -> int:
    """How many pixels the page, or a table on it (the list's rows, the audit trail), is wider than its box."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"elicitations-{name}.png"), full_page=True)
    return int(
        page.evaluate(
            """() => Math.max(document.documentElement.scrollWidth - window.innerWidth,
                ...[...document.querySelectorAll("#content-main table")].map(
                    t => t.getBoundingClientRect().width - t.parentElement.clientWidth))"""
        )
    )


def test_the_elicitation_pages_fit_1366_px(live: LiveServer, cast: Cast, page: Any) -> None:
    payment, refund = open_rows(live, cast)
    page.set_viewport_size({"width": WIDTH, "height": 900})
    sign_in_to_admin(page, live, "/admin/approvals/elicitation/")
    assert "Claude Desktop for the whole team" in page.inner_text("#result_list")
    assert overflow(page, "list") <= 0
    for row, name in ((payment, "payment"), (refund, "refund")):
        page.goto(f"{live.url}/admin/approvals/elicitation/{quote(row.pk)}/change/")
        assert "alice" in page.inner_text("#content-main")
        assert overflow(page, name) <= 0
