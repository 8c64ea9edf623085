"""The consent page is bound to the row's principal: signing in is required, only the user the
call ran as may answer (another member, another tenant's user and anyone at all for a row that
names no principal get 403), and who answered is recorded. Before this, anyone holding the URL
(the agent included) could click "I agree" and it was recorded as the user's consent."""

from __future__ import annotations

import uuid
from urllib.parse import quote

import httpx2
import pytest
from django.conf import settings

from approvals.models import Elicitation, ElicitationEvent
from approvals.services.ending import NotYours, consent_give
from approvals.services.opening import elicitation_open
from tests.approvals.conftest import opened_for
from tests.conftest import Cast, LiveServer
from tests.http import csrf, signed_in
from tools_app.principal import Principal

PASSWORDS = {"alice": "alice-password-1", "bob": "bob-password-1", "mallory": "mallory-password-1"}


def consent_path(row: Elicitation) -> str:
    return f"/approvals/consent/{row.pk}/"


def assert_unanswered(row: Elicitation) -> None:
    row.refresh_from_db()
    assert (row.status, row.completed_at, row.completed_by_user) == ("pending", None, None)
    # Only the line its opening wrote.
    assert list(ElicitationEvent.objects.filter(elicitation=row).values_list("via", "status")) == [
        ("client", "pending")
    ]


def test_an_anonymous_visitor_is_sent_to_sign_in_and_changes_nothing(server: LiveServer, cast: Cast) -> None:
    row = opened_for(server, cast.user("alice"), Elicitation.Kind.CONSENT)
    login = f"/accounts/login/?next={quote(consent_path(row))}"
    with httpx2.Client(base_url=server.url, headers={"Referer": f"{server.url}/"}, timeout=10) as anonymous:
        page = anonymous.get(consent_path(row))
        assert (page.status_code, page.headers["Location"]) == (302, login)
        token = csrf(anonymous.get("/accounts/login/"))  # a valid CSRF token, so only the sign-in check refuses
        answer = anonymous.post(consent_path(row), data={"csrfmiddlewaretoken": token, "action": "agree"})
        assert (answer.status_code, answer.headers["Location"]) == (302, login)
    assert_unanswered(row)


@pytest.mark.parametrize("intruder", ["bob", "mallory"])  # bob shares alice's tenant; mallory is at another
def test_another_user_is_refused_and_changes_nothing(server: LiveServer, cast: Cast, intruder: str) -> None:
    row = opened_for(server, cast.user("alice"), Elicitation.Kind.CONSENT)
    http = signed_in(server, intruder, PASSWORDS[intruder])
    assert http.get(consent_path(row)).status_code == 403
    token = csrf(http.get("/accounts/login/"))
    assert http.post(consent_path(row), data={"csrfmiddlewaretoken": token, "action": "agree"}).status_code == 403
    assert_unanswered(row)


def test_a_row_that_names_no_principal_is_answered_by_nobody(server: LiveServer, cast: Cast) -> None:
    public = opened_for(server, None, Elicitation.Kind.CONSENT, slug="open")
    elsewhere = opened_for(server, cast.user("alice"), Elicitation.Kind.CONSENT, issuer="https://elsewhere.example")
    http = signed_in(server, "alice", PASSWORDS["alice"])
    for row in (public, elsewhere):
        assert http.get(consent_path(row)).status_code == 403
        token = csrf(http.get("/accounts/login/"))
        assert http.post(consent_path(row), data={"csrfmiddlewaretoken": token, "action": "agree"}).status_code == 403
        assert_unanswered(row)


def test_the_rows_user_signs_in_answers_and_is_recorded_as_the_actor(server: LiveServer, cast: Cast) -> None:
    alice = cast.user("alice")
    row = opened_for(server, alice, Elicitation.Kind.CONSENT)
    with httpx2.Client(base_url=server.url, headers={"Referer": f"{server.url}/"}, timeout=10) as browser:
        login = browser.get(consent_path(row), follow_redirects=True)  # to the sign-in form, then back
        signed = browser.post(
            str(login.url),
            data={
                "csrfmiddlewaretoken": csrf(login),
                "username": "alice",
                "password": PASSWORDS["alice"],
                "next": consent_path(row),
            },
        )
        assert (signed.status_code, signed.headers["Location"]) == (302, consent_path(row))
        page = browser.get(consent_path(row))
        assert page.status_code == 200
        assert "share your calendar with the assistant" in page.text and "You answer as alice." in page.text
        answer = browser.post(consent_path(row), data={"csrfmiddlewaretoken": csrf(page), "action": "agree"})
        assert (answer.status_code, answer.headers["Location"]) == (302, f"/approvals/status/{row.pk}/")
        assert 'data-status="completed"' in browser.get(answer.headers["Location"]).text
    row.refresh_from_db()
    assert (row.status, row.completed_by_user, row.outcome) == ("completed", alice, {"consent": "given"})
    event = ElicitationEvent.objects.exclude(status="pending").get(elicitation=row)  # after the opening line
    assert (event.actor, event.via, event.status) == (alice, "user", "completed")


def test_the_service_refuses_an_answer_from_anyone_but_the_rows_user(cast: Cast) -> None:
    """The page is one adapter; `consent_give` itself holds the rule (rows opened at this
    process's own issuer, as the running site opens them)."""
    row = elicitation_open(
        tenant_id=cast.tenant("demo").pk,
        principal=Principal(f"client-{uuid.uuid4().hex[:8]}", settings.MCPSITE["ISSUER"], str(cast.user("alice").pk)),
        tool="share_calendar",
        args_digest=uuid.uuid4().hex,
        kind=Elicitation.Kind.CONSENT,
        reference="calendar",
        message="Share your calendar?",
    )
    with pytest.raises(NotYours):
        consent_give(elicitation=row, user=cast.user("bob"), agree=True)
    assert_unanswered(row)
    consent_give(elicitation=row, user=cast.user("alice"), agree=False)
    row.refresh_from_db()
    assert (row.status, row.completed_by_user) == ("declined", cast.user("alice"))
