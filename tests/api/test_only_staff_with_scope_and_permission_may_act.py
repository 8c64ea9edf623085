"""Every operator API endpoint refuses whoever may not act: no token (401), a bad token or a tenant's
token (401), an `mcp` token or a token without the endpoint's scope (403 insufficient_scope), staff
without the Django permission (403), a non-staff user holding the scope (403)."""

from __future__ import annotations

from typing import Any

import httpx2

from tests.api.conftest import ALL_SCOPES, api, machine_client, user_token
from tests.conftest import Cast, LiveServer

# (method, path, scope, Django permission) of every endpoint; ids need not exist: refusals come first.
ENDPOINTS = [
    ("GET", "/elicitations/", "approvals:read", "approvals.view_elicitation"),
    ("GET", "/elicitations/el_none/", "approvals:read", "approvals.view_elicitation"),
    ("POST", "/elicitations/el_none/approve/", "approvals:write", "approvals.change_elicitation"),
    ("POST", "/elicitations/el_none/deny/", "approvals:write", "approvals.change_elicitation"),
    ("POST", "/elicitations/el_none/complete/", "approvals:write", "approvals.change_elicitation"),
    ("POST", "/elicitations/el_none/cancel/", "approvals:write", "approvals.change_elicitation"),
    ("POST", "/elicitations/el_none/expire/", "approvals:write", "approvals.change_elicitation"),
    ("GET", "/webhook-deliveries/", "approvals:read", "approvals.view_webhookdelivery"),
    ("GET", "/keys/", "keys:rotate", "mcpsite.view_requeststatekey"),
    ("POST", "/keys/", "keys:rotate", "mcpsite.rotate_requeststatekey"),
    ("POST", "/keys/none/promote/", "keys:rotate", "mcpsite.rotate_requeststatekey"),
    ("POST", "/keys/none/retire/", "keys:rotate", "mcpsite.rotate_requeststatekey"),
    ("GET", "/tenants/", "tenants:write", "mcpsite.view_tenant"),
    ("POST", "/tenants/", "tenants:write", "mcpsite.add_tenant"),
    ("GET", "/tenants/demo/", "tenants:write", "mcpsite.view_tenant"),
    ("PATCH", "/tenants/demo/", "tenants:write", "mcpsite.change_tenant"),
    ("GET", "/tenants/demo/members/", "tenants:write", "mcpsite.view_tenant"),
    ("POST", "/tenants/demo/members/", "tenants:write", "mcpsite.change_tenant"),
    ("DELETE", "/tenants/demo/members/alice/", "tenants:write", "mcpsite.change_tenant"),
    ("GET", "/tenants/demo/roles/", "tenants:write", "mcpsite.view_role"),
    ("POST", "/tenants/demo/roles/", "tenants:write", "mcpsite.add_role"),
    ("PATCH", "/tenants/demo/roles/0/", "tenants:write", "mcpsite.change_role"),
    ("DELETE", "/tenants/demo/roles/0/", "tenants:write", "mcpsite.delete_role"),
    ("PUT", "/tenants/demo/members/alice/role/", "tenants:write", "mcpsite.change_memberrole"),
    ("GET", "/tasks/", "tasks:read", "mcp_tasks.view_task"),
    ("GET", "/tasks/tsk_none/", "tasks:read", "mcp_tasks.view_task"),
    ("POST", "/tasks/tsk_none/cancel/", "tasks:write", "mcp_tasks.cancel_task"),
    ("GET", "/audit/", "audit:read", "audit.view_toolcall"),
    ("GET", "/audit/stream/?since=2026-01-01T00:00:00Z", "audit:read", "audit.view_toolcall"),
]


def answers(http: httpx2.Client, scope: str | None = None) -> list[tuple[str, str, int, Any, str | None]]:
    """(method, path, status, body, WWW-Authenticate) for every endpoint (that needs `scope`), with a
    JSON body where one is sent. Only for refusals: an endpoint that acts would change the cast."""
    seen = []
    for method, path, needs, _ in ENDPOINTS:
        if scope is not None and needs != scope:
            continue
        response = http.request(method, path, json={} if method in {"POST", "PATCH", "PUT"} else None)
        seen.append((method, path, response.status_code, response.json(), response.headers.get("www-authenticate")))
    return seen


