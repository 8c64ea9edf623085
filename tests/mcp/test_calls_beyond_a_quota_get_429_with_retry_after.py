"""MCP requests are rate limited per tenant and per person at it (``MCPSITE_CALL_QUOTA_PER_TENANT``,
``MCPSITE_CALL_QUOTA_PER_PERSON`` per ``MCPSITE_CALL_QUOTA_WINDOW_SECONDS``). Past either quota a
request of either generation gets 429 with ``Retry-After`` and a JSON-RPC error (-32029) whose
``data`` carries the same numbers. A person's quota counts the user across their OAuth clients and
holds nobody else back; a tenant's holds no other tenant back. Counted in Redis when deployed
(shared by every process: the calls here alternate between two processes) and in process on the
embedded default (no ``MCPSITE_REDIS_URL``)."""

from __future__ import annotations

import itertools
import json
import time
import uuid
from collections.abc import Callable, Iterator

import httpx2
import pytest
from oauth2_provider.models import Application

from mcpsite.models import Tenant
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import modern_post, wait_until_served

WINDOW = 3600
PER_PERSON = 3
PER_TENANT = 4


def fresh_window() -> None:
    """Start a scenario well inside a quota window, so its calls cannot straddle two."""
    left = WINDOW - time.time() % WINDOW
    if left < 60:
        time.sleep(left + 0.1)


@pytest.fixture(scope="module", params=["redis", "in-process"])
def processes(request: pytest.FixtureRequest, server_factory: Callable[..., LiveServer]) -> Iterator[list[LiveServer]]:
    """The processes a scenario's calls alternate between: two sharing Redis, or the embedded one."""
    env = {"MCPSITE_CALL_QUOTA_WINDOW_SECONDS": str(WINDOW)}
    if request.param == "redis":
        first = server_factory(**env)
        servers = [first, server_factory(**env, MCPSITE_SITE_ROOT=first.url)]
    else:
        servers = [server_factory(**env, MCPSITE_REDIS_URL="")]
    yield servers
    for server in servers:
        server.stop()


def tenant_with(
    processes: list[LiveServer], cast: Cast, members: list[str], *, per_tenant: int = 0, per_person: int = 0
) -> str:
    """A new tenant with its own quotas (0: none), served by every process; its slug. Each process
    is asked once by `staff` (a member too) until it serves the tenant: that one call a process
    counts against the tenant's quota (an unserved tenant's refusals do not), not the cast's."""
    slug = f"quota-{uuid.uuid4().hex[:8]}"
    tenant = Tenant.objects.create(
        slug=slug, name=slug, toolsets=["demo"], call_quota=per_tenant, call_quota_per_person=per_person
    )
    tenant.members.add(*(cast.user(name).pk for name in [*members, "staff"]))
    token = cast.token(processes[0], "staff", slug)  # every process serves the first one's site root
    for server in processes:
        wait_until_served(server.mcp_url(slug), token)
    return slug


def client_token(server: LiveServer, cast: Cast, name: str, slug: str) -> str:
    """A token for `name` through an OAuth client of its own (an assistant, a task runner, ...)."""
    client = Application.objects.create(
        name=f"client {uuid.uuid4().hex[:8]}",
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_CLIENT_CREDENTIALS,
    )
    return cast.token(server, name, slug, application=client)


