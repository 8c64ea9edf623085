"""The replay claim of a retry is sent as soon as its state has verified, and the SDK validates
the request while Redis answers; the tool's handler waits for the answer before anything of the
tool runs (`RefuseReplayedState.guard_handlers`). At c=1 the claim's command used to wait for the
loop's next turn, so the loop sat idle for the whole round trip.

Uses the suite's real Redis (``MCPSITE_REDIS_URL``, started by scripts/test); nothing is mocked."""

from __future__ import annotations

import hashlib
import os
import time

import pytest
from redis import Redis

from mcpsite.keyring import RedisClaims

REDIS_URL = os.environ["MCPSITE_REDIS_URL"]
pytestmark = pytest.mark.anyio


def fresh_key(n: int) -> str:
    return "mcpsite:request-state:" + hashlib.sha256(f"{time.time_ns()}-{n}".encode()).hexdigest()


def exists_within(key: str, seconds: float) -> bool:
    """Whether Redis holds `key` within `seconds`, asked on a socket of its own and waiting with a
    blocking sleep: the event loop of the claim under test does not run meanwhile."""
    deadline = time.monotonic() + seconds
    with Redis.from_url(REDIS_URL) as redis:
        while time.monotonic() < deadline:
            if redis.exists(key):
                return True
            time.sleep(0.005)
    return False


async def test_a_claim_sent_ahead_reaches_redis_before_its_caller_yields() -> None:
    claims = RedisClaims(REDIS_URL)
    assert await claims.claim(fresh_key(0), int(time.time() * 1000) + 60_000)  # connected
    key = fresh_key(1)
    answer = claims.claim_soon(key, int(time.time() * 1000) + 60_000)
    assert exists_within(key, 2.0)  # written already: this task has not yielded since
    assert await answer is True
    assert await claims.claim_soon(key, int(time.time() * 1000) + 60_000) is False


async def test_a_claim_sent_ahead_without_a_connection_connects_first() -> None:
    claims = RedisClaims(REDIS_URL)
    key = fresh_key(2)
    assert await claims.claim_soon(key, int(time.time() * 1000) + 60_000) is True
    assert await claims.claim_soon(key, int(time.time() * 1000) + 60_000) is False
