"""A pending elicitation past its expiry is expired by the beat task, and the client waiting on
it gets the cancelled (expired) outcome in both generations."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.db.models import F
from django.utils.module_loading import import_string

from approvals.models import Elicitation
from approvals.tasks import elicitations_expire
from config.celery import app
from tests.approvals.conftest import CallInThread, elicitation_id_of
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import MODES


def test_beat_runs_the_expiry_task_on_a_schedule() -> None:
    entry = app.conf.beat_schedule["approvals-expire"]
    assert import_string(entry["task"]) is elicitations_expire
    assert entry["schedule"] == settings.APPROVALS["EXPIRE_EVERY_SECONDS"] > 0


@pytest.mark.parametrize("mode", MODES)
def test_waiting_client_gets_the_expired_outcome(server: LiveServer, cast: Cast, mode: str) -> None:
    order_id = f"E-{mode}"
    call = CallInThread(
        server.mcp_url(), cast.token(server), mode, "request_refund", {"order_id": order_id, "amount": "3"}, linger=1.0
    ).start()
    row_id = elicitation_id_of(call.next_question().url)
    Elicitation.objects.filter(pk=row_id).update(expires_at=F("created_at") + timedelta(milliseconds=1))

    assert elicitations_expire() >= 1

    call.join()
    assert call.text == f"Refund for order {order_id} not decided in time: the request expired."
    assert Elicitation.objects.get(pk=row_id).status == Elicitation.Status.EXPIRED
    if mode == "legacy":
        assert call.completed == [row_id]
