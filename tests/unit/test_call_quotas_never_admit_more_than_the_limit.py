"""The call quotas' counters admit exactly a budget and no more: in process (exact), and in Redis,
where each process takes shares of a budget (a hundredth of its limit) and several processes
together still admit no more than the limit. A budget refused by its person's quota costs its
tenant nothing, and the next window starts afresh. Uses the suite's real Redis
(``MCPSITE_REDIS_URL``, started by scripts/test); nothing is mocked."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import os
import random

import pytest

from mcp_server.quotas import CallQuotas
from tools_app.tenant import TenantInfo

WINDOW = 60
NOW = 1_800_000_000.0  # a window's start: the scenarios never straddle two


def tenant(*, call_quota: int | None = None, call_quota_per_person: int | None = None) -> TenantInfo:
    # A tenant id no other test (nor another run against the same Redis) counts under.
    return TenantInfo(
        id=random.randrange(10**9, 10**12),
        slug="quota",
        name="Quota",
        public=False,
        toolsets=(),
        version="v1",
        call_quota=call_quota,
        call_quota_per_person=call_quota_per_person,
    )


def processes(counter: str, count: int) -> list[CallQuotas]:
    redis_url = os.environ["MCPSITE_REDIS_URL"] if counter == "redis" else ""
    return [CallQuotas(window_seconds=WINDOW, per_tenant=0, per_person=0, redis_url=redis_url) for _ in range(count)]


@pytest.mark.parametrize(("counter", "count"), [("in-process", 1), ("redis", 3)])
def test_a_person_is_admitted_exactly_their_limit_across_processes(counter: str, count: int) -> None:
    at = tenant(call_quota_per_person=250)  # shares of 2 calls in Redis

    async def scenario() -> list[str | None]:
        spenders = itertools.cycle(processes(counter, count))
        verdicts = [await next(spenders).spend(tenant=at, person="u:alice", now=NOW + 1) for _ in range(300)]
        return [None if verdict is None else verdict.scope for verdict in verdicts]

    verdicts = asyncio.run(scenario())
    # Every share taken is used here, so exactly the limit; in Redis a process may be refused
    # while another still holds the last calls of its share, hence no order is asserted but the end.
    assert verdicts.count(None) == 250
    assert set(verdicts[-40:]) == {"person"}


@pytest.mark.parametrize("counter", ["in-process", "redis"])
def test_a_person_refused_by_their_quota_spends_nothing_of_the_tenants(counter: str) -> None:
    at = tenant(call_quota=5, call_quota_per_person=2)

    async def scenario() -> list[tuple[str, str | None]]:
        (quotas,) = processes(counter, 1)
        calls = ["u:alice"] * 4 + ["u:bob"] * 2 + ["u:carol"] * 2
        answers = [(who, await quotas.spend(tenant=at, person=who, now=NOW + 1)) for who in calls]
        return [(who, None if answer is None else answer.scope) for who, answer in answers]

    assert asyncio.run(scenario()) == [
        ("u:alice", None),
        ("u:alice", None),
        ("u:alice", "person"),
        ("u:alice", "person"),
        ("u:bob", None),
        ("u:bob", None),
        ("u:carol", None),  # the tenant's fifth call: alice's refusals did not count
        ("u:carol", "tenant"),
    ]


@pytest.mark.parametrize("counter", ["in-process", "redis"])
def test_the_next_window_starts_afresh_and_retry_after_says_when(counter: str) -> None:
    at = tenant(call_quota_per_person=1)

    async def scenario() -> tuple[int | None, bool]:
        (quotas,) = processes(counter, 1)
        assert await quotas.spend(tenant=at, person="u:alice", now=NOW + 1) is None
        refused = await quotas.spend(tenant=at, person="u:alice", now=NOW + WINDOW - 12.5)
        admitted_next = await quotas.spend(tenant=at, person="u:alice", now=NOW + WINDOW + 1) is None
        return (None if refused is None else refused.retry_after), admitted_next

    assert asyncio.run(scenario()) == (13, True)


@pytest.mark.parametrize("counter", ["in-process", "redis"])
def test_a_limit_lowered_mid_window_applies_at_once(counter: str) -> None:
    generous = tenant(call_quota_per_person=1000)  # a share of 10 calls in Redis
    lowered = dataclasses.replace(generous, call_quota_per_person=5)  # the tenant changed

    async def scenario() -> list[bool]:
        (quotas,) = processes(counter, 1)
        assert await quotas.spend(tenant=generous, person="u:alice", now=NOW + 1) is None
        return [await quotas.spend(tenant=lowered, person="u:alice", now=NOW + 2) is None for _ in range(10)]

    admitted = asyncio.run(scenario())
    # The share taken under the old limit is not spent under the new one: at most 5 in all.
    assert 1 + admitted.count(True) <= 5
    assert admitted[-1] is False
    if counter == "in-process":
        assert admitted == [True] * 4 + [False] * 6  # exact
