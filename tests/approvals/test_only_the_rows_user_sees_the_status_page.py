"""The status page shows a row only to its principal: anonymous visitors are sent to sign in
(and come back to it), another member or another tenant's user gets 403, and so does everyone
for a row that names no principal. Before this, anyone holding the id saw the row."""

from __future__ import annotations

from urllib.parse import quote

import httpx2
import pytest

from approvals.models import Elicitation
from tests.approvals.conftest import opened_for
from tests.conftest import Cast, LiveServer
from tests.http import csrf, signed_in


def status_path(row: Elicitation) -> str:
    return f"/approvals/status/{row.pk}/"


def test_an_anonymous_visitor_is_sent_to_sign_in_and_back(server: LiveServer, cast: Cast) -> None:
    row = opened_for(server, cast.user("alice"), Elicitation.Kind.APPROVAL)
    with httpx2.Client(base_url=server.url, headers={"Referer": f"{server.url}/"}, timeout=10) as browser:
        page = browser.get(status_path(row))
        assert (page.status_code, page.headers["Location"]) == (302, f"/accounts/login/?next={quote(status_path(row))}")
        login = browser.get(page.headers["Location"])
        signed = browser.post(
            str(login.url),
            data={
                "csrfmiddlewaretoken": csrf(login),
                "username": "alice",
                "password": "alice-password-1",
                "next": status_path(row),
            },
        )
        assert (signed.status_code, signed.headers["Location"]) == (302, status_path(row))
        shown = browser.get(status_path(row))
    assert shown.status_code == 200
    assert 'data-status="pending"' in shown.text


@pytest.mark.parametrize(("intruder", "password"), [("bob", "bob-password-1"), ("mallory", "mallory-password-1")])
def test_another_user_is_refused(server: LiveServer, cast: Cast, intruder: str, password: str) -> None:
    row = opened_for(server, cast.user("alice"), Elicitation.Kind.APPROVAL)
    page = signed_in(server, intruder, password).get(status_path(row))
    assert page.status_code == 403
    assert row.message not in page.text


def test_a_row_that_names_no_principal_is_shown_to_nobody(server: LiveServer, cast: Cast) -> None:
    row = opened_for(server, None, Elicitation.Kind.APPROVAL, slug="open")
    assert signed_in(server, "alice", "alice-password-1").get(status_path(row)).status_code == 403


def test_the_rows_user_sees_it(server: LiveServer, cast: Cast) -> None:
    row = opened_for(server, cast.user("alice"), Elicitation.Kind.APPROVAL)
    page = signed_in(server, "alice", "alice-password-1").get(status_path(row))
    assert page.status_code == 200
    assert row.message in page.text and 'data-status="pending"' in page.text
