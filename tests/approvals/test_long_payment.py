"""A payment that takes 60 s finishes with the SDK client's default round limit: each retry round
is held open (default 20 s, SSE keep-alive past 15 s) and answers as soon as the webhook lands."""

from __future__ import annotations

import time
from collections.abc import Callable

from mcp.client._input_required import DEFAULT_INPUT_REQUIRED_MAX_ROUNDS

from approvals.models import Elicitation
from tests.approvals.conftest import CallInThread, deliver, elicitation_id_of, payment_event
from tests.conftest import Cast, LiveServer


def test_payment_taking_a_minute_completes_within_the_default_round_limit(
    server_factory: Callable[..., LiveServer], cast: Cast, booking: int
) -> None:
    server = server_factory()  # the default hold (20 s)
    try:
        call = CallInThread(server.mcp_url(), cast.token(server), "2026-07-28", "pay_deposit", {"booking_id": booking})
        row = Elicitation.objects.get(pk=elicitation_id_of(call.start().next_question().url))
        time.sleep(60)
        assert call.result is None and call.error is None  # still waiting, not given up

        paid_at = time.monotonic()
        deliver(server, payment_event(row))
        call.join()

        assert call.text.startswith(f"Booking {booking} confirmed")
        assert time.monotonic() - paid_at < 2  # the held round answered at once, no polling delay
        assert DEFAULT_INPUT_REQUIRED_MAX_ROUNDS == 10  # 1 + ceil(60 / 20) rounds fit
    finally:
        server.stop()
