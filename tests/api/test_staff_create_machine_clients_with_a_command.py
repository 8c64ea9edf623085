"""`manage.py operator_client` creates a machine client for a staff user and prints its secret once;
the token endpoint then gives it a token for exactly its scopes. It refuses a non-staff user."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from oauth2_provider.models import Application

from tests.api.conftest import token_request
from tests.conftest import Cast, LiveServer


def test_the_command_prints_a_client_that_gets_its_scopes(server: LiveServer, cast: Cast) -> None:
    out = io.StringIO()
    call_command("operator_client", "--user", "ops", "--scopes", "keys:rotate,approvals:read", stdout=out)
    lines = dict(line.split("=", 1) for line in out.getvalue().splitlines() if "=" in line)
    application = Application.objects.get(client_id=lines["client_id"])
    assert (application.user.username, application.client_type, application.authorization_grant_type) == (
        "ops",
        "confidential",
        "client-credentials",
    )
    assert application.client_secret != lines["client_secret"]  # stored hashed: shown only that once
    granted = token_request(server, lines["client_id"], lines["client_secret"])
    assert (granted.status_code, granted.json()["scope"]) == (200, "approvals:read keys:rotate")


def test_the_command_refuses_a_non_staff_user(cast: Cast) -> None:
    with pytest.raises(CommandError, match=r"alice is not an active staff user\."):
        call_command("operator_client", "--user", "alice", "--scopes", "keys:rotate", stdout=io.StringIO())
