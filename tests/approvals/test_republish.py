"""An end whose broadcast never left its process (a crash between commit and publish) is re-sent
by the beat task: the waiting 2025-11-25 session is then notified and its call answers."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from approvals.models import Elicitation
from approvals.tasks import elicitations_republish
from config.celery import app
from tests.approvals.conftest import CallInThread, elicitation_id_of
from tests.conftest import Cast, LiveServer


def test_unpublished_end_is_resent_by_the_beat_task(server: LiveServer, cast: Cast) -> None:
    assert app.conf.beat_schedule["approvals-republish"]["task"] == "approvals.tasks.elicitations_republish"
    call = CallInThread(
        server.mcp_url(), cast.token(server), "legacy", "request_refund", {"order_id": "R-1", "amount": "1"}, linger=1.0
    ).start()
    row_id = elicitation_id_of(call.next_question().url)
    # Ended in the database, but its event was lost: exactly the state a crash after commit leaves.
    Elicitation.objects.filter(pk=row_id).update(
        status=Elicitation.Status.DECLINED,
        outcome={"decision": "denied", "note": "lost event"},
        completed_at=timezone.now() - timedelta(seconds=30),
    )

    assert elicitations_republish() >= 1

    call.join(timeout=5)  # well before the server's 15 s in-call wait would have re-read the row
    assert call.text == "Refund for order R-1 denied: lost event."
    assert call.completed == [row_id]
    assert Elicitation.objects.get(pk=row_id).published_at is not None
