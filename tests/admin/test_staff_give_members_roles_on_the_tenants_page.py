"""Staff manage a tenant's roles on its admin page: a role naming a toolset the tenant does not
serve is refused with the reason; a member's role is chosen among this tenant's members and roles
only, and a crafted choice of another tenant's role or a non-member is refused. (A change taking
effect: tests/oauth/test_a_role_change_takes_effect_within_the_token_cache_bound.py.)"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import httpx2
import pytest

from mcpsite import services
from mcpsite.models import MemberRole, Role, Tenant
from tests.conftest import Cast, LiveServer
from tests.http import csrf, management_forms, signed_in


@pytest.fixture
def tenant(cast: Cast) -> Iterator[Tenant]:
    tenant = Tenant.objects.create(slug=f"page-{uuid.uuid4().hex[:6]}", name="Page", toolsets=["demo"])
    tenant.members.add(cast.user("alice").pk)
    services.role_create(tenant=tenant, name="bookers", tools=["book_table"], toolsets=[])
    yield tenant
    tenant.delete()


@pytest.fixture
def staff(live: LiveServer) -> Iterator[httpx2.Client]:
    http = signed_in(live, "staff", "staff-password-1")
    yield http
    http.close()


def options(page: httpx2.Response, name: str) -> list[str]:
    """The labels a select of the inline's empty form offers (blank left out)."""
    select = re.search(rf'<select name="{re.escape(name)}".*?</select>', page.text, re.S)
    assert select, f"no select {name}"
    return [label for value, label in re.findall(r'<option value="([^"]*)"[^>]*>([^<]*)</option>', select[0]) if value]


def save(staff: httpx2.Client, tenant: Tenant, **fields: str | list[str]) -> httpx2.Response:
    url = f"/admin/mcpsite/tenant/{tenant.pk}/change/"
    page = staff.get(url)
    role = Role.objects.get(tenant=tenant)
    data = {
        "csrfmiddlewaretoken": csrf(page),
        **management_forms(page),
        "slug": tenant.slug,
        "name": tenant.name,
        "enabled": "on",
        "toolsets": ["demo"],
        "members": [str(pk) for pk in tenant.members.values_list("pk", flat=True)],
        "roles-0-id": str(role.pk),
        "roles-0-tenant": str(tenant.pk),
        "roles-0-name": role.name,
        "roles-0-tools": role.tools,
        **fields,
    }
    return staff.post(url, data=data)


def test_a_members_role_is_chosen_among_this_tenants_members_and_roles(
    staff: httpx2.Client, cast: Cast, tenant: Tenant
) -> None:
    services.role_create(tenant=cast.tenant("other"), name=f"theirs-{tenant.slug}", tools=[], toolsets=[])
    page = staff.get(f"/admin/mcpsite/tenant/{tenant.pk}/change/")
    assert options(page, "member_roles-__prefix__-user") == ["alice"]
    assert options(page, "member_roles-__prefix__-role") == [f"{tenant.slug}: bookers"]
    Role.objects.filter(name=f"theirs-{tenant.slug}").delete()


def test_a_role_naming_a_toolset_the_tenant_does_not_serve_is_refused(staff: httpx2.Client, tenant: Tenant) -> None:
    refused = save(staff, tenant, **{"roles-0-toolsets": ["payments"]})
    assert refused.status_code == 200  # the page again, with the reason
    assert f"Not served by {tenant.slug}: payments." in refused.text
    assert Role.objects.get(tenant=tenant).toolsets == []


def test_another_tenants_role_or_a_non_member_cannot_be_given(staff: httpx2.Client, cast: Cast, tenant: Tenant) -> None:
    theirs = services.role_create(tenant=cast.tenant("other"), name=f"theirs-{tenant.slug}", tools=[], toolsets=[])
    mine = Role.objects.get(tenant=tenant)
    for user, role in ((cast.user("alice"), theirs), (cast.user("mallory"), mine)):
        refused = save(
            staff,
            tenant,
            **{
                "member_roles-TOTAL_FORMS": "1",
                "member_roles-0-tenant": str(tenant.pk),
                "member_roles-0-user": str(user.pk),
                "member_roles-0-role": str(role.pk),
            },
        )
        assert refused.status_code == 200
        assert "Select a valid choice" in refused.text
    assert not MemberRole.objects.filter(tenant=tenant).exists()
    given = save(
        staff,
        tenant,
        **{
            "member_roles-TOTAL_FORMS": "1",
            "member_roles-0-tenant": str(tenant.pk),
            "member_roles-0-user": str(cast.user("alice").pk),
            "member_roles-0-role": str(mine.pk),
        },
    )
    assert given.status_code == 302, given.text[-1500:]
    assert MemberRole.objects.get(tenant=tenant).role == mine
    MemberRole.objects.filter(tenant=tenant).delete()
    theirs.delete()


def test_a_role_a_member_holds_cannot_be_deleted_on_the_page(staff: httpx2.Client, cast: Cast, tenant: Tenant) -> None:
    role = Role.objects.get(tenant=tenant)
    services.member_role_set(tenant=tenant, user=cast.user("alice"), role=role)
    held = MemberRole.objects.get(tenant=tenant)
    refused = save(
        staff,
        tenant,
        **{
            "roles-0-DELETE": "on",
            "member_roles-0-id": str(held.pk),
            "member_roles-0-tenant": str(tenant.pk),
            "member_roles-0-user": str(held.user_id),
            "member_roles-0-role": str(role.pk),
        },
    )
    assert refused.status_code == 200  # the page again, saying why
    assert "would require deleting the following protected related objects" in refused.text
    assert Role.objects.filter(pk=role.pk).exists() and MemberRole.objects.filter(pk=held.pk).exists()
