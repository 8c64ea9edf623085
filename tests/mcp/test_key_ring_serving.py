"""The database key ring as the serving processes see it."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import anyio
import pytest

from mcpsite.keyring import rotation
from mcpsite.models import RequestStateKey
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import accept, connect, never, text
from tests.mcp.test_request_state import first_round, rejected, retry


def promote_when_rolled_out(key: RequestStateKey, timeout: float = 20.0) -> None:
    """Promote through the guard, as staff would: retry until every live process has loaded the key."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            rotation.keyring_promote(key=key)
            return
        except rotation.KeyRingRefused:
            assert time.monotonic() < deadline, "the key never rolled out to every live process"
            time.sleep(0.2)


@pytest.fixture
def no_minting_key(live: LiveServer, cast: Cast) -> Iterator[RequestStateKey]:
    minting = RequestStateKey.objects.get(phase=RequestStateKey.Phase.MINTING)
    live.mark_log()
    minting.phase = RequestStateKey.Phase.VERIFYING
    minting.save(update_fields=["phase"])
    live.wait_for_log("minting none")
    yield minting
    live.mark_log()
    rotation.keyring_promote(key=minting, check_rollout=False)  # restoring the suite's ring
    live.wait_for_log(f"minting {minting.kid}")


def test_without_a_minting_key_asking_fails_cleanly_and_serving_goes_on(
    live: LiveServer, cast: Cast, no_minting_key: RequestStateKey
) -> None:
    token = cast.token(live)
    live.mark_log()
    error = rejected(lambda: first_round(live.mcp_url(), token))
    assert error == {"code": -32603, "message": "Internal error"}
    log = live.wait_for_log("the requestState key ring has no minting key")
    assert "requestState codec raised during seal" in log

    async def no_question_needed() -> str:
        async with connect(live.mcp_url(), token, answer=never) as c:
            return text(await c.call_tool("book_table", {"date": "2025-12-24", "party_size": 2}))

    assert re.fullmatch(r"Booked a table for 2 on 2025-12-24 \(booking \d+\)\.", anyio.run(no_question_needed))


def test_rotation_keeps_state_in_flight_valid(live: LiveServer, cast: Cast) -> None:
    token = cast.token(live)
    state = anyio.run(first_round, live.mcp_url(), token)
    old = RequestStateKey.objects.get(phase=RequestStateKey.Phase.MINTING)
    live.mark_log()
    new = rotation.keyring_add_key()
    live.wait_for_log("key ring loaded")
    live.mark_log()
    promote_when_rolled_out(new)
    live.wait_for_log(f"minting {new.kid}")
    try:
        # Minted under the old key, answered after the new one took over: still valid.
        assert text(anyio.run(retry, live.mcp_url(), token, state)) == "Provisioned 'orders' in eu-west-1."

        # New rounds are sealed by the new key, and complete too.
        async def fresh_call() -> str:
            async with connect(live.mcp_url(), token, answer=accept(region="ap-south-1")) as c:
                return text(await c.call_tool("provision", {"name": "orders"}))

        assert anyio.run(fresh_call) == "Provisioned 'orders' in ap-south-1."
        # Once the old key is retired, state it sealed no longer verifies.
        live.mark_log()
        rotation.keyring_retire(key=old, now_override=True)  # the guarded path is tested in tests/admin
        live.wait_for_log("key ring loaded")
        error = rejected(lambda: retry(live.mcp_url(), token, state))
        assert error == {"code": -32602, "message": "Invalid or expired requestState"}
        live.wait_for_log(f"unknown or retired key {old.kid}")
    finally:
        live.mark_log()
        RequestStateKey.objects.filter(pk=new.pk).delete()
        RequestStateKey.objects.filter(pk=old.pk).update(phase=RequestStateKey.Phase.VERIFYING, retired_at=None)
        rotation.keyring_promote(key=old, check_rollout=False)
        live.wait_for_log(f"minting {old.kid}")
