"""Operators manage a tenant's member roles through the API (``tenants:write``): create a role,
give it to a member, who then lists only its tools; change what it may call, which the member's
next call sees at once; take it back and delete it. A role naming what the tenant does not serve,
a held role's deletion, another tenant's role and a userless token are refused, each with its
exact status. (Anonymous callers, tokens without the scope, staff without the Django permission:
test_only_staff_with_scope_and_permission_may_act.)"""

from __future__ import annotations

import secrets
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta

import httpx2
import pytest
from django.utils import timezone
from oauth2_provider.models import AccessToken

from mcpsite import services
from mcpsite.models import Role, Tenant
from tests.api.conftest import api, machine_client
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import modern_post

EVERY = {"book_table", "provision", "delete_folder"}


@pytest.fixture
def ops(server: LiveServer, cast: Cast) -> Iterator[httpx2.Client]:
    with api(server, machine_client(server, "ops", ["tenants:write"]).token) as http:
        yield http


@pytest.fixture
def slug(ops: httpx2.Client, cast: Cast) -> Iterator[str]:
    """A fresh tenant serving `demo`, bob its member."""
    slug = f"roles-{uuid.uuid4().hex[:6]}"
    assert ops.post("/tenants/", json={"slug": slug, "name": "Roles", "toolsets": ["demo"]}).status_code == 201
    assert ops.post(f"/tenants/{slug}/members/", json={"username": "bob"}).status_code == 201
    yield slug
    Tenant.objects.filter(slug=slug).delete()


