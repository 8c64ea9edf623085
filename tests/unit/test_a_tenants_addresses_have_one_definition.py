"""A tenant's endpoint path, resource URL and audience are each spelt in one place
(`mcpsite.tenancy`; the audience, which a running server knows, in `tools_app.tenant`), and the
row, the running server's info and the server agree with them."""

from __future__ import annotations

import re
from pathlib import Path

from django.conf import settings

from mcpsite.models import Tenant
from mcpsite.tenancy import tenant_mcp_path, tenant_resource_url, tenant_slug_of_path, tenant_slug_of_resource
from tests.packages import OURS
from tools_app.tenant import TenantInfo, tenant_audience

ROOT = Path(__file__).resolve().parents[2]
# an f-string building `/t/<slug>/mcp` or `mcpsite:<slug>`
SPELLINGS = re.compile(r"""f["'][^"']*(/t/\{|mcpsite:\{[^}]*slug)""")


def test_the_addresses_are_what_clients_and_tokens_use() -> None:
    assert tenant_mcp_path("acme") == "/t/acme/mcp"
    assert tenant_resource_url("acme") == f"{settings.SITE_ROOT}/t/acme/mcp"
    assert tenant_resource_url("acme", "https://mcp.example/") == "https://mcp.example/t/acme/mcp"
    assert tenant_audience("acme") == "mcpsite:acme"


def test_the_addresses_read_back_to_their_slug_and_nothing_else_does() -> None:
    assert tenant_slug_of_path(tenant_mcp_path("acme")) == "acme"
    assert tenant_slug_of_resource(tenant_resource_url("acme")) == "acme"
    assert tenant_slug_of_resource("https://mcp.example/t/acme/mcp", "https://mcp.example/") == "acme"
    for path in ("/t/acme/mcp/", "/t//mcp", "/t/a/b/mcp", "/t/acme", "/x/acme/mcp", "/t/acme/mcpx"):
        assert tenant_slug_of_path(path) is None, path
    for resource in (
        "https://elsewhere.example/t/acme/mcp",
        f"{settings.SITE_ROOT}/t/acme/mcp?x=1",
        f"{settings.SITE_ROOT}t/acme/mcp",
        "/t/acme/mcp",
    ):
        assert tenant_slug_of_resource(resource) is None, resource


def test_the_row_and_the_running_server_agree_with_the_one_definition() -> None:
    row = Tenant(slug="acme")
    info = TenantInfo(id=1, slug="acme", name="Acme", public=False, toolsets=(), version="v1")
    assert (row.mcp_path, row.resource_url(), row.audience) == (
        "/t/acme/mcp",
        tenant_resource_url("acme"),
        "mcpsite:acme",
    )
    assert info.audience == "mcpsite:acme"


def test_no_other_module_spells_a_tenants_address() -> None:
    spelt = [
        f"{path.relative_to(ROOT)}:{number}"
        for package in OURS
        for path in sorted((ROOT / package).rglob("*.py"))
        if path not in (ROOT / "mcpsite" / "tenancy.py", ROOT / "tools_app" / "tenant.py")
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if SPELLINGS.search(line)
    ]
    assert spelt == []
