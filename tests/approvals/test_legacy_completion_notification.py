"""2025-11-25: the webhook lands on another process, yet the process holding the session sends
notifications/elicitation/complete with the right id, whether the call is still waiting or
has already answered -32042 (then a retry of the same call runs without asking again)."""

from __future__ import annotations

from collections.abc import Callable

from mcp_types import URL_ELICITATION_REQUIRED

from approvals.models import Elicitation
from tests.approvals.conftest import CallInThread, deliver, payment_event, wait_until
from tests.conftest import Cast, LiveServer


def test_webhook_on_another_process_notifies_the_waiting_session(
    server: LiveServer, server_factory: Callable[..., LiveServer], cast: Cast, booking: int
) -> None:
    other = server_factory(MCPSITE_SITE_ROOT=server.url)  # a second instance behind the same proxy
    try:
        token = cast.token(server)
        call = CallInThread(server.mcp_url(), token, "legacy", "pay_deposit", {"booking_id": booking}, linger=1.0)
        question = call.start().next_question()
        row = Elicitation.objects.get(pk=question.elicitation_id)

        assert deliver(other, payment_event(row)).json()["outcome"] == "completed"

        call.join()
        assert call.text.startswith(f"Booking {booking} confirmed")
        assert call.completed == [row.pk]
    finally:
        other.stop()


def test_call_that_stopped_waiting_is_notified_and_its_retry_runs_without_asking(
    server_factory: Callable[..., LiveServer], cast: Cast, booking: int
) -> None:
    impatient = server_factory(MCPSITE_APPROVALS_LEGACY_WAIT_SECONDS="0.5")
    other = server_factory(MCPSITE_SITE_ROOT=impatient.url)
    try:
        token = cast.token(impatient)
        call = CallInThread(
            impatient.mcp_url(), token, "legacy", "pay_deposit", {"booking_id": booking}, retry_after_complete=True
        )
        question = call.start().next_question()
        wait_until(lambda: call.first_error is not None)  # -32042: URL elicitation still required
        row = Elicitation.objects.get(pk=question.elicitation_id)

        deliver(other, payment_event(row))

        call.join()
        assert call.completed == [row.pk]
        assert call.text.startswith(f"Booking {booking} confirmed")
        assert call.asked.empty()  # the retry found the row completed and asked nothing
        assert Elicitation.objects.filter(reference=f"deposit-{booking}").count() == 1
    finally:
        impatient.stop()
        other.stop()


def test_session_gone_before_the_webhook_breaks_nothing_and_a_new_call_runs_at_once(
    server_factory: Callable[..., LiveServer], cast: Cast, booking: int
) -> None:
    impatient = server_factory(MCPSITE_APPROVALS_LEGACY_WAIT_SECONDS="0.5")
    try:
        token = cast.token(impatient)
        gone = CallInThread(impatient.mcp_url(), token, "legacy", "pay_deposit", {"booking_id": booking}).start()
        row = Elicitation.objects.get(pk=gone.next_question().elicitation_id)
        gone.join()
        assert gone.mcp_error is not None and gone.mcp_error.code == URL_ELICITATION_REQUIRED
        impatient.mark_log()

        assert deliver(impatient, payment_event(row)).json()["outcome"] == "completed"
        again = CallInThread(impatient.mcp_url(), token, "legacy", "pay_deposit", {"booking_id": booking})
        again.start().join()

        assert again.text.startswith(f"Booking {booking} confirmed")
        assert again.asked.empty()
        impatient.wait_for_log(f"notifications/elicitation/complete for {row.pk}")
        assert "Traceback" not in impatient.log_path.read_text()
    finally:
        impatient.stop()
