"""A URL-mode step's end is told to the 2025-11-25 sessions shown it from the process's broadcast
listener (`approvals.completion_wait.on_resolved`), so a session whose client does not read its
stream must not hold that listener up, nor the calls waiting on the step: its send is bounded by
`mcpsite.broadcast.NOTIFY_SECONDS`, and the others are told and the waiters woken all the same.

The sessions are stand-ins for the SDK's `ServerSession` (its one send method): a real client
stops holding the send up only once the SDK's stream buffer and the socket's are full, which no
test here can do in bounded time. Real sessions are told in `tests/approvals` (the SDK's client
receiving ``notifications/elicitation/complete``)."""

from __future__ import annotations

import anyio
import pytest

from approvals import completion_wait
from mcpsite import broadcast


class Reading:
    """A session whose client reads its stream."""

    def __init__(self) -> None:
        self.told: list[str] = []

    async def send_elicit_complete(self, elicitation_id: str) -> None:
        self.told.append(elicitation_id)


class NotReading(Reading):
    """A session whose client stopped reading: the send waits for room that never comes."""

    async def send_elicit_complete(self, elicitation_id: str) -> None:
        await anyio.sleep_forever()


def test_a_stuck_session_is_given_up_on_and_the_rest_are_told_and_woken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(broadcast, "NOTIFY_SECONDS", 0.3)
    stuck, other = NotReading(), Reading()
    completion_wait.notify_session_on_end("el-stuck", stuck)
    completion_wait.notify_session_on_end("el-stuck", other)

    async def resolve() -> tuple[bool, float]:
        async with completion_wait.watching("el-stuck") as ended:
            started = anyio.current_time()
            with anyio.fail_after(5):  # unbounded, the send would wait forever: fail instead of hanging
                await completion_wait.on_resolved({"type": "approvals.resolved", "elicitation": "el-stuck"})
            return ended.is_set(), anyio.current_time() - started

    woken, took = anyio.run(resolve)
    assert other.told == ["el-stuck"]
    assert woken  # the call waiting on the step is woken
    assert 0.3 <= took < 1.0  # the stuck session bounded, not waited for
