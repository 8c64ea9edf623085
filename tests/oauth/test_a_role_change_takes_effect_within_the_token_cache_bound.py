"""Issue 28 item 2: a role changed takes effect as a member's removal does. A running server that
holds the member's token in its cache hears of the change at once (a broadcast, far inside
TOKEN_CACHE_SECONDS), whether staff change what the role may call or which role the member
holds, in the admin; and a change made behind the signals' back (a bulk update) still takes
effect once the cached entry expires, the cache's own bound. A 2026-07-28 client listening for
list changes (`subscriptions/listen`, the SDK's `Client.listen`) is told its tools and resources
lists changed, and lists the new tools; so is each open 2025-11-25 session of the member (the
handshake declares ``listChanged``), and no other member's."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import anyio
import httpx2
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser
from mcp import Client
from mcp.client.session import IncomingMessage, MessageHandlerFnT
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.subscriptions import ResourcesListChanged, ServerEvent, ToolsListChanged
from mcp_types import ResourceListChangedNotification, ToolListChangedNotification

from mcpsite import services
from mcpsite.models import MemberRole, Role, Tenant
from tests.conftest import Cast, LiveServer
from tests.http import csrf, signed_in
from tests.mcp.clients import modern_post, wait_until_served

EVERY = {"book_table", "provision", "delete_folder"}


@dataclass
class Held:
    tenant: Tenant
    user: AbstractUser
    role: Role
    token: str


@pytest.fixture
def erin(live: LiveServer, cast: Cast) -> Iterator[Held]:
    """A fresh tenant serving `demo`, erin its member holding `narrow` (`book_table` only), her token cached."""
    tenant = Tenant.objects.create(slug=f"held-{uuid.uuid4().hex[:6]}", name="Held", toolsets=["demo"])
    user = get_user_model().objects.create_user(f"erin-{uuid.uuid4().hex[:8]}")
    tenant.members.add(user)
    role = services.role_create(tenant=tenant, name="narrow", tools=["book_table"], toolsets=[])
    services.member_role_set(tenant=tenant, user=user, role=role)
    held = Held(tenant, user, role, services.token_issue(tenant=tenant, user=user, site_root=live.url).token)
    served(live, held)
    assert tools(live, held) == {"book_table"}  # now in the server's token cache
    yield held
    tenant.delete()
    user.delete()


def served(server: LiveServer, held: Held) -> None:
    """Until the server serves the new tenant."""
    wait_until_served(server.mcp_url(held.tenant.slug), held.token)


def tools(live: LiveServer, held: Held) -> set[str]:
    response = modern_post(live.mcp_url(held.tenant.slug), "tools/list", token=held.token)
    assert response.status_code == 200, response.text
    return {tool["name"] for tool in response.json()["result"]["tools"]}


def listed_within(live: LiveServer, held: Held, expected: set[str], seconds: float) -> float:
    """Seconds until the server lists `expected` to the member; fails past `seconds`."""
    started = time.monotonic()
    while (seen := tools(live, held)) != expected:
        assert time.monotonic() - started < seconds, f"still lists {sorted(seen)}"
        time.sleep(0.05)
    return time.monotonic() - started


def admin_save(live: LiveServer, held: Held, *, role_tools: list[str], member_keeps_role: bool) -> None:
    """Staff save the tenant's change page: the role's tools, and the member's role kept or removed."""
    http = signed_in(live, "staff", "staff-password-1")
    page = http.get(f"/admin/mcpsite/tenant/{held.tenant.pk}/change/")
    assert page.status_code == 200
    form: dict[str, str | list[str]] = {
        "csrfmiddlewaretoken": csrf(page),
        "slug": held.tenant.slug,
        "name": held.tenant.name,
        "enabled": "on",
        "toolsets": ["demo"],
        "call_quota": "",
        "call_quota_per_person": "",
        "members": [str(held.user.pk)],
        "roles-TOTAL_FORMS": "1",
        "roles-INITIAL_FORMS": "1",
        "roles-0-id": str(held.role.pk),
        "roles-0-tenant": str(held.tenant.pk),
        "roles-0-name": held.role.name,
        "roles-0-tools": role_tools,
        "member_roles-TOTAL_FORMS": "1",
        "member_roles-INITIAL_FORMS": "1",
        "member_roles-0-id": str(MemberRole.objects.get(tenant=held.tenant, user_id=held.user.pk).pk),
        "member_roles-0-tenant": str(held.tenant.pk),
        "member_roles-0-user": str(held.user.pk),
        "member_roles-0-role": str(held.role.pk),
        **({} if member_keeps_role else {"member_roles-0-DELETE": "on"}),
    }
    saved = http.post(f"/admin/mcpsite/tenant/{held.tenant.pk}/change/", data=form)
    assert saved.status_code == 302, saved.text[-2000:]


def test_a_roles_tools_changed_in_the_admin_take_effect_at_once(live: LiveServer, erin: Held) -> None:
    admin_save(live, erin, role_tools=["book_table", "provision"], member_keeps_role=True)
    assert Role.objects.get(pk=erin.role.pk).tools == ["book_table", "provision"]
    assert listed_within(live, erin, {"book_table", "provision"}, seconds=2.0) < 2.0  # the cache trusts 30 s


