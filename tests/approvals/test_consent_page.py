"""The consent page records the user's answer once: agreeing completes the elicitation, refusing
declines it, and a second answer (a resubmitted form) changes nothing."""

from __future__ import annotations

import pytest

from approvals.models import Elicitation
from tests.approvals.conftest import opened_for
from tests.conftest import Cast, LiveServer
from tests.http import csrf, signed_in


@pytest.mark.parametrize(
    ("action", "other", "status"), [("agree", "refuse", "completed"), ("refuse", "agree", "declined")]
)
def test_the_users_answer_on_the_consent_page_ends_the_elicitation(
    server: LiveServer, cast: Cast, action: str, other: str, status: str
) -> None:
    row = opened_for(server, cast.user("alice"), Elicitation.Kind.CONSENT)
    path = f"/approvals/consent/{row.pk}/"

    browser = signed_in(server, "alice", "alice-password-1")  # only the row's own user may answer
    page = browser.get(path)
    assert "share your calendar with the assistant" in page.text
    form = {"csrfmiddlewaretoken": csrf(page), "action": action}
    assert browser.post(path, data=form).status_code == 302
    row.refresh_from_db()
    assert row.status == status
    ended_at = row.completed_at

    browser.post(path, data={**form, "action": other})

    row.refresh_from_db()
    assert (row.status, row.completed_at) == (status, ended_at)
