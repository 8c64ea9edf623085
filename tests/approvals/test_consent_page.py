"""The consent page records the user's answer once: agreeing completes the elicitation, refusing
declines it, and a second answer (a resubmitted form) changes nothing."""

from __future__ import annotations

import re
import uuid

import httpx2
import pytest

from approvals import services
from approvals.models import Elicitation
from tests.conftest import Cast, LiveServer


@pytest.mark.parametrize(
    ("action", "other", "status"), [("agree", "refuse", "completed"), ("refuse", "agree", "declined")]
)
def test_the_users_answer_on_the_consent_page_ends_the_elicitation(
    server: LiveServer, cast: Cast, action: str, other: str, status: str
) -> None:
    row = services.elicitation_open(
        tenant_id=cast.tenant("demo").pk,
        principal=("client", "issuer", "alice"),
        tool="share_calendar",
        args_digest=uuid.uuid4().hex,
        kind=Elicitation.Kind.CONSENT,
        reference="calendar",
        message="Your consent is needed: share your calendar with the assistant",
    )
    url = f"{server.url}/approvals/consent/{row.pk}/"  # the row names the test process's site root

    with httpx2.Client(timeout=10) as browser:
        page = browser.get(url)
        assert "share your calendar with the assistant" in page.text
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert token is not None
        form = {"csrfmiddlewaretoken": token.group(1), "action": action}
        assert browser.post(url, data=form, headers={"Referer": url}).status_code == 302
        row.refresh_from_db()
        assert row.status == status
        ended_at = row.completed_at

        browser.post(url, data={**form, "action": other}, headers={"Referer": url})

    row.refresh_from_db()
    assert (row.status, row.completed_at) == (status, ended_at)
