"""Staff set a tenant's own call quotas on its admin page (MCP requests per quota window; empty:
the site's default): saved, and every process applies them to the tenant's endpoint."""

from __future__ import annotations

import time
import uuid

from mcpsite.models import Tenant
from tests.conftest import Cast, LiveServer
from tests.http import csrf, management_forms, signed_in
from tests.mcp.clients import modern_post


def test_a_per_person_quota_saved_in_the_admin_refuses_the_next_call(live: LiveServer, cast: Cast) -> None:
    tenant = Tenant.objects.create(slug=f"quota-{uuid.uuid4().hex[:6]}", name="Quota", toolsets=["demo"])
    tenant.members.add(cast.user("alice").pk)
    alice = cast.token(live, "alice", tenant.slug)
    staff = signed_in(live, "staff", "staff-password-1")
    page = staff.get(f"/admin/mcpsite/tenant/{tenant.pk}/change/")
    assert 'name="call_quota"' in page.text and 'name="call_quota_per_person"' in page.text

    saved = staff.post(
        f"/admin/mcpsite/tenant/{tenant.pk}/change/",
        data={
            "csrfmiddlewaretoken": csrf(page),
            **management_forms(page),  # the roles inlines' (none)
            "slug": tenant.slug,
            "name": tenant.name,
            "enabled": "on",
            "toolsets": ["demo"],
            "call_quota": "",
            "call_quota_per_person": "1",
            "members": [str(cast.user("alice").pk)],
            "_save": "Save",
        },
    )
    assert saved.status_code == 302, saved.text[:500]
    tenant.refresh_from_db()
    assert (tenant.call_quota, tenant.call_quota_per_person) == (None, 1)

    deadline = time.monotonic() + 10  # every process hears of a tenant change at once, or on its poll
    while (response := modern_post(live.mcp_url(tenant.slug), "tools/list", token=alice)).status_code != 429:
        assert time.monotonic() < deadline, f"still {response.status_code}"
        time.sleep(0.1)
    assert response.json()["error"]["data"]["limit"] == 1
