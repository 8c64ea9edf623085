"""Operators set a tenant's own call quotas through the API (``tenants:write``): the tenant's
quota and its per-person quota, in MCP requests per quota window. Every process applies the change
within its tenant-change bound; null goes back to the site's default; a negative quota is refused
with a 400 naming the field."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import httpx2

from tests.api.conftest import api, machine_client
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import modern_post


def until(check: Callable[[], httpx2.Response], status: int, timeout: float = 10.0) -> httpx2.Response:
    """Ask until the answer has `status` (each ask counts against the quota, as it should)."""
    deadline = time.monotonic() + timeout
    while (response := check()).status_code != status:
        assert time.monotonic() < deadline, f"still {response.status_code}: {response.text[:300]}"
        time.sleep(0.1)
    return response


def test_a_per_person_quota_set_through_the_api_takes_effect_and_null_restores_the_default(
    server: LiveServer, cast: Cast
) -> None:
    slug = f"quota-{uuid.uuid4().hex[:6]}"
    with api(server, machine_client(server, "ops", ["tenants:write"]).token) as http:
        assert http.post("/tenants/", json={"slug": slug, "name": "Quota", "toolsets": ["demo"]}).status_code == 201
        assert http.post(f"/tenants/{slug}/members/", json={"username": "alice"}).status_code == 201
        alice = cast.token(server, "alice", slug)
        call = lambda: modern_post(server.mcp_url(slug), "tools/list", token=alice)  # noqa: E731
        until(call, 200)

        changed = http.patch(f"/tenants/{slug}/", json={"call_quota_per_person": 2, "call_quota": 1000})
        assert changed.status_code == 200, changed.text
        assert (changed.json()["call_quota_per_person"], changed.json()["call_quota"]) == (2, 1000)
        refused = until(call, 429)
        assert refused.json()["error"]["data"]["limit"] == 2
        assert refused.json()["error"]["data"]["scope"] == "person"
        assert int(refused.headers["retry-after"]) == refused.json()["error"]["data"]["retryAfter"]

        restored = http.patch(f"/tenants/{slug}/", json={"call_quota_per_person": None})
        assert (restored.json()["call_quota_per_person"], restored.json()["call_quota"]) == (None, 1000)
        until(call, 200)


def test_a_negative_quota_is_refused_with_the_field_named(server: LiveServer, cast: Cast) -> None:
    with api(server, machine_client(server, "ops", ["tenants:write"]).token) as http:
        refused = http.patch("/tenants/demo/", json={"call_quota": -1})
        assert refused.status_code == 400
        assert refused.json() == {"call_quota": ["Ensure this value is greater than or equal to 0."]}
        assert http.get("/tenants/demo/").json()["call_quota"] is None
