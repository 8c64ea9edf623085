"""The server is SIGKILLed while a 2026-07-28 client waits on a payment; after a restart the
row is still there, the webhook completes it, and the client's retry runs the tool at once."""

from __future__ import annotations

import time
from collections.abc import Callable

from approvals.models import Elicitation
from tests.approvals.conftest import HOLD_SECONDS, CallInThread, deliver, elicitation_id_of, payment_event
from tests.conftest import Cast, LiveServer


def test_retry_after_a_kill_and_restart_completes_without_asking_again(
    server_factory: Callable[..., LiveServer], cast: Cast, booking: int
) -> None:
    server = server_factory(MCPSITE_APPROVALS_HOLD_SECONDS=HOLD_SECONDS)
    try:
        token = cast.token(server)
        arguments = {"booking_id": booking}
        waiting = CallInThread(server.mcp_url(), token, "2026-07-28", "pay_deposit", arguments).start()
        row_id = elicitation_id_of(waiting.next_question().url)
        time.sleep(0.5)  # the client's retry round is now held open on the server

        server.stop(kill=True)
        waiting.join()
        assert waiting.error is not None  # the held round died with the process
        server.start()

        assert deliver(server, payment_event(Elicitation.objects.get(pk=row_id))).json()["outcome"] == "completed"
        retry = CallInThread(server.mcp_url(), token, "2026-07-28", "pay_deposit", arguments).start().join()

        assert retry.text.startswith(f"Booking {booking} confirmed")
        assert retry.asked.empty()
        assert list(Elicitation.objects.filter(reference=f"deposit-{booking}").values_list("pk", flat=True)) == [row_id]
    finally:
        server.stop()
