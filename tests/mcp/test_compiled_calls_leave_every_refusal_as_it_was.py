"""A private tenant's refusals are the same with the compiled tool calls (`mcp_server.compiled_calls`)
as without them: the differential test of `test_compiled_calls_answer_as_the_sdk_does`, played with
bearer tokens. No token, a token that is not one, another tenant's member's token, a token without
the scope a tool needs (403 ``insufficient_scope``) and a member whose role leaves a compiled tool
out (answered as an unknown tool) are each answered alike on both paths, with the same log lines,
and the compiled layer takes none of them; the member's call of a tool of their role it takes.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model

from mcp_server.compose import build_server
from mcp_server.endpoint import TenantEndpoint
from mcpsite import services
from mcpsite.models import Tenant
from mcpsite.tenancy import tenant_mcp_path
from tests.mcp.test_compiled_calls_answer_as_the_sdk_does import both, call
from tools_app.tenant import TenantInfo


@dataclass
class Private:
    info: TenantInfo
    full: str  # a member without a role, with every scope
    narrow: str  # the same member, with `mcp` only
    texter: str  # a member whose role holds `test_simple_text` only
    foreign: str  # a member of tenant `other`


@pytest.fixture
def private(django_db_blocker: Any) -> Iterator[Private]:
    with django_db_blocker.unblock():
        slug = f"compiled-{uuid.uuid4().hex[:6]}"
        tenant = Tenant.objects.create(slug=slug, name="Compiled", toolsets=["conformance", "demo"])
        erin, fay = (get_user_model().objects.create_user(f"{n}-{uuid.uuid4().hex[:6]}") for n in ("erin", "fay"))
        tenant.members.add(erin, fay)
        texters = services.role_create(tenant=tenant, name="texters", tools=["test_simple_text"], toolsets=[])
        services.member_role_set(tenant=tenant, user=fay, role=texters)
        root = settings.SITE_ROOT
        other = Tenant.objects.get(slug="other")
        mallory = get_user_model().objects.get(username="mallory")
        yield Private(
            TenantInfo(
                id=tenant.pk, slug=slug, name="Compiled", public=False, toolsets=("conformance", "demo"), version="v1"
            ),
            services.token_issue(tenant=tenant, user=erin, site_root=root).token,
            services.token_issue(tenant=tenant, user=erin, site_root=root, scope="mcp").token,
            services.token_issue(tenant=tenant, user=fay, site_root=root).token,
            services.token_issue(tenant=other, user=mallory, site_root=root).token,
        )
        tenant.delete()
        erin.delete()
        fay.delete()


@pytest.fixture
async def served(private: Private) -> AsyncIterator[tuple[TenantEndpoint, list[Any]]]:
    server, app = build_server(private.info)
    assert isinstance(app, TenantEndpoint)
    async with server.session_manager.run():
        yield app, server.middleware


# name -> (the token's attribute on `Private`, or a literal; tool; taken by the compiled layer)
CASES = {
    "a member's call": ("full", "test_simple_text", True),
    "a call within the member's role": ("texter", "test_simple_text", True),
    "a compiled tool outside the member's role": ("texter", "test_image_content", False),
    "a tool outside the role that is not compiled": ("texter", "delete_folder", False),
    "a tool whose scope the token lacks": ("narrow", "delete_folder", False),
    "no token": ("", "test_simple_text", False),
    "a token that is not one": ("=not-a-token", "test_simple_text", False),
    "another tenant's member": ("foreign", "test_simple_text", False),
}


@pytest.mark.anyio
@pytest.mark.parametrize("case", list(CASES))
async def test_each_refusal_is_answered_alike_on_both_paths(
    private: Private, served: tuple[TenantEndpoint, list[Any]], case: str
) -> None:
    app, layers = served
    who, tool, takes = CASES[case]
    token = who[1:] if who.startswith("=") else getattr(private, who) if who else ""
    arguments = {"path": "/tmp/none"} if tool == "delete_folder" else {}
    change = {"authorization": f"Bearer {token}"} if token else {}
    compiled, sdk, taken = await both(app, layers, call(tool, arguments), change, tenant_mcp_path(private.info.slug))
    assert compiled[0] == sdk[0]
    assert compiled[1] == sdk[1]
    assert taken == (1 if takes else 0)
    status, sent, answer = compiled[0]
    if case == "a member's call":
        assert status == 200 and answer["result"]["content"][0]["text"]
    if case == "a tool whose scope the token lacks":
        assert status == 403 and 'error="insufficient_scope"' in sent["www-authenticate"]
    if case in ("no token", "a token that is not one", "another tenant's member"):
        assert status == 401
    if "outside the member's role" in case:
        assert "Unknown tool" in answer["result"]["content"][0]["text"]
