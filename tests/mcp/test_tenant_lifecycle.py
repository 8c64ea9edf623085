"""A tenant created, changed or disabled in the admin is served (or not) without a restart.

A tenant not served answers as a private tenant answers a caller without a token (401 with a bare
challenge), so these public tenants go from 401 to 200 and back."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import httpx2
import pytest

from mcpsite.models import Tenant
from tests.conftest import Cast, LiveServer
from tests.http import csrf, management_forms, signed_in
from tests.mcp.clients import modern_post


def wait_for_status(url: str, expected: int, timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while (status := modern_post(url, "tools/list").status_code) != expected:
        assert time.monotonic() < deadline, f"{url} answered {status}, still not {expected}, after {timeout}s"
        time.sleep(0.05)


@pytest.fixture
def staff_session(live: LiveServer) -> Iterator[httpx2.Client]:
    http = signed_in(live, "staff", "staff-password-1")
    yield http
    http.close()


@pytest.fixture
def cleanup(cast: Cast) -> Iterator[Callable[[str], None]]:
    slugs: list[str] = []
    yield slugs.append
    Tenant.objects.filter(slug__in=slugs).delete()


def test_tenant_added_in_the_admin_is_served_at_once(
    live: LiveServer, cast: Cast, staff_session: httpx2.Client, cleanup: Callable[[str], None]
) -> None:
    url = live.mcp_url("acme")
    assert modern_post(url, "tools/list").status_code == 401
    cleanup("acme")
    add = staff_session.get("/admin/mcpsite/tenant/add/")
    response = staff_session.post(
        "/admin/mcpsite/tenant/add/",
        data={
            "csrfmiddlewaretoken": csrf(add),
            **management_forms(add),  # the roles inlines' (none)
            "slug": "acme",
            "name": "Acme",
            "enabled": "on",
            "public": "on",
            "toolsets": ["demo"],
        },
    )
    assert response.status_code == 302, response.text[:2000]
    wait_for_status(url, 200)
    tools = modern_post(url, "tools/list").json()["result"]["tools"]
    assert {tool["name"] for tool in tools} == {"provision", "delete_folder", "book_table"}


def test_changed_toolsets_and_disabling_take_effect_without_a_restart(
    live: LiveServer, cast: Cast, cleanup: Callable[[str], None]
) -> None:
    cleanup("beta")
    tenant = Tenant.objects.create(slug="beta", name="Beta", public=True, toolsets=[])
    url = live.mcp_url("beta")
    wait_for_status(url, 200)
    assert modern_post(url, "tools/list").json()["result"]["tools"] == []

    tenant.toolsets = ["demo"]
    tenant.save()
    deadline = time.monotonic() + 3
    while not modern_post(url, "tools/list").json()["result"]["tools"]:
        assert time.monotonic() < deadline, "toolset change not served"
        time.sleep(0.05)

    tenant.enabled = False
    tenant.save()
    wait_for_status(url, 401)


def test_a_change_made_where_no_broadcast_reaches_is_picked_up_by_the_poll(
    live: LiveServer, cast: Cast, cleanup: Callable[[str], None]
) -> None:
    """`QuerySet.update` sends no signal: the fallback poll (5 s by default) must find it."""
    cleanup("gamma")
    Tenant.objects.create(slug="gamma", name="Gamma", public=True, toolsets=["demo"])
    url = live.mcp_url("gamma")
    wait_for_status(url, 200)
    Tenant.objects.filter(slug="gamma").update(enabled=False)
    wait_for_status(url, 401, timeout=8.0)
