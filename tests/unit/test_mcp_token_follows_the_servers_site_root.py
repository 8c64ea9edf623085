"""`manage.py mcp_token --port N` (PORT unset) mints a token the server on port N accepts, and
says which site root the token is bound to."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.test import override_settings

from tests.conftest import Cast, LiveServer
from tests.mcp.clients import modern_post


def test_a_token_minted_for_the_servers_port_is_accepted_there(live: LiveServer, cast: Cast) -> None:
    out = StringIO()
    # The command's own settings are the embedded default's (PORT unset: :8000).
    with override_settings(SITE_ROOT="http://127.0.0.1:8000"):
        call_command("mcp_token", "--tenant", "demo", "--user", "alice", "--port", str(live.port), stdout=out)
    lines = out.getvalue().strip().splitlines()
    assert lines[0] == f"# for http://127.0.0.1:{live.port}/t/demo/mcp (site root from --port) as alice"
    response = modern_post(live.mcp_url(), "tools/list", token=lines[-1])
    assert response.status_code == 200, response.text


@pytest.mark.django_db
def test_without_options_the_token_names_the_configured_site_root() -> None:
    out = StringIO()
    with override_settings(SITE_ROOT="http://mcp.example"):
        call_command("mcp_token", "--tenant", "demo", "--user", "alice", stdout=out)
    assert (
        out.getvalue().splitlines()[0]
        == "# for http://mcp.example/t/demo/mcp (site root from MCPSITE_SITE_ROOT / PORT) as alice"
    )
