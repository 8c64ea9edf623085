"""A role changed (``members.changed``) makes every process forget its holders' cached tokens, and
only theirs; a change that arrives while a holder's token is being read makes it read again, so the
old role is not cached after the change."""

from __future__ import annotations

import time

import pytest

from mcpsite.auth import TokenCache, VerifiedToken


def verified(subject: str, tools: frozenset[str]) -> VerifiedToken:
    return VerifiedToken(
        client_id="c",
        subject=subject,
        scopes=("mcp",),
        resources=("http://x/t/demo/mcp",),
        expires_at=int(time.time()) + 3600,
        cached_until=time.monotonic() + 30,
        tenant_ids=frozenset({7}),
        roles={7: tools},
    )


def test_only_the_holders_entries_are_forgotten() -> None:
    cache = TokenCache()
    cache.put("carol-1", verified("1", frozenset({"book_table"})))
    cache.put("carol-2", verified("1", frozenset({"book_table"})))
    cache.put("dave", verified("2", frozenset()))

    cache.evict_subjects({"1"})

    assert cache.get("carol-1") is None and cache.get("carol-2") is None
    assert cache.get("dave") is not None


@pytest.mark.anyio
async def test_a_role_change_during_a_read_makes_it_read_again() -> None:
    cache = TokenCache()
    answers = [verified("1", frozenset({"book_table"})), verified("1", frozenset({"book_table", "provision"}))]

    async def load(checksum: str) -> VerifiedToken | None:
        answer = answers.pop(0)
        if answers:  # the first read
            cache.evict_subjects({"1"})  # the broadcast arrives while the old role is being read
        return answer

    entry = await cache.lookup("carol", load)
    assert entry is not None and entry.roles[7] == {"book_table", "provision"}
    assert answers == []
