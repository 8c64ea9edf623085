"""A process builds a tenant on its first request (once, however many arrive together), keeps at
most `MCPSITE_TENANTS_MAX_LOADED`, lets one go after `MCPSITE_TENANT_IDLE_SECONDS` unused, never
lets go of one with a live session or a held round, and a change to one tenant rebuilds only it.

Every build logs ``tenant <slug> built`` and every release ``tenant <slug> let go``: the tests
count those lines in the server's own log."""

from __future__ import annotations

import datetime
import json
import re
import time
import uuid
from collections.abc import Callable, Iterator

import anyio
import httpx2
import pytest

from approvals.models import Elicitation
from demo.models import Booking
from mcpsite.models import Tenant
from tests.approvals.conftest import CallInThread, deliver, elicitation_id_of, payment_event
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import connect, modern_post, text

SLUGS = [f"lazy-{n}" for n in range(5)]


def built(server: LiveServer, slug: str) -> int:
    return len(re.findall(rf"tenant {re.escape(slug)} built\b", server.log()))


def let_go(server: LiveServer, slug: str) -> int:
    return len(re.findall(rf"tenant {re.escape(slug)} let go\b", server.log()))


def tools_of(server: LiveServer, slug: str) -> set[str]:
    response = modern_post(server.mcp_url(slug), "tools/list")
    assert response.status_code == 200, response.text[:300]
    return {tool["name"] for tool in response.json()["result"]["tools"]}


def wait_for(predicate: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"{what}: not within {timeout}s"
        time.sleep(0.05)


@pytest.fixture
def paying(cast: Cast) -> tuple[str, int]:
    """A private tenant (member alice) serving `payments`, and a booking there to pay. Kept after
    the test (its payment rows protect it) under a slug of its own."""
    slug = f"lazy-pay-{uuid.uuid4().hex[:8]}"
    tenant = Tenant.objects.create(slug=slug, name="Lazy pay", toolsets=["payments"])
    tenant.members.add(cast.user("alice").pk)
    booking = Booking.objects.create(tenant=tenant, date=datetime.date(2026, 3, 14), party_size=4)
    return slug, booking.pk


@pytest.fixture
def lazy_tenants(cast: Cast) -> Iterator[list[str]]:
    """Public tenants made for these tests, each serving the demo toolset."""
    Tenant.objects.filter(slug__in=SLUGS).delete()
    Tenant.objects.bulk_create(Tenant(slug=s, name=s, public=True, toolsets=["demo"]) for s in SLUGS)
    yield SLUGS
    Tenant.objects.filter(slug__in=SLUGS).delete()


def test_start_up_builds_no_tenant_and_fifty_concurrent_first_calls_build_one_once(
    server_factory: Callable[..., LiveServer], lazy_tenants: list[str]
) -> None:
    server = server_factory()
    try:
        assert " built, served at " not in server.log()  # /healthz answered: nothing was built
        url = server.mcp_url(lazy_tenants[0])
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/list",
                "params": {
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                    }
                },
            }
        ).encode()

        async def fifty_first_calls() -> list[httpx2.Response]:
            responses: list[httpx2.Response] = []
            async with httpx2.AsyncClient(timeout=30, limits=httpx2.Limits(max_connections=50)) as http:

                async def one() -> None:
                    headers = {
                        "Content-Type": "application/json",
                        "Accept": "application/json, text/event-stream",
                        "MCP-Protocol-Version": "2026-07-28",
                        "Mcp-Method": "tools/list",
                    }
                    responses.append(await http.post(url, content=body, headers=headers))

                async with anyio.create_task_group() as tg:
                    for _ in range(50):
                        tg.start_soon(one)
            return responses

        responses = anyio.run(fifty_first_calls)

        assert [r.status_code for r in responses] == [200] * 50
        assert all("book_table" in r.text for r in responses)
        assert built(server, lazy_tenants[0]) == 1
        assert built(server, "demo") == 0  # only the tenant called was built
    finally:
        server.stop()


def test_an_idle_tenant_is_let_go_and_built_again_on_its_next_call(
    server_factory: Callable[..., LiveServer], lazy_tenants: list[str]
) -> None:
    server = server_factory(MCPSITE_TENANT_IDLE_SECONDS="1")
    try:
        slug = lazy_tenants[0]
        assert "book_table" in tools_of(server, slug)
        wait_for(lambda: let_go(server, slug) == 1, "the idle tenant let go")
        assert "idle for 1 s" in server.log()

        assert "book_table" in tools_of(server, slug)
        assert built(server, slug) == 2
    finally:
        server.stop()


