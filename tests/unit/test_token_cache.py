"""The per-process token cache: one load however many requests miss at once, and a revocation
that arrives during a load is not undone by it."""

from __future__ import annotations

import time

import anyio
import pytest

from mcpsite.auth import TokenCache, VerifiedToken


def verified(seconds: float = 30.0) -> VerifiedToken:
    return VerifiedToken(
        client_id="c",
        subject="1",
        scopes=("mcp",),
        resources=("http://x/t/demo/mcp",),
        expires_at=int(time.time()) + 3600,
        cached_until=time.monotonic() + seconds,
    )


@pytest.mark.anyio
async def test_concurrent_misses_load_once() -> None:
    cache, loads = TokenCache(), []

    async def load(checksum: str) -> VerifiedToken | None:
        loads.append(checksum)
        await anyio.sleep(0.05)
        return verified()

    results: list[VerifiedToken | None] = []

    async def ask() -> None:
        results.append(await cache.lookup("abc", load))

    async with anyio.create_task_group() as tg:
        for _ in range(64):
            tg.start_soon(ask)
    assert loads == ["abc"]
    assert len(results) == 64 and all(r is not None and r.client_id == "c" for r in results)


@pytest.mark.anyio
async def test_unknown_token_is_answered_to_every_waiter_from_one_load() -> None:
    cache, loads = TokenCache(), []

    async def load(checksum: str) -> VerifiedToken | None:
        loads.append(checksum)
        await anyio.sleep(0.02)
        return None

    results: list[VerifiedToken | None] = []

    async def ask() -> None:
        results.append(await cache.lookup("nope", load))

    async with anyio.create_task_group() as tg:
        for _ in range(10):
            tg.start_soon(ask)
    assert loads == ["nope"]
    assert results == [None] * 10


@pytest.mark.anyio
async def test_an_eviction_during_the_load_makes_it_read_again() -> None:
    cache, answers = TokenCache(), [verified(), None]  # first read: still there; second: revoked

    async def load(checksum: str) -> VerifiedToken | None:
        answer = answers.pop(0)
        if answer is not None:
            cache.evict(checksum)  # the revocation broadcast arrives while this read is in flight
        return answer

    assert await cache.lookup("abc", load) is None
    assert answers == []
    assert cache.get("abc") is None


@pytest.mark.anyio
async def test_an_expired_entry_is_loaded_again() -> None:
    cache = TokenCache()
    cache.put("abc", verified(seconds=-1))
    fresh = verified()

    async def load(checksum: str) -> VerifiedToken | None:
        return fresh

    assert await cache.lookup("abc", load) is fresh
    assert cache.get("abc") is fresh
