"""A member calling a tool outside their role is answered as an unknown tool, and the audit row of
that call says ``refused_role`` (the composer hands the roles layer the audit's hook), in both
generations; a call inside the role is recorded as it ended."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from mcpsite import services
from mcpsite.models import Tenant
from tests.audit.conftest import last_id, rows_after, served
from tests.conftest import LiveServer
from tests.mcp.test_a_tool_call_without_its_scope_is_refused_naming_every_scope_it_needs import call


@pytest.fixture(scope="module")
def bookers_only(audited: LiveServer, django_db_blocker: Any) -> Iterator[tuple[str, str]]:
    """A tenant serving `demo` whose member erin holds a role naming `book_table` only: (slug, token)."""
    with django_db_blocker.unblock():
        slug = f"audit-roles-{uuid.uuid4().hex[:6]}"
        tenant = Tenant.objects.create(slug=slug, name="Audit roles", toolsets=["demo"])
        erin = get_user_model().objects.create_user(f"erin-{uuid.uuid4().hex[:6]}")
        tenant.members.add(erin)
        role = services.role_create(tenant=tenant, name="bookers", tools=["book_table"], toolsets=[])
        services.member_role_set(tenant=tenant, user=erin, role=role)
        token = services.token_issue(tenant=tenant, user=erin, site_root=audited.url).token
        served(audited, slug, "book_table", token)
        yield slug, token
        tenant.delete()
        erin.delete()


@pytest.mark.parametrize("entry", ["2026-07-28", "2025-11-25"])
def test_a_call_outside_the_role_is_recorded_refused_role(
    audited: LiveServer, bookers_only: tuple[str, str], entry: str
) -> None:
    slug, token = bookers_only
    mark = last_id()

    response = call(audited, entry, token, "provision", {"name": "x"}, slug=slug)

    assert response.status_code == 200 and "Unknown tool: provision" in response.text
    [row] = rows_after(mark, 1, tenant__slug=slug)
    assert (row.tool, row.outcome, row.generation) == ("provision", "refused_role", entry)
    assert row.request_id == response.headers["x-request-id"]