def test_no_more_than_the_cap_stay_loaded_least_recently_used_first(
    server_factory: Callable[..., LiveServer], lazy_tenants: list[str]
) -> None:
    server = server_factory(MCPSITE_TENANTS_MAX_LOADED="2")
    try:
        first, second, third = lazy_tenants[:3]
        tools_of(server, first)
        tools_of(server, second)
        tools_of(server, first)  # now `second` is the least recently used
        tools_of(server, third)

        wait_for(lambda: let_go(server, second) == 1, "the least recently used tenant let go")
        assert let_go(server, first) == 0
        assert "over the cap of 2 loaded tenants" in server.log()
        # The two loaded ones answer without a build; the one let go is built again.
        tools_of(server, first)
        tools_of(server, third)
        assert (built(server, first), built(server, third)) == (1, 1)
        tools_of(server, second)
        assert built(server, second) == 2
    finally:
        server.stop()


def test_a_tenant_with_a_live_session_or_a_held_round_is_not_let_go(
    server_factory: Callable[..., LiveServer], cast: Cast, lazy_tenants: list[str], paying: tuple[str, int]
) -> None:
    """Cap 1 and 1 s idle: `lazy-pay` holds a 2026-07-28 round waiting on a payment and `open` a
    2025-11-25 session while other tenants come and go; both go on, and `lazy-pay` and `open` are
    let go once they are done."""
    held_slug, booking = paying
    server = server_factory(
        MCPSITE_TENANTS_MAX_LOADED="1", MCPSITE_TENANT_IDLE_SECONDS="1", MCPSITE_APPROVALS_HOLD_SECONDS="20"
    )
    try:
        token = cast.token(server, "alice", held_slug)
        arguments = {"booking_id": booking}
        held = CallInThread(server.mcp_url(held_slug), token, "2026-07-28", "pay_deposit", arguments).start()
        row_id = elicitation_id_of(held.next_question().url)
        # The client's retry is on its way (a loaded machine may take a while to send it), then
        # held open on the server; until it arrives the tenant is idle and may be let go.
        wait_for(lambda: held.retries_sent >= 1, "the retry sent")
        time.sleep(0.5)

        async def session_outlives_the_churn() -> tuple[str, str]:
            async with connect(server.mcp_url("open"), mode="legacy") as client:
                before = text(await client.call_tool("book_table", {"date": "2025-12-24", "party_size": 2}))
                for slug in lazy_tenants:  # each pushes the cap; idle ones go
                    await anyio.to_thread.run_sync(tools_of, server, slug)
                await anyio.sleep(2.5)  # more than the idle setting, with the session open
                after = text(await client.call_tool("book_table", {"date": "2025-12-23", "party_size": 3}))
                return before, after

        before, after = anyio.run(session_outlives_the_churn)

        assert before.startswith("Booked a table for 2 on 2025-12-24")
        assert after.startswith("Booked a table for 3 on 2025-12-23")
        assert let_go(server, "open") == 0
        assert let_go(server, held_slug) == 0
        assert sum(let_go(server, slug) for slug in lazy_tenants) >= len(lazy_tenants) - 1
        # Its session over, `open` goes once idle. Until then two tenants are loaded against a cap
        # of 1, and the moment the held round ends `lazy-pay` is the one over the cap: let go
        # before the client's request that follows the round, and built again by it.
        wait_for(lambda: let_go(server, "open") == 1, "open let go once its session is over")

        assert deliver(server, payment_event(Elicitation.objects.get(pk=row_id))).json()["outcome"] == "completed"
        assert held.join().text.startswith(f"Booking {booking} confirmed")
        assert built(server, held_slug) == 1  # the held round was answered by the server it started on

        # Done with both: now they are let go like any idle tenant.
        wait_for(lambda: let_go(server, "open") == 1 and let_go(server, held_slug) == 1, "both let go once done")
    finally:
        server.stop()


def test_one_tenants_change_rebuilds_that_tenant_only(
    server_factory: Callable[..., LiveServer], lazy_tenants: list[str]
) -> None:
    server = server_factory()
    try:
        changed, untouched = lazy_tenants[:2]
        assert "book_table" in tools_of(server, changed)
        assert "book_table" in tools_of(server, untouched)

        tenant = Tenant.objects.get(slug=changed)
        tenant.toolsets = []
        tenant.save()
        wait_for(lambda: tools_of(server, changed) == set(), "the change served")

        assert built(server, changed) == 2
        assert built(server, untouched) == 1
        assert "book_table" in tools_of(server, untouched)
        assert built(server, untouched) == 1
        assert f"tenant {untouched} changed" not in server.log()
    finally:
        server.stop()
