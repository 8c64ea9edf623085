from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from oauth2_provider.models import AccessToken

from demo.models import File, Folder
from mcpsite.models import RequestStateKey, Tenant

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_mcp_token_prints_a_token_bound_to_the_tenant_resource() -> None:
    token = run("mcp_token", "--tenant", "demo", "--user", "alice").strip().splitlines()[-1]
    stored = AccessToken.objects.get(token=token)
    assert stored.user.username == "alice"
    assert stored.resource == ["http://127.0.0.1:8000/t/demo/mcp"] or stored.resource[0].endswith("/t/demo/mcp")
    assert stored.scope == "mcp files:write"  # every scope of the demo tenant's tools


def test_mcp_token_refuses_a_non_member() -> None:
    with pytest.raises(CommandError, match="not a member of tenant demo"):
        run("mcp_token", "--tenant", "demo", "--user", "mallory")


def test_mcp_token_names_an_unknown_tenant_and_the_tenants_there_are() -> None:
    with pytest.raises(CommandError) as refused:
        run("mcp_token", "--tenant", "nope", "--user", "alice")
    listed = str(refused.value).split("Tenants: ")[1].split(" (")[0]
    first = Tenant.objects.order_by("slug").first()
    assert str(refused.value).startswith("No tenant 'nope'.") and first is not None and listed.startswith(first.slug)


def test_mcp_token_names_an_unknown_user_and_says_how_to_make_one() -> None:
    with pytest.raises(CommandError) as refused:
        run("mcp_token", "--tenant", "demo", "--user", "zoe")
    assert "No user named 'zoe'" in str(refused.value)
    assert "manage.py createsuperuser --username zoe" in str(refused.value)
    assert "member of the tenant" in str(refused.value)


def test_operator_client_names_an_unknown_user_and_the_staff_there_are() -> None:
    with pytest.raises(CommandError) as refused:
        run("operator_client", "--user", "ops-nobody", "--scopes", "keys:rotate")
    assert "No user named 'ops-nobody'. Staff users: " in str(refused.value)
    assert "staff" in str(refused.value).split("Staff users: ")[1]  # the cast's superuser is listed
    assert "manage.py createsuperuser --username ops-nobody" in str(refused.value)


def test_seed_demo_is_idempotent() -> None:
    first = run("seed_demo")
    counts = (Tenant.objects.count(), Folder.objects.count(), File.objects.count(), RequestStateKey.objects.count())
    second = run("seed_demo")
    assert counts == (
        Tenant.objects.count(),
        Folder.objects.count(),
        File.objects.count(),
        RequestStateKey.objects.count(),
    )
    demo = Tenant.objects.get(slug="demo")
    assert {"demo", "payments", "long_running"} <= set(demo.toolsets)  # the Tasks toolset runs out of the box
    assert set(Folder.objects.filter(tenant=demo).values_list("path", flat=True)) >= {"/tmp/empty", "/tmp/project"}
    assert set(File.objects.filter(folder__path="/tmp/project").values_list("name", flat=True)) == {
        "main.py",
        "README.md",
    }
    assert not File.objects.filter(folder__path="/tmp/empty").exists()
    for output in (first, second):
        assert "/t/demo/mcp" in output
        token = output.split("Bearer token (user demo): ")[1].split()[0]
        assert AccessToken.objects.filter(token=token, user__username="demo").exists()
