"""`manage.py mcp_token` mints a token with every scope of the tenant's tools by default (so the
README's flows call every tool), or with the scopes ``--scope`` names; it refuses a scope that is
not an MCP scope of this site (an operator scope included) and a set without ``mcp``."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from oauth2_provider.models import AccessToken


def mint(*args: str) -> AccessToken:
    out = StringIO()
    call_command("mcp_token", "--tenant", "demo", "--user", "alice", *args, stdout=out)
    lines = out.getvalue().strip().splitlines()
    token = AccessToken.objects.get(token=lines[-1])
    assert f"# scope {token.scope!r}" in lines
    return token


@pytest.mark.django_db
def test_by_default_the_token_carries_every_scope_of_the_tenants_tools() -> None:
    assert mint().scope == "mcp files:write"


@pytest.mark.django_db
def test_scope_names_the_scopes_it_carries() -> None:
    assert mint("--scope", "mcp").scope == "mcp"
    assert mint("--scope", "mcp  files:write").scope == "mcp files:write"


@pytest.mark.django_db
@pytest.mark.parametrize("scope", ["tenants:write", "mcp keys:rotate", "mcp made:up"])
def test_a_scope_that_is_not_an_mcp_scope_is_refused(scope: str) -> None:
    before = AccessToken.objects.count()
    with pytest.raises(CommandError, match="is not an MCP scope of this site"):
        mint("--scope", scope)
    assert AccessToken.objects.count() == before


@pytest.mark.django_db
def test_a_scope_set_without_mcp_is_refused() -> None:
    with pytest.raises(CommandError, match="every call needs 'mcp'"):
        mint("--scope", "files:write")
