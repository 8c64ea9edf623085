"""Operator scopes are minted only for a staff-created machine client of an active staff user, and
only the scopes it was created with; a DCR client, an ordinary client and a non-staff user get none."""

from __future__ import annotations

import httpx2
import pytest
from django.contrib.auth import get_user_model
from oauth2_provider.models import AccessToken, Application

from operator_api.services import OperatorClientRefused, operator_client_create
from tests.api.conftest import machine_client, token_request
from tests.conftest import Cast, LiveServer
from tests.http import signed_in
from tests.oauth.helpers import Pkce, authorize_query, callback_params, register_client


def test_a_dynamically_registered_client_asking_for_an_operator_scope_is_refused(
    server: LiveServer, cast: Cast
) -> None:
    client_id = register_client(server).json()["client_id"]
    staff = signed_in(server, "staff", "staff-password-1")
    query = authorize_query(client_id, server.mcp_url(), Pkce.new(), scope="keys:rotate")
    params = callback_params(staff.get(query))
    assert (params["error"], params["state"]) == ("invalid_scope", "xyz")


def test_client_credentials_stay_refused_for_a_client_that_is_not_an_operator_client(
    server: LiveServer, cast: Cast
) -> None:
    application = Application.objects.create(
        name="staff machine, not an operator client",
        user=cast.user("staff"),
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_CLIENT_CREDENTIALS,
        client_secret="machine-secret-0123456789",
    )
    for scope in ("keys:rotate", "mcp", None):
        response = token_request(server, application.client_id, "machine-secret-0123456789", scope)
        assert (response.status_code, response.json()["error"]) == (400, "unauthorized_client"), scope
    assert not AccessToken.objects.filter(application=application).exists()


def test_an_operator_client_gets_only_its_own_scopes(server: LiveServer, cast: Cast) -> None:
    operator = machine_client(server, "ops", ["keys:rotate"])
    for scope in ("approvals:write", "mcp", "keys:rotate approvals:read"):
        response = token_request(server, operator.client_id, operator.secret, scope)
        assert (response.status_code, response.json()["error"]) == (400, "invalid_scope"), scope
    granted = token_request(server, operator.client_id, operator.secret, "keys:rotate")
    assert (granted.status_code, granted.json()["scope"]) == (200, "keys:rotate")
    assert AccessToken.objects.get(token=granted.json()["access_token"]).user is None  # it acts for its operator


def test_no_machine_client_is_made_for_a_non_staff_user_or_with_other_scopes(cast: Cast) -> None:
    with pytest.raises(OperatorClientRefused, match=r"alice is not an active staff user\."):
        operator_client_create(user=cast.user("alice"), scopes=["keys:rotate"])
    ops = get_user_model().objects.get(username="ops")
    with pytest.raises(OperatorClientRefused, match="got mcp"):
        operator_client_create(user=ops, scopes=["keys:rotate", "mcp"])


def test_the_authorization_server_metadata_still_lists_only_the_mcp_scopes(server: LiveServer) -> None:
    # `mcp` and the scopes tools declare (issue 28 item 1); never an operator scope.
    metadata = httpx2.get(f"{server.url}/.well-known/oauth-authorization-server", timeout=10).json()
    assert metadata["scopes_supported"] == ["files:write", "mcp", "payments"]
