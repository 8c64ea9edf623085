"""requestState is bound to (client id, issuer, subject): resuming a flow as another user, or as the
same user through another client, is refused like any foreign state."""

from __future__ import annotations

import anyio
from oauth2_provider.models import Application

from mcpsite import services
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import text
from tests.mcp.test_request_state import INVALID, first_round, rejected, retry


def other_client() -> Application:
    return Application.objects.create(
        name="another client",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1/callback",
    )


def test_same_user_through_another_client_is_refused(live: LiveServer, cast: Cast) -> None:
    alice, demo = cast.user("alice"), cast.tenant("demo")
    state = anyio.run(first_round, live.mcp_url(), cast.token(live, "alice"))
    elsewhere = services.token_issue(tenant=demo, user=alice, application=other_client(), site_root=live.url).token
    live.mark_log()
    assert rejected(lambda: retry(live.mcp_url(), elsewhere, state)) == INVALID
    live.wait_for_log("requestState rejected on tools/call: principal")


def test_same_user_and_client_with_a_fresh_token_may_resume(live: LiveServer, cast: Cast) -> None:
    """The binding is the principal, not the token: a refreshed token resumes the same flow."""
    state = anyio.run(first_round, live.mcp_url(), cast.token(live, "alice"))
    assert (
        text(anyio.run(retry, live.mcp_url(), cast.token(live, "alice"), state)) == "Provisioned 'orders' in eu-west-1."
    )