def initialize(url: str, token: str) -> httpx2.Response:
    """A raw 2025-11-25 ``initialize``."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {token}",
    }
    return httpx2.post(url, content=json.dumps(body), headers=headers, timeout=10)


def assert_refused(response: httpx2.Response, scope: str, limit: int) -> None:
    assert response.status_code == 429, response.text
    retry_after = int(response.headers["retry-after"])
    assert 0 < retry_after <= WINDOW
    who = "this user at this tenant" if scope == "person" else "this tenant"
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32029,
            "message": f"Too many requests for {who}: at most {limit} per {WINDOW} s. Retry after {retry_after} s.",
            "data": {
                "reason": "rate_limited",
                "scope": scope,
                "limit": limit,
                "windowSeconds": WINDOW,
                "retryAfter": retry_after,
            },
        },
    }


def spend(processes: list[LiveServer], slug: str, tokens: list[str]) -> list[int]:
    """One 2026-07-28 request per token, alternating between the processes; their statuses."""
    turns = zip(itertools.cycle(processes), tokens, strict=False)
    return [modern_post(server.mcp_url(slug), "tools/list", token=token).status_code for server, token in turns]


def test_a_person_past_their_quota_gets_429_in_both_generations_and_another_person_is_served(
    processes: list[LiveServer], cast: Cast
) -> None:
    fresh_window()
    slug = tenant_with(processes, cast, ["alice", "bob"], per_person=PER_PERSON)
    first, last = processes[0], processes[-1]
    alice = [client_token(first, cast, "alice", slug) for _ in range(PER_PERSON)]  # one client a call
    bob = cast.token(first, "bob", slug)
    assert spend(processes, slug, alice) == [200] * PER_PERSON

    fresh_client = client_token(first, cast, "alice", slug)  # a new OAuth client is not a new budget
    assert_refused(modern_post(last.mcp_url(slug), "tools/list", token=fresh_client), "person", PER_PERSON)
    assert_refused(initialize(first.mcp_url(slug), fresh_client), "person", PER_PERSON)
    assert modern_post(last.mcp_url(slug), "tools/list", token=bob).status_code == 200
    assert initialize(first.mcp_url(slug), bob).status_code == 200


def test_a_tenant_past_its_quota_gets_429_in_both_generations_and_another_tenant_is_served(
    processes: list[LiveServer], cast: Cast
) -> None:
    fresh_window()
    busy = tenant_with(processes, cast, ["alice", "bob"], per_tenant=PER_TENANT)
    calm = tenant_with(processes, cast, ["alice"], per_tenant=PER_TENANT)
    first, last = processes[0], processes[-1]
    alice, bob = cast.token(first, "alice", busy), cast.token(first, "bob", busy)
    left = PER_TENANT - len(processes)  # `tenant_with` spent one call a process
    assert spend(processes, busy, ([alice, bob] * left)[:left]) == [200] * left

    assert_refused(modern_post(last.mcp_url(busy), "tools/list", token=bob), "tenant", PER_TENANT)
    assert_refused(initialize(first.mcp_url(busy), alice), "tenant", PER_TENANT)
    elsewhere = cast.token(first, "alice", calm)
    assert modern_post(last.mcp_url(calm), "tools/list", token=elsewhere).status_code == 200
    assert initialize(first.mcp_url(calm), elsewhere).status_code == 200


def test_an_anonymous_caller_of_a_public_tenant_is_counted_by_address(
    server_factory: Callable[..., LiveServer],
) -> None:
    # The test stands in for a trusted proxy on loopback, so X-Forwarded-For names the client.
    server = server_factory(
        MCPSITE_CALL_QUOTA_WINDOW_SECONDS=str(WINDOW),
        MCPSITE_CALL_QUOTA_PER_PERSON=str(PER_PERSON),
        MCPSITE_CALL_QUOTA_PER_TENANT="0",
        MCPSITE_TRUSTED_PROXIES="127.0.0.1",
    )
    try:
        url = server.mcp_url("open")
        fresh_window()

        def from_address(address: str) -> httpx2.Response:
            return modern_post(url, "tools/list", params=None, token=None, **{"X-Forwarded-For": address})

        for host in range(1, PER_PERSON + 1):  # any address of one IPv6 /64 is the same caller
            assert from_address(f"2001:db8:9:1::{host}").status_code == 200
        assert_refused(from_address("2001:db8:9:1::99"), "person", PER_PERSON)
        assert from_address("2001:db8:9:2::1").status_code == 200
    finally:
        server.stop()
