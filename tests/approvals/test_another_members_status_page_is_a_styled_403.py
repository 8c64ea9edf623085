"""A member who opens another member's status page gets the site's own 403 page (styled like the
sign-in page, status 403), saying the page is not theirs and who they are signed in as, never
whose it is nor what it says. Headless Chromium at 1366 px, screenshots in test-output/."""

from __future__ import annotations

from typing import Any

from approvals.models import Elicitation
from tests.approvals.conftest import opened_for, sign_in_page
from tests.conftest import Cast, LiveServer


def test_bob_on_alices_status_page_reads_that_it_is_not_his(server: LiveServer, cast: Cast, page: Any) -> None:
    row = opened_for(server, cast.user("alice"), Elicitation.Kind.APPROVAL)
    page.set_viewport_size({"width": 1366, "height": 800})
    sign_in_page(page, server, "bob", "bob-password-1")
    response = page.goto(f"{server.url}/approvals/status/{row.pk}/")
    assert response.status == 403
    assert page.text_content("h1") == "Not your page"
    assert page.text_content("#reason") == (
        "This staff approval page is not yours: only the person it was opened for may see it."
    )
    assert " ".join(page.text_content("#signed-in-as").split()) == (
        "You are signed in as bob. If the link was meant for another of your accounts, sign in as that one."
    )
    shown = page.inner_text("body")
    assert "alice" not in shown and row.message not in shown
    # The site's stylesheet, not the browser's bare default.
    assert page.eval_on_selector("#forbidden", "e => getComputedStyle(e).borderStyle") == "solid"


def test_signing_in_as_someone_else_leads_back_to_the_page(server: LiveServer, cast: Cast, page: Any) -> None:
    row = opened_for(server, cast.user("alice"), Elicitation.Kind.APPROVAL)
    sign_in_page(page, server, "bob", "bob-password-1")
    page.goto(f"{server.url}/approvals/status/{row.pk}/")
    page.click("text=Sign in as someone else")
    page.wait_for_selector("#id_username")
    page.fill("#id_username", "alice")
    page.fill("#id_password", "alice-password-1")
    page.click("button[type=submit]")
    page.wait_for_selector("#status[data-status=pending]")
    assert page.url == f"{server.url}/approvals/status/{row.pk}/"


def test_the_consent_page_of_another_member_says_the_same(server: LiveServer, cast: Cast, page: Any) -> None:
    row = opened_for(server, cast.user("alice"), Elicitation.Kind.CONSENT)
    sign_in_page(page, server, "mallory", "mallory-password-1")
    response = page.goto(f"{server.url}/approvals/consent/{row.pk}/")
    assert response.status == 403
    assert page.text_content("#reason") == (
        "This consent page is not yours: only the person it was opened for may see it."
    )