def listed_within(server: LiveServer, slug: str, token: str, expected: set[str], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while True:
        response = modern_post(server.mcp_url(slug), "tools/list", token=token)
        seen = {t["name"] for t in response.json()["result"]["tools"]} if response.status_code == 200 else None
        if seen == expected:
            return
        assert time.monotonic() < deadline, f"{response.status_code}: still lists {seen}"
        time.sleep(0.05)


def test_a_role_is_created_given_changed_taken_back_and_deleted(
    server: LiveServer, cast: Cast, ops: httpx2.Client, slug: str
) -> None:
    created = ops.post(f"/tenants/{slug}/roles/", json={"name": "bookers", "tools": ["book_table"]})
    assert created.status_code == 201, created.text
    role = created.json()
    assert role == {"id": role["id"], "name": "bookers", "tools": ["book_table"], "toolsets": [], "holders": []}
    bob = cast.token(server, "bob", slug)
    listed_within(server, slug, bob, EVERY, seconds=10)  # served, and bob's token cached with no role

    given = ops.put(f"/tenants/{slug}/members/bob/role/", json={"role": role["id"]})
    assert (given.status_code, given.json()) == (200, {"username": "bob", "role": role["id"]})
    assert ops.get(f"/tenants/{slug}/roles/").json() == [{**role, "holders": ["bob"]}]
    listed_within(server, slug, bob, {"book_table"}, seconds=2.0)  # the cache alone would trust 30 s

    changed = ops.patch(f"/tenants/{slug}/roles/{role['id']}/", json={"toolsets": ["demo"], "tools": []})
    assert (changed.status_code, changed.json()["toolsets"], changed.json()["tools"]) == (200, ["demo"], [])
    listed_within(server, slug, bob, EVERY, seconds=2.0)
    assert ops.patch(f"/tenants/{slug}/roles/{role['id']}/", json={"toolsets": []}).status_code == 200
    listed_within(server, slug, bob, set(), seconds=2.0)  # a role may allow nothing at all

    held = ops.delete(f"/tenants/{slug}/roles/{role['id']}/")
    assert (held.status_code, held.json()) == (
        400,
        {"detail": "The role 'bookers' is held by 1 member(s): give them another role (or none) first."},
    )
    taken_back = ops.put(f"/tenants/{slug}/members/bob/role/", json={"role": None})
    assert (taken_back.status_code, taken_back.json()) == (200, {"username": "bob", "role": None})
    listed_within(server, slug, bob, EVERY, seconds=2.0)
    assert ops.delete(f"/tenants/{slug}/roles/{role['id']}/").status_code == 204
    assert ops.get(f"/tenants/{slug}/roles/").json() == []


def test_a_role_naming_what_the_tenant_does_not_serve_is_refused_with_the_reason(ops: httpx2.Client, slug: str) -> None:
    toolset = ops.post(f"/tenants/{slug}/roles/", json={"name": "payers", "toolsets": ["payments"]})
    assert (toolset.status_code, toolset.json()) == (400, {"detail": f"toolsets: Not served by {slug}: payments."})
    tool = ops.post(f"/tenants/{slug}/roles/", json={"name": "payers", "tools": ["pay_deposit", "book_table"]})
    assert (tool.status_code, tool.json()) == (400, {"detail": f"tools: No toolset of {slug} has: pay_deposit."})
    assert ops.post(f"/tenants/{slug}/roles/", json={"name": "dup"}).status_code == 201
    again = ops.post(f"/tenants/{slug}/roles/", json={"name": "dup"})
    assert (again.status_code, again.json()) == (400, {"detail": f"{slug} has a role 'dup' already."})
    assert ops.post(f"/tenants/{slug}/roles/", json={"tools": ["book_table"]}).json() == {
        "name": ["This field is required."]
    }
    assert ops.get("/tenants/nowhere/roles/").status_code == 404


def test_another_tenants_role_is_not_found_nor_given(ops: httpx2.Client, slug: str, cast: Cast) -> None:
    theirs = services.role_create(tenant=cast.tenant("other"), name=f"r-{uuid.uuid4().hex[:6]}", tools=[], toolsets=[])
    try:
        assert ops.patch(f"/tenants/{slug}/roles/{theirs.pk}/", json={"tools": ["book_table"]}).status_code == 404
        assert ops.delete(f"/tenants/{slug}/roles/{theirs.pk}/").status_code == 404
        given = ops.put(f"/tenants/{slug}/members/bob/role/", json={"role": theirs.pk})
        assert (given.status_code, given.json()) == (400, {"role": [f"{slug} has no role {theirs.pk}."]})
        assert Role.objects.get(pk=theirs.pk).tools == []
        assert not theirs.holders.exists()
        # mallory is other's member, not this tenant's: no role is given to her here.
        assert ops.put(f"/tenants/{slug}/members/mallory/role/", json={"role": None}).status_code == 404
    finally:
        theirs.delete()


def test_a_userless_token_with_tenants_write_is_refused(server: LiveServer, cast: Cast, slug: str) -> None:
    token = AccessToken.objects.create(
        user=None,
        application=services.script_application(),
        token=secrets.token_urlsafe(32),
        expires=timezone.now() + timedelta(hours=1),
        scope="tenants:write",
    ).token
    with api(server, token) as http:
        seen = [
            (r.status_code, r.json())
            for r in (
                http.get(f"/tenants/{slug}/roles/"),
                http.post(f"/tenants/{slug}/roles/", json={"name": "x"}),
                http.patch(f"/tenants/{slug}/roles/1/", json={"name": "x"}),
                http.delete(f"/tenants/{slug}/roles/1/"),
                http.put(f"/tenants/{slug}/members/bob/role/", json={"role": None}),
            )
        ]
    assert seen == [(401, {"detail": "Authentication credentials were not provided."})] * 5
    assert not Role.objects.filter(tenant__slug=slug).exists()


def test_a_removed_members_role_goes_with_the_membership(ops: httpx2.Client, slug: str) -> None:
    role = ops.post(f"/tenants/{slug}/roles/", json={"name": "bookers", "tools": ["book_table"]}).json()
    assert ops.put(f"/tenants/{slug}/members/bob/role/", json={"role": role["id"]}).status_code == 200

    assert ops.delete(f"/tenants/{slug}/members/bob/").status_code == 204
    assert ops.get(f"/tenants/{slug}/roles/").json()[0]["holders"] == []
    assert ops.post(f"/tenants/{slug}/members/", json={"username": "bob"}).status_code == 201
    assert ops.get(f"/tenants/{slug}/roles/").json()[0]["holders"] == []  # back with no role: every tool
    assert ops.delete(f"/tenants/{slug}/roles/{role['id']}/").status_code == 204  # held by nobody
