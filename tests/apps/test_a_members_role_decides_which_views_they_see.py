"""Issue 28 item 2 with MCP Apps: a view goes with the tools of a member's role. A ``ui://`` view
that no tool the role allows shows is not listed and reads as an unknown resource does (nothing
tells it from an address nobody serves), and the app-only tools of a view the role does show are
allowed with it, so the view works in the host (they were answered as unknown tools before: no
role can name them). A member without a role sees every view. Both generations, as a host that
declared MCP Apps.

At a tenant serving `payments` and `long_running`, erin holds a role with the one tool
`pay_deposit` (the payment view, whose app-only tool is `step_status`; the approval view calls it
too, but no tool of hers shows that view); frank holds none."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2
import pytest
from django.contrib.auth import get_user_model
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mcpsite import services
from mcpsite.models import Tenant
from tests.apps.conftest import TOOLSETS
from tests.apps.host import AppsSupport
from tests.conftest import LiveServer
from tests.mcp.clients import MODES, wait_until_served

PAYMENT, APPROVAL, TASK = (f"ui://mcpsite/{name}.html" for name in ("payment", "approval", "task"))
NOWHERE = "ui://mcpsite/nowhere.html"


@dataclass
class Roles:
    slug: str
    erin: str  # holds a role of `pay_deposit` alone: the token
    frank: str  # holds no role


@pytest.fixture(scope="module")
def roles(server: LiveServer, django_db_blocker: Any) -> Iterator[Roles]:
    with django_db_blocker.unblock():
        slug = f"apps-roles-{uuid.uuid4().hex[:6]}"
        tenant = Tenant.objects.create(slug=slug, name="Apps roles", toolsets=TOOLSETS)
        erin, frank = (get_user_model().objects.create_user(f"{n}-{uuid.uuid4().hex[:6]}") for n in ("erin", "frank"))
        tenant.members.add(erin, frank)
        payers = services.role_create(tenant=tenant, name="payers", tools=["pay_deposit"], toolsets=[])
        services.member_role_set(tenant=tenant, user=erin, role=payers)
        roles = Roles(
            slug,
            services.token_issue(tenant=tenant, user=erin, site_root=server.url).token,
            services.token_issue(tenant=tenant, user=frank, site_root=server.url).token,
        )
        wait_until_served(server.mcp_url(slug), roles.frank)
        yield roles
        tenant.delete()
        erin.delete()
        frank.delete()


@dataclass
class Seen:
    tools: set[str]
    views: set[str]
    reads: dict[str, str] = field(default_factory=dict)  # "read", or the error it answered
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)


def seen(url: str, token: str, mode: str) -> Seen:
    """What a host with MCP Apps sees: tools, views, a read of each view, two app-only calls."""

    async def run() -> Seen:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        transport = streamable_http_client(url, http_client=http)
        async with http, Client(transport, mode=mode, extensions=[AppsSupport()]) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            resources = (await client.list_resources()).resources
            found = Seen(tools, {r.uri for r in resources if r.uri.startswith("ui://")})
            for uri in (PAYMENT, APPROVAL, TASK, NOWHERE):
                try:
                    read = await client.read_resource(uri)
                    found.reads[uri] = "read" if "<html" in str(read.model_dump()) else "empty"
                except MCPError as exc:
                    found.reads[uri] = str(exc)
            step = {"tool": "pay_deposit", "arguments": {"booking_id": 1}}
            for name, arguments in (("step_status", step), ("task_view_status", {"task_id": "t"})):
                result = await client.call_tool(name, arguments)
                found.calls[name] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            return found

    return anyio.run(run)


@pytest.mark.parametrize("mode", MODES)
def test_a_member_sees_and_reads_only_the_views_of_their_roles_tools(
    server: LiveServer, roles: Roles, mode: str
) -> None:
    erin = seen(server.mcp_url(roles.slug), roles.erin, mode)

    assert erin.views == {PAYMENT}
    assert erin.reads[PAYMENT] == "read"
    assert erin.reads[NOWHERE] == f"Unknown resource: {NOWHERE}"
    for hidden in (APPROVAL, TASK):  # as an address nobody serves
        assert erin.reads[hidden] == erin.reads[NOWHERE].replace(NOWHERE, hidden)


@pytest.mark.parametrize("mode", MODES)
def test_the_app_only_tools_of_a_view_the_role_shows_are_allowed_with_it(
    server: LiveServer, roles: Roles, mode: str
) -> None:
    erin = seen(server.mcp_url(roles.slug), roles.erin, mode)

    assert erin.tools == {"pay_deposit", "step_status"}
    status = erin.calls["step_status"]
    assert status["isError"] is False, status
    assert status["structuredContent"]["status"] == "none"  # no step of hers: answered, not refused
    assert erin.calls["task_view_status"]["content"] == [{"type": "text", "text": "Unknown tool: task_view_status"}]


@pytest.mark.parametrize("mode", MODES)
def test_a_member_without_a_role_sees_and_reads_every_view(server: LiveServer, roles: Roles, mode: str) -> None:
    frank = seen(server.mcp_url(roles.slug), roles.frank, mode)

    assert frank.views == {PAYMENT, APPROVAL, TASK}
    assert {uri: frank.reads[uri] for uri in (PAYMENT, APPROVAL, TASK)} == dict.fromkeys(
        (PAYMENT, APPROVAL, TASK), "read"
    )
    assert {"step_status", "task_view_status", "task_view_cancel", "show_task"} <= frank.tools
