"""Issue 28 item 2: a member's role names the tools they may call. A tool outside it is not listed
in ``tools/list`` and a call of it is answered exactly as a call of a name nobody serves, in both
generations (a 2025-11-25 session included), asked as a task or not, whatever scope or
``Mcp-Param-*`` header the tool would need: nothing tells a hidden tool from an unknown one. A
member without a role, and an anonymous caller of a public tenant, still see every tool.

Carol holds the role `bookers` (the tool `book_table` and the toolset `long_running`) at a tenant
serving `demo`, `long_running` and `conformance`; dave, a member too, holds none."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser

from mcp_tasks.models import Task
from mcpsite import services
from mcpsite.models import Tenant
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import MODES, connect, modern_post, wait_until_served
from tests.mcp.test_a_tool_call_without_its_scope_is_refused_naming_every_scope_it_needs import call
from tests.tasks.conftest import rpc
from tools_app.discovery import toolsets

ENTRIES = ["2026-07-28", "2025-11-25"]
BOOKERS = {"book_table", *toolsets["long_running"].tool_names()}


@dataclass
class Staffed:
    slug: str
    carol: str  # a member holding `bookers`: the token
    dave: str  # a member holding no role
    carol_user: AbstractUser


@pytest.fixture(scope="module")
def staffed(live: LiveServer, django_db_blocker: Any) -> Iterator[Staffed]:
    with django_db_blocker.unblock():
        slug = f"roles-{uuid.uuid4().hex[:6]}"
        tenant = Tenant.objects.create(slug=slug, name="Roles", toolsets=["demo", "long_running", "conformance"])
        carol, dave = (get_user_model().objects.create_user(f"{n}-{uuid.uuid4().hex[:6]}") for n in ("carol", "dave"))
        tenant.members.add(carol, dave)
        bookers = services.role_create(tenant=tenant, name="bookers", tools=["book_table"], toolsets=["long_running"])
        services.member_role_set(tenant=tenant, user=carol, role=bookers)
        staffed = Staffed(
            slug,
            services.token_issue(tenant=tenant, user=carol, site_root=live.url).token,
            services.token_issue(tenant=tenant, user=dave, site_root=live.url).token,
            carol,
        )
        wait_until_served(live.mcp_url(slug), staffed.dave)
        yield staffed
        tenant.delete()
        carol.delete()
        dave.delete()


def listed(url: str, token: str | None, mode: str) -> set[str]:
    async def scenario() -> set[str]:
        async with connect(url, token, mode=mode) as client:
            return {tool.name for tool in (await client.list_tools()).tools}

    return anyio.run(scenario)


def message(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC answer, whether sent as JSON or as the last event of a stream."""
    body = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        body = [line[5:] for line in body.splitlines() if line.startswith("data:")][-1]
    answer: dict[str, Any] = json.loads(body)
    return answer


def same_as_unknown(hidden: httpx2.Response, tool: str, unknown: httpx2.Response) -> None:
    """The two answers are the same, status and message, once each names its own tool."""
    assert hidden.status_code == unknown.status_code == 200, hidden.text
    assert json.dumps(message(hidden)).replace(tool, "TOOL") == json.dumps(message(unknown)).replace(
        "no_such_tool", "TOOL"
    )


@pytest.mark.parametrize("mode", MODES)
def test_a_member_lists_only_the_tools_and_toolsets_of_their_role(
    live: LiveServer, staffed: Staffed, mode: str
) -> None:
    assert listed(live.mcp_url(staffed.slug), staffed.carol, mode) == BOOKERS


@pytest.mark.parametrize("mode", MODES)
def test_a_member_without_a_role_lists_every_tool(live: LiveServer, staffed: Staffed, mode: str) -> None:
    every = {name for toolset in ("demo", "long_running", "conformance") for name in toolsets[toolset].tool_names()}
    assert listed(live.mcp_url(staffed.slug), staffed.dave, mode) == every


@pytest.mark.parametrize("mode", MODES)
def test_an_anonymous_caller_of_a_public_tenant_lists_every_tool(live: LiveServer, cast: Cast, mode: str) -> None:
    assert listed(live.mcp_url("open"), None, mode) == set(toolsets["demo"].tool_names())


@pytest.mark.parametrize("entry", ENTRIES)
def test_a_call_outside_the_role_is_answered_as_an_unknown_tool_is(
    live: LiveServer, cast: Cast, staffed: Staffed, entry: str
) -> None:
    unknown = call(live, entry, staffed.carol, "no_such_tool", {"date": "2026-01-10"}, slug=staffed.slug)
    hidden = call(live, entry, staffed.carol, "provision", {"date": "2026-01-10"}, slug=staffed.slug)
    same_as_unknown(hidden, "provision", unknown)
    assert message(hidden)["result"]["isError"] is True
    assert message(hidden)["result"]["content"] == [{"type": "text", "text": "Unknown tool: provision"}]


@pytest.mark.parametrize("entry", ENTRIES)
def test_a_hidden_tool_that_needs_a_scope_the_token_lacks_is_unknown_not_a_403(
    live: LiveServer, cast: Cast, staffed: Staffed, entry: str
) -> None:
    tenant = cast.tenant(staffed.slug)
    narrow = services.token_issue(tenant=tenant, user=staffed.carol_user, site_root=live.url, scope="mcp").token
    path = cast.folder([], slug=staffed.slug)
    unknown = call(live, entry, narrow, "no_such_tool", {"path": path}, slug=staffed.slug)
    hidden = call(live, entry, narrow, "delete_folder", {"path": path}, slug=staffed.slug)
    same_as_unknown(hidden, "delete_folder", unknown)
    assert cast.folder_exists(path, slug=staffed.slug)  # the tool never ran


def test_a_hidden_tool_with_a_header_parameter_is_unknown_whatever_the_headers(
    live: LiveServer, staffed: Staffed
) -> None:
    """`test_custom_header` mirrors an argument as ``Mcp-Param-Region``: sent without it, a caller
    who may call the tool is refused by the header check; one who may not gets the unknown answer."""

    def without_the_param_header(tool: str, token: str) -> httpx2.Response:
        params = {"name": tool, "arguments": {"region": "eu-west-1"}}
        return modern_post(live.mcp_url(staffed.slug), "tools/call", params, token, **{"Mcp-Name": tool})

    assert without_the_param_header("test_custom_header", staffed.dave).status_code == 400  # checked for him
    hidden = without_the_param_header("test_custom_header", staffed.carol)
    same_as_unknown(hidden, "test_custom_header", without_the_param_header("no_such_tool", staffed.carol))


def test_a_task_call_outside_the_role_is_answered_as_an_unknown_tool_is_and_no_task_exists(
    live: LiveServer, cast: Cast, staffed: Staffed
) -> None:
    url, rows = live.mcp_url(staffed.slug), Task.objects.count()
    hidden = rpc(url, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}}, staffed.carol)
    unknown = rpc(url, "tools/call", {"name": "no_such_tool", "arguments": {"seconds": 0}}, staffed.carol)
    same_as_unknown(hidden, "slow_compute", unknown)
    assert Task.objects.count() == rows
    # A task tool of the role still runs as a task.
    started = rpc(url, "tools/call", {"name": "long_report", "arguments": {"seconds": 0}}, staffed.carol)
    assert message(started)["result"]["resultType"] == "task"
