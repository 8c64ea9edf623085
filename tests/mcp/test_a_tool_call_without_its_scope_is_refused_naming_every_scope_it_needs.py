"""A tool declares the scopes it needs (`delete_folder`: ``files:write``, the payments tools:
``payments``). A call whose token lacks one is answered HTTP 403 ``insufficient_scope`` before the
tool runs, in both generations (a 2025-11-25 session included: the body names the tool), with a
challenge naming every scope the call needs, so the client can re-authorize with them (step-up).
The same token still makes every call that needs only ``mcp``; a token with the scope succeeds."""

from __future__ import annotations

import json

import anyio
import httpx2
import pytest

from mcpsite.models import Tenant
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import MODES, connect, modern_post, raw_post, text

LEGACY = {"MCP-Protocol-Version": "2025-11-25"}


def challenge(live: LiveServer, missing: str, needed: str, slug: str = "demo") -> str:
    return (
        f'Bearer error="insufficient_scope", error_description="Required scope: {missing}", scope="{needed}", '
        f'resource_metadata="{live.url}/.well-known/oauth-protected-resource/t/{slug}/mcp"'
    )


def legacy_session(live: LiveServer, token: str, slug: str = "demo") -> str:
    """A 2025-11-25 session opened with `token` (raw, to see the refusal's status and headers)."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    opened = raw_post(live.mcp_url(slug), json.dumps(initialize).encode(), token, **LEGACY)
    assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    raw_post(live.mcp_url(slug), json.dumps(initialized).encode(), token, **LEGACY, **{"Mcp-Session-Id": session})
    return session


def call(
    live: LiveServer, entry: str, token: str, tool: str, arguments: dict[str, object], slug: str = "demo"
) -> httpx2.Response:
    url = live.mcp_url(slug)
    if entry == "2026-07-28":
        return modern_post(url, "tools/call", {"name": tool, "arguments": arguments}, token, **{"Mcp-Name": tool})
    session = legacy_session(live, token, slug)
    body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    return raw_post(url, json.dumps(body).encode(), token, **LEGACY, **{"Mcp-Session-Id": session})


@pytest.mark.parametrize("entry", ["2026-07-28", "2025-11-25"])
def test_delete_folder_with_an_mcp_only_token_is_403_naming_mcp_and_files_write(
    live: LiveServer, cast: Cast, entry: str
) -> None:
    path = cast.folder([])
    response = call(live, entry, cast.token(live, scope="mcp"), "delete_folder", {"path": path})
    assert response.status_code == 403, response.text
    assert response.headers["www-authenticate"] == challenge(live, "files:write", "mcp files:write")
    assert response.json() == {"error": "insufficient_scope", "error_description": "Required scope: files:write"}
    assert cast.folder_exists(path)  # the tool never ran


@pytest.fixture
def shop(cast: Cast) -> str:
    """A private tenant serving the demo and payments toolsets, alice a member."""
    tenant, _ = Tenant.objects.get_or_create(slug="shop", defaults={"name": "Shop", "toolsets": ["demo", "payments"]})
    tenant.members.add(cast.user("alice").pk)
    return tenant.slug


@pytest.mark.parametrize("entry", ["2026-07-28", "2025-11-25"])
def test_a_payments_tool_with_a_files_write_token_is_403_naming_mcp_and_payments(
    live: LiveServer, cast: Cast, shop: str, entry: str
) -> None:
    token = cast.token(live, slug=shop, scope="mcp files:write")
    response = call(live, entry, token, "pay_deposit", {"booking_id": 1}, slug=shop)
    assert response.status_code == 403, response.text
    assert response.headers["www-authenticate"] == challenge(live, "payments", "mcp payments", slug=shop)


def test_a_tool_the_tenant_does_not_serve_is_left_to_the_sdk_whatever_the_scopes(live: LiveServer, cast: Cast) -> None:
    # The demo tenant serves no payments toolset: its tools need nothing there, and the SDK
    # answers the unknown tool as it always did (a 200 with its error), not a 403.
    response = call(live, "2026-07-28", cast.token(live, scope="mcp"), "pay_deposit", {"booking_id": 1})
    assert response.status_code == 200, response.text
    assert "pay_deposit" in response.text


@pytest.mark.parametrize("entry", ["2026-07-28", "2025-11-25"])
def test_an_mcp_only_token_still_calls_a_tool_that_needs_only_mcp(live: LiveServer, cast: Cast, entry: str) -> None:
    token = cast.token(live, scope="mcp")
    response = call(live, entry, token, "book_table", {"date": "2026-01-10", "party_size": 2})
    assert response.status_code == 200, response.text
    assert "Booked a table for 2 on 2026-01-10" in response.text


@pytest.mark.parametrize("mode", MODES)
def test_a_token_with_files_write_deletes_the_folder(live: LiveServer, cast: Cast, mode: str) -> None:
    path = cast.folder([])
    token = cast.token(live, scope="mcp files:write")

    async def scenario() -> str:
        async with connect(live.mcp_url(), token, mode=mode) as client:
            return text(await client.call_tool("delete_folder", {"path": path}))

    assert anyio.run(scenario) == f"deleted {path}"
    assert not cast.folder_exists(path)