def test_no_token_is_answered_401_with_a_bearer_challenge(server: LiveServer, cast: Cast) -> None:
    with api(server) as http:
        assert answers(http) == [
            (m, p, 401, {"detail": "Authentication credentials were not provided."}, 'Bearer realm="api"')
            for m, p, _, _ in ENDPOINTS
        ]


def test_an_unknown_token_is_answered_401_invalid_token(server: LiveServer, cast: Cast) -> None:
    challenge = 'Bearer realm="api",error="invalid_token",error_description="The access token is invalid."'
    with api(server, "not-a-token") as http:
        assert answers(http) == [
            (m, p, 401, {"detail": "Authentication credentials were not provided."}, challenge)
            for m, p, _, _ in ENDPOINTS
        ]


def insufficient(scope: str) -> tuple[int, dict[str, str], str]:
    return (
        403,
        {"detail": f"This needs a token with the {scope!r} scope."},
        f'Bearer realm="api",error="insufficient_scope",scope="{scope}"',
    )


def test_a_members_tenant_token_is_not_valid_for_the_api(server: LiveServer, cast: Cast) -> None:
    """A tenant's token names the tenant's MCP URL as its audience (RFC 8707): DOT refuses it elsewhere."""
    challenge = (
        'Bearer realm="api",error="invalid_token",error_description="The access token is not valid for this resource."'
    )
    with api(server, cast.token(server, "alice")) as http:
        assert answers(http) == [
            (m, p, 401, {"detail": "Authentication credentials were not provided."}, challenge)
            for m, p, _, _ in ENDPOINTS
        ]


def test_a_members_unbound_mcp_token_is_refused_with_insufficient_scope(server: LiveServer, cast: Cast) -> None:
    with api(server, user_token("alice", "mcp")) as http:
        assert answers(http) == [(m, p, *insufficient(scope)) for m, p, scope, _ in ENDPOINTS]


def test_a_token_without_the_endpoints_scope_is_refused_with_insufficient_scope(server: LiveServer, cast: Cast) -> None:
    for scope in ALL_SCOPES:
        others = [s for s in ALL_SCOPES if s != scope]
        with api(server, machine_client(server, "ops", others).token) as http:
            assert answers(http, scope) == [(m, p, *insufficient(s)) for m, p, s, _ in ENDPOINTS if s == scope]


def test_staff_without_the_django_permission_is_refused(server: LiveServer, cast: Cast) -> None:
    with api(server, machine_client(server, "clerk").token) as http:
        assert answers(http) == [
            (m, p, 403, {"detail": f"clerk lacks the {perm!r} permission."}, None) for m, p, _, perm in ENDPOINTS
        ]


def test_a_non_staff_user_holding_every_operator_scope_is_refused(server: LiveServer, cast: Cast) -> None:
    with api(server, user_token("alice", " ".join(ALL_SCOPES))) as http:
        assert answers(http) == [
            (m, p, 403, {"detail": "alice is not an active staff user."}, None) for m, p, _, _ in ENDPOINTS
        ]


def test_an_operator_who_lost_staff_status_is_refused_at_once(server: LiveServer, cast: Cast) -> None:
    operator = machine_client(server, "clerk", ["approvals:read"])
    clerk = cast.user("clerk")
    clerk.is_staff = False
    clerk.save()
    try:
        with api(server, operator.token) as http:
            response = http.get("/elicitations/")
        assert (response.status_code, response.json()) == (403, {"detail": "clerk is not an active staff user."})
        refused = httpx2.post(
            f"{server.url}/o/token/",
            data={"grant_type": "client_credentials"},
            auth=(operator.client_id, operator.secret),
            timeout=10,
        )
        assert (refused.status_code, refused.json()["error"]) == (400, "unauthorized_client")
    finally:
        clerk.is_staff = True
        clerk.save()