def test_a_members_role_removed_in_the_admin_gives_back_every_tool_at_once(live: LiveServer, erin: Held) -> None:
    admin_save(live, erin, role_tools=["book_table"], member_keeps_role=False)
    assert not MemberRole.objects.filter(user_id=erin.user.pk).exists()
    listed_within(live, erin, EVERY, seconds=2.0)


def test_a_role_given_through_the_service_narrows_at_once(live: LiveServer, erin: Held) -> None:
    services.member_role_set(tenant=erin.tenant, user=erin.user, role=None)
    listed_within(live, erin, EVERY, seconds=2.0)
    services.member_role_set(tenant=erin.tenant, user=erin.user, role=erin.role)
    listed_within(live, erin, {"book_table"}, seconds=2.0)


def test_a_role_changed_behind_the_signals_back_takes_effect_within_the_cache_bound(
    server_factory: Callable[..., LiveServer], erin: Held
) -> None:
    bound = 3.0
    fresh = server_factory(MCPSITE_TOKEN_CACHE_SECONDS=str(bound))
    try:
        erin.token = services.token_issue(tenant=erin.tenant, user=erin.user, site_root=fresh.url).token
        served(fresh, erin)
        assert tools(fresh, erin) == {"book_table"}  # now cached by that server
        Role.objects.filter(pk=erin.role.pk).update(tools=["book_table", "provision"])  # a bulk update: no signal
        assert tools(fresh, erin) == {"book_table"}  # still trusted from the cache...
        assert listed_within(fresh, erin, {"book_table", "provision"}, seconds=bound + 1.0) <= bound + 1.0
    finally:
        fresh.stop()


def test_a_role_change_tells_a_listening_client_to_list_again(live: LiveServer, erin: Held) -> None:
    async def scenario() -> tuple[set[type[ServerEvent]], set[str], set[str]]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {erin.token}"})
        transport = streamable_http_client(live.mcp_url(erin.tenant.slug), http_client=http)
        async with http, Client(transport, mode="2026-07-28") as client:
            before = {tool.name for tool in (await client.list_tools()).tools}
            heard: set[type[ServerEvent]] = set()
            async with client.listen(tools_list_changed=True, resources_list_changed=True) as listening:
                # Staff take her role away (the service the admin and the API call), from a thread.
                await anyio.to_thread.run_sync(
                    lambda: services.member_role_set(tenant=erin.tenant, user=erin.user, role=None)
                )
                with anyio.fail_after(10):
                    async for event in listening:
                        heard.add(type(event))
                        if heard >= {ToolsListChanged, ResourcesListChanged}:
                            break
            after = {tool.name for tool in (await client.list_tools()).tools}
            return heard, before, after

    heard, before, after = anyio.run(scenario)
    assert heard == {ToolsListChanged, ResourcesListChanged}
    assert before == {"book_table"}
    assert after == EVERY


def test_a_role_change_tells_the_members_2025_11_25_sessions_and_no_one_elses(live: LiveServer, erin: Held) -> None:
    frank = get_user_model().objects.create_user(f"frank-{uuid.uuid4().hex[:8]}")  # a member without a role
    erin.tenant.members.add(frank)
    franks_token = services.token_issue(tenant=erin.tenant, user=frank, site_root=live.url).token
    url = live.mcp_url(erin.tenant.slug)

    async def scenario() -> tuple[dict[str, list[str]], dict[str, bool | None], set[str], set[str]]:
        heard: dict[str, list[str]] = {"erin": [], "frank": []}
        erin_told = anyio.Event()

        def listener(who: str) -> MessageHandlerFnT:
            async def on_message(message: IncomingMessage) -> None:
                if isinstance(message, ToolListChangedNotification | ResourceListChangedNotification):
                    heard[who].append(message.method)
                    if who == "erin" and len(heard["erin"]) == 2:
                        erin_told.set()

            return on_message

        def session(token: str, who: str) -> tuple[httpx2.AsyncClient, Client]:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
            transport = streamable_http_client(url, http_client=http)
            return http, Client(transport, mode="legacy", message_handler=listener(who))

        erin_http, erin_session = session(erin.token, "erin")
        frank_http, frank_session = session(franks_token, "frank")
        async with erin_http, frank_http, erin_session as hers, frank_session as his:
            capabilities = hers.server_capabilities
            declared = {
                "tools": capabilities.tools.list_changed if capabilities.tools else None,
                "resources": capabilities.resources.list_changed if capabilities.resources else None,
            }
            before = {tool.name for tool in (await hers.list_tools()).tools}
            assert {tool.name for tool in (await his.list_tools()).tools} == EVERY
            # Staff take her role away (the service the admin and the API call), from a thread.
            await anyio.to_thread.run_sync(
                lambda: services.member_role_set(tenant=erin.tenant, user=erin.user, role=None)
            )
            with anyio.fail_after(10):
                await erin_told.wait()
            # Both are sent by one handler, one session after the other: had Frank's session been
            # told, it would have been within this second.
            await anyio.sleep(1.0)
            after = {tool.name for tool in (await hers.list_tools()).tools}
        return heard, declared, before, after

    try:
        heard, declared, before, after = anyio.run(scenario)
    finally:
        frank.delete()
    assert declared == {"tools": True, "resources": True}
    assert sorted(heard["erin"]) == ["notifications/resources/list_changed", "notifications/tools/list_changed"]
    assert heard["frank"] == []
    assert before == {"book_table"}
    assert after == EVERY
