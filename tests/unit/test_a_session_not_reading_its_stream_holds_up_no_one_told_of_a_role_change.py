"""A role change tells the member's 2025-11-25 sessions their lists changed from the process's
broadcast listener (`CappedSessionManager.tell_lists_changed`), so a session whose client does not
read its stream must not hold that listener up: each session is told at the same time, each within
`mcpsite.broadcast.NOTIFY_SECONDS`, and a session that cannot take the notification is skipped.

The sessions are stand-ins for the SDK's `ServerSession` (its two send methods): a real client
stops holding the send up only once the SDK's stream buffer and the socket's are full, which no
test here can do in bounded time. The real sessions are told in
`tests/oauth/test_a_role_change_takes_effect_within_the_token_cache_bound.py`."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from mcp_server.sessions import CappedSessionManager
from mcpsite import broadcast


class Reading:
    """A session whose client reads its stream: each notification is taken at once."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def send_tool_list_changed(self) -> None:
        self.sent.append("tools")

    async def send_resource_list_changed(self) -> None:
        self.sent.append("resources")


class NotReading(Reading):
    """A session whose client stopped reading: the send waits for room that never comes."""

    async def send_tool_list_changed(self) -> None:
        await anyio.sleep_forever()


class Gone(Reading):
    """A session whose client left: its stream is closed."""

    async def send_tool_list_changed(self) -> None:
        raise anyio.ClosedResourceError


def test_a_stuck_or_gone_session_is_skipped_and_the_others_are_told_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(broadcast, "NOTIFY_SECONDS", 0.3)
    manager = CappedSessionManager.adopt(StreamableHTTPSessionManager(app=Server("t")), max_sessions_per_principal=5)
    erin, frank = ("https://issuer.example", "1"), ("https://issuer.example", "2")
    stuck, gone, hers, his = NotReading(), Gone(), Reading(), Reading()
    reach: dict[str, Any] = {"s1": stuck, "s2": gone, "s3": hers, "s4": his}
    manager._person_of.update({"s1": erin, "s2": erin, "s3": erin, "s4": frank})
    manager._reach.update(reach)

    async def tell() -> tuple[int, float]:
        started = anyio.current_time()
        with anyio.fail_after(5):  # unbounded, the stuck send would wait forever: fail instead of hanging
            told = await manager.tell_lists_changed({erin})
        return told, anyio.current_time() - started

    told, took = anyio.run(tell)
    assert told == 1  # hers; the stuck and the gone session were not told
    assert hers.sent == ["tools", "resources"]
    assert his.sent == []  # not Erin's
    assert 0.3 <= took < 1.0  # the stuck one bounded, not waited for
