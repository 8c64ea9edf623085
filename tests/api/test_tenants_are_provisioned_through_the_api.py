"""Operators provision tenants through the API: create one, add a member who can then call it,
change its toolsets, disable and enable it, and remove the member, whose token then stops working."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import httpx2

from tests.api.conftest import api, machine_client
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import modern_post


def eventually(check: Callable[[], httpx2.Response], status: int, timeout: float = 10.0) -> httpx2.Response:
    """Every process hears of a tenant change within a second (or its poll): ask until it has."""
    deadline = time.monotonic() + timeout
    while (response := check()).status_code != status:
        assert time.monotonic() < deadline, f"still {response.status_code}: {response.text[:300]}"
        time.sleep(0.1)
    return response


def test_a_tenant_is_created_served_changed_and_its_member_removed(server: LiveServer, cast: Cast) -> None:
    slug = f"prov-{uuid.uuid4().hex[:6]}"
    with api(server, machine_client(server, "ops", ["tenants:write"]).token) as http:
        created = http.post("/tenants/", json={"slug": slug, "name": "Provisioned", "toolsets": ["demo"]})
        assert created.status_code == 201, created.text
        assert {k: created.json()[k] for k in ("slug", "enabled", "public", "toolsets", "members", "endpoint")} == {
            "slug": slug,
            "enabled": True,
            "public": False,
            "toolsets": ["demo"],
            "members": [],
            "endpoint": f"{server.url}/t/{slug}/mcp",
        }
        assert http.post(f"/tenants/{slug}/members/", json={"username": "bob"}).status_code == 201
        assert http.get(f"/tenants/{slug}/members/").json() == [{"username": "bob"}]
        token = cast.token(server, "bob", slug)
        eventually(lambda: modern_post(server.mcp_url(slug), "tools/list", token=token), 200)

        changed = http.patch(f"/tenants/{slug}/", json={"toolsets": ["demo", "payments"]})
        assert (changed.status_code, changed.json()["toolsets"]) == (200, ["demo", "payments"])
        assert http.patch(f"/tenants/{slug}/", json={"enabled": False}).json()["enabled"] is False
        # A disabled tenant answers as a private one answers a stranger: its existence is not told.
        eventually(lambda: modern_post(server.mcp_url(slug), "tools/list", token=token), 401)
        assert http.patch(f"/tenants/{slug}/", json={"enabled": True}).json()["enabled"] is True
        eventually(lambda: modern_post(server.mcp_url(slug), "tools/list", token=token), 200)

        assert http.delete(f"/tenants/{slug}/members/bob/").status_code == 204
        assert http.get(f"/tenants/{slug}/members/").json() == []
    refused = modern_post(server.mcp_url(slug), "tools/list", token=token)  # revoked in every process at once
    assert refused.status_code == 401
    assert 'error="invalid_token"' in refused.headers["www-authenticate"]


def test_bad_tenant_changes_are_refused_with_the_reason(server: LiveServer, cast: Cast) -> None:
    with api(server, machine_client(server, "ops", ["tenants:write"]).token) as http:
        taken = http.post("/tenants/", json={"slug": "demo", "name": "Again"})
        assert (taken.status_code, taken.json()) == (400, {"detail": "A tenant 'demo' exists already."})
        unknown = http.post("/tenants/", json={"slug": f"t-{uuid.uuid4().hex[:6]}", "name": "X", "toolsets": ["nope"]})
        assert unknown.status_code == 400
        assert unknown.json()["detail"].startswith("Unknown toolsets: nope. Known: ")
        bad_slug = http.post("/tenants/", json={"slug": "Not A Slug", "name": "X"})
        assert bad_slug.status_code == 400
        assert bad_slug.json()["detail"].startswith("slug: ")
        assert http.patch("/tenants/demo/", json={"toolsets": ["nope"]}).status_code == 400
        assert http.post("/tenants/demo/members/", json={"username": "nobody"}).status_code == 404
        assert http.get("/tenants/nowhere/").status_code == 404
