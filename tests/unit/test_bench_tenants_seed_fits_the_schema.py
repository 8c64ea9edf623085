"""Part 6 of the benchmark seeds up to 100,000 tenants in bulk, outside the services (no signal,
no validation): a tenant column added without a default would stop the whole `bench/run`.
Seeding a few here keeps the benchmark's seed in step with the schema the migrations build, and
the tenants it makes servable as the registry reads them."""

from __future__ import annotations

import pytest

from mcp_server.registry import load_tenant
from mcpsite.models import Tenant


@pytest.mark.django_db
def test_the_tenants_seed_makes_exactly_the_tenants_asked_for_and_they_are_served() -> None:
    from bench.tenants import TOOLSETS, seed, slug

    assert seed(40) == 40
    assert seed(40) == 40  # again: nothing added
    assert seed(12) == 12  # fewer: the last ones go, the first stay

    rows = Tenant.objects.filter(slug__startswith="bt-")
    assert sorted(rows.values_list("slug", flat=True)) == [slug(n) for n in range(12)]
    info = load_tenant(slug(11))
    assert info is not None
    assert info.public
    assert info.toolsets == tuple(TOOLSETS)
