"""Single-use claims in Redis (the deployed configuration) go over one pipelined connection per
process, however many retries claim at once, and still fail closed: each digest is claimed once,
and a Redis that cannot answer refuses the claim instead of letting it through.

Uses the suite's real Redis (``MCPSITE_REDIS_URL``, started by scripts/test); nothing is mocked."""

from __future__ import annotations

import hashlib
import os
import socket
import time

import anyio
import pytest
from redis import Redis

from mcpsite.keyring import ClaimUnavailable, RefuseReplayedState

# scripts/test always starts Redis; without it these tests fail (KeyError) rather than skip.
REDIS_URL = os.environ["MCPSITE_REDIS_URL"]
pytestmark = pytest.mark.anyio


def fresh_digest(n: int) -> str:
    return hashlib.sha256(f"{time.time_ns()}-{n}".encode()).hexdigest()


def connected_clients() -> set[int]:
    """The ids of the connections open now (less this counting one). Ids, not a count: a connection
    an earlier test left behind may close meanwhile without hiding a new one."""
    with Redis.from_url(REDIS_URL) as redis:
        me = redis.client_id()
        return {int(c["id"]) for c in redis.client_list()} - {me}


async def claim_all(guard: RefuseReplayedState, digests: list[str]) -> list[bool]:
    results: dict[int, bool] = {}
    exp = time.time() + 600

    async def claim(i: int, digest: str) -> None:
        results[i] = await guard._claim(digest, exp)

    async with anyio.create_task_group() as tg:
        for i, digest in enumerate(digests):
            tg.start_soon(claim, i, digest)
    return [results[i] for i in range(len(digests))]


async def test_concurrent_claims_share_one_redis_connection() -> None:
    guard = RefuseReplayedState(redis_url=REDIS_URL)
    before = connected_clients()
    claimed = await claim_all(guard, [fresh_digest(i) for i in range(32)])
    assert claimed == [True] * 32
    assert len(connected_clients() - before) == 1


async def test_a_digest_claimed_by_many_at_once_is_claimed_once() -> None:
    guard = RefuseReplayedState(redis_url=REDIS_URL)
    digest = fresh_digest(0)
    claimed = await claim_all(guard, [digest] * 16)
    assert sorted(claimed) == [False] * 15 + [True]
    assert await claim_all(guard, [digest]) == [False]


async def test_a_lost_redis_connection_is_reopened_for_the_next_claim() -> None:
    guard = RefuseReplayedState(redis_url=REDIS_URL)
    assert await claim_all(guard, [fresh_digest(0)]) == [True]
    with Redis.from_url(REDIS_URL) as redis:
        killed = redis.client_kill_filter(_type="normal", skipme=True)
    assert killed >= 1
    await anyio.sleep(0.05)
    digest = fresh_digest(1)
    assert await claim_all(guard, [digest, digest]) == [True, False]


async def test_an_unreachable_redis_refuses_the_claim() -> None:
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    guard = RefuseReplayedState(redis_url=f"redis://127.0.0.1:{port}/0")
    with pytest.raises(ClaimUnavailable, match=r"^cannot reach Redis for the claim: "):
        await guard._claim(fresh_digest(0), time.time() + 600)


async def test_a_refused_redis_handshake_refuses_the_claim() -> None:
    guard = RefuseReplayedState(redis_url=REDIS_URL.replace("redis://", "redis://:not-the-password@", 1))
    with pytest.raises(ClaimUnavailable, match=r"^cannot reach Redis for the claim: Redis answered b'-ERR AUTH"):
        await guard._claim(fresh_digest(0), time.time() + 600)
