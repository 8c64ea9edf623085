"""2025-11-25 sessions are capped per person, so one member cannot fill the tenant's sessions
and lock the others out: beyond ``MCPSITE_MAX_SESSIONS_PER_PRINCIPAL`` an ``initialize`` gets 429
with a message naming the cap and how to free a slot; ending a session (DELETE, or idling out
after ``MCPSITE_SESSION_IDLE_SECONDS``) frees its slot. The cap counts the user across their
OAuth clients (a fresh client registration is not a fresh cap). On a public tenant, where there
is no principal, anonymous sessions are counted per client address (an IPv6 client by its /64)."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager

import anyio
import httpx2
import pytest
from mcp import Client
from oauth2_provider.models import Application

from tests.conftest import Cast, LiveServer
from tests.mcp.clients import connect
from tests.mcp.test_request_state import find_error

CAP = 2


def too_many(who: str, idle: str = "1800") -> str:
    return (
        f"Too many open sessions for {who}: at most {CAP} at a time on this server "
        "(MCPSITE_MAX_SESSIONS_PER_PRINCIPAL). End one you no longer use (DELETE it with its "
        f"Mcp-Session-Id) or let it idle out ({idle} s), then initialize again."
    )


USER = "this user (all their OAuth clients)"


@pytest.fixture(scope="module")
def capped(server_factory: Callable[..., LiveServer]) -> Iterator[LiveServer]:
    # The test stands in for a trusted proxy on loopback, so X-Forwarded-For names the client.
    server = server_factory(MCPSITE_MAX_SESSIONS_PER_PRINCIPAL=str(CAP), MCPSITE_TRUSTED_PROXIES="127.0.0.1")
    yield server
    server.stop()


def initialize(url: str, token: str | None = None, **headers: str) -> httpx2.Response:
    """A raw 2025-11-25 ``initialize``: it opens a session and leaves it alone (no GET stream)."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    return httpx2.post(url, content=json.dumps(body), headers={**base, **auth, **headers}, timeout=10)


def refusal(message: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}


@asynccontextmanager
async def sessions(url: str, token: str, count: int) -> AsyncIterator[list[Client]]:
    """`count` real legacy clients, each holding its session open until the block ends."""
    async with AsyncExitStack() as stack:
        yield [await stack.enter_async_context(connect(url, token, mode="legacy")) for _ in range(count)]


async def opening_error(url: str, token: str) -> tuple[int, str] | None:
    """How a fresh legacy client's opening fails, or None if it opens its session."""
    try:
        async with connect(url, token, mode="legacy") as client:
            await client.list_tools()
    except BaseException as exc:  # the client's task group may wrap it in an ExceptionGroup
        error = find_error(exc)
        if error is None:
            raise
        return error.code, error.message
    return None


def test_a_member_beyond_the_cap_is_refused_while_another_still_opens_one(capped: LiveServer, cast: Cast) -> None:
    alice, bob, url = cast.token(capped, "alice"), cast.token(capped, "bob"), capped.mcp_url()

    async def scenario() -> None:
        async with sessions(url, alice, CAP):
            assert await opening_error(url, alice) == (-32600, too_many(USER))
            refused = await anyio.to_thread.run_sync(lambda: initialize(url, alice))
            assert refused.status_code == 429
            assert refused.json() == refusal(too_many(USER))
            assert await opening_error(url, bob) is None

    capped.mark_log()
    anyio.run(scenario)
    capped.wait_for_log("Refusing a new session for ('")


def client_token(server: LiveServer, cast: Cast, name: str) -> str:
    """A token for `name` through an OAuth client of its own (an assistant, a task runner, ...)."""
    client = Application.objects.create(
        name=f"client {uuid.uuid4().hex[:8]}",
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_CLIENT_CREDENTIALS,
    )
    return cast.token(server, name, application=client)


def test_a_second_oauth_client_of_the_same_user_finds_the_cap_taken(capped: LiveServer, cast: Cast) -> None:
    url = capped.mcp_url()
    assistant, runner = client_token(capped, cast, "alice"), client_token(capped, cast, "alice")
    fresh = client_token(capped, cast, "alice")  # a client registered just to get a fresh cap
    bob = client_token(capped, cast, "bob")

    async def scenario() -> None:
        async with sessions(url, assistant, 1), sessions(url, runner, CAP - 1):
            refused = await anyio.to_thread.run_sync(lambda: initialize(url, fresh))
            assert refused.status_code == 429
            assert refused.json() == refusal(too_many(USER))
            assert await opening_error(url, bob) is None
        # Leaving the block DELETEs those sessions: alice's places are free again.
        assert await opening_error(url, fresh) is None

    anyio.run(scenario)


def test_ending_a_session_frees_its_slot(capped: LiveServer, cast: Cast) -> None:
    alice, url = cast.token(capped, "alice"), capped.mcp_url()

    async def scenario() -> None:
        async with sessions(url, alice, CAP - 1):
            async with connect(url, alice, mode="legacy") as last:
                await last.list_tools()
                assert await opening_error(url, alice) == (-32600, too_many(USER))
            # Leaving the block DELETEs that session.
            assert await opening_error(url, alice) is None

    anyio.run(scenario)


def test_anonymous_sessions_on_a_public_tenant_are_capped_per_client_address(capped: LiveServer) -> None:
    # The client address comes from X-Forwarded-For because the server trusts the loopback proxy.
    url = capped.mcp_url("open")
    for _ in range(CAP):
        assert initialize(url, **{"X-Forwarded-For": "198.51.100.7"}).status_code == 200
    refused = initialize(url, **{"X-Forwarded-For": "198.51.100.7"})
    assert refused.status_code == 429
    assert refused.json() == refusal(too_many("this client address"))
    assert initialize(url, **{"X-Forwarded-For": "198.51.100.8"}).status_code == 200


def test_anonymous_sessions_from_one_ipv6_64_share_one_cap(capped: LiveServer) -> None:
    # Any of the 2**64 addresses of one /64 is the same site: picking another is not a fresh cap.
    url = capped.mcp_url("open")
    for host in range(1, CAP + 1):
        assert initialize(url, **{"X-Forwarded-For": f"2001:db8:7:1::{host}"}).status_code == 200
    refused = initialize(url, **{"X-Forwarded-For": "2001:db8:7:1:abcd::99"})
    assert refused.status_code == 429
    assert refused.json() == refusal(too_many("this client address"))
    assert initialize(url, **{"X-Forwarded-For": "2001:db8:7:2::1"}).status_code == 200


def test_an_idle_session_is_closed_and_frees_its_slot(server_factory: Callable[..., LiveServer], cast: Cast) -> None:
    server = server_factory(MCPSITE_MAX_SESSIONS_PER_PRINCIPAL=str(CAP), MCPSITE_SESSION_IDLE_SECONDS="2")
    try:
        alice, url = cast.token(server, "alice"), server.mcp_url()
        server.mark_log()
        opened = [initialize(url, alice) for _ in range(CAP)]
        assert [response.status_code for response in opened] == [200] * CAP
        assert initialize(url, alice).json() == refusal(too_many(USER, idle="2"))
        for response in opened:
            server.wait_for_log(f"Session {response.headers['mcp-session-id']} idle timeout", timeout=5)
        assert initialize(url, alice).status_code == 200
        gone = initialize(url, alice, **{"Mcp-Session-Id": opened[0].headers["mcp-session-id"]})
        assert gone.status_code == 404
    finally:
        server.stop()
