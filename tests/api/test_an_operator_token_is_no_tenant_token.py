"""An operator API token (a machine client's, or a staff member's with operator scopes) gets
nothing at any tenant's MCP endpoint: a tenant wants the `mcp` scope and an active member."""

from __future__ import annotations

from tests.api.conftest import ALL_SCOPES, machine_client, user_token
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import modern_post


def test_a_machine_clients_token_is_refused_by_every_tenant(server: LiveServer, cast: Cast) -> None:
    token = machine_client(server, "ops").token
    for slug in ("demo", "other"):
        response = modern_post(server.mcp_url(slug), "tools/list", token=token)
        assert response.status_code == 401, slug
        assert 'error="invalid_token"' in response.headers["www-authenticate"]


def test_a_members_token_with_only_operator_scopes_is_refused_with_insufficient_scope(
    server: LiveServer, cast: Cast
) -> None:
    # A member's token for the tenant's own resource, with every operator scope and no `mcp`.
    token = user_token("alice", " ".join(ALL_SCOPES), resource=[server.mcp_url("demo")])
    response = modern_post(server.mcp_url("demo"), "tools/list", token=token)
    assert response.status_code == 403
    assert 'error="insufficient_scope"' in response.headers["www-authenticate"]
