"""A 2026-07-28 round that shows a URL-mode step keeps its row in our one layer of the state, under
the SDK wire key of the resolver that asked it (the key the SDK batches its placeholder under), and
the client sees the step's own message: the row is not found again by text."""

from __future__ import annotations

import json

from mcpsite.keyring import ring
from tests.approvals.conftest import elicitation_id_of
from tests.approvals.raw import modern_call
from tests.conftest import Cast, LiveServer
from tools_app.roundstate import RoundState, unwrap_round


def test_the_row_is_kept_under_the_asking_resolvers_sdk_key(server: LiveServer, cast: Cast, booking: int) -> None:
    first = modern_call(server.mcp_url(), cast.token(server), "pay_deposit", {"booking_id": booking})["result"]
    ((name, request),) = first["inputRequests"].items()
    row_id = elicitation_id_of(request["params"]["url"])
    assert request["params"]["message"] == (
        f"Please pay 20.00 EUR for the deposit for booking {booking} (4 on 2026-03-14)."
    )
    assert row_id not in request["params"]["message"]

    ring.reload()
    unwrapped = unwrap_round(json.loads(ring.unseal(first["requestState"]))["s"])
    assert unwrapped is not None
    assert unwrapped[1] == RoundState(v=2, names=[name], url={"demo.tools.payments:deposit": row_id})
