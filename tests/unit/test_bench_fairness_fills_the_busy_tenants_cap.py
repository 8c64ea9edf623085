"""Part 6's fairness figure is only what it says if the busy tenant really runs its cap: the long
tasks its members start must fill the tenant's running limit in every task process, with runs
waiting beyond it, and no person's limit may bind first (each process counts its own). Its seed
makes the two tenants the servers serve, with members the token service accepts."""

from __future__ import annotations

import pytest

from mcp_server.registry import load_tenant
from mcpsite import services
from mcpsite.models import Tenant


@pytest.mark.parametrize(("processes", "per_tenant", "per_person", "live"), [(1, 8, 4, 20), (2, 8, 4, 20),
                                                                            (1, 3, 2, 20), (2, 5, 9, 3)])  # fmt: skip
def test_the_busy_tenants_members_start_its_cap_in_every_process_and_more_without_a_persons_limit_binding(
    processes: int, per_tenant: int, per_person: int, live: int
) -> None:
    from bench.fairness import EXTRA, busy_plan

    plan = busy_plan(processes=processes, per_tenant=per_tenant, per_person=per_person, live_per_person=live)

    assert sum(plan) == (per_tenant + EXTRA) * processes
    assert max(plan) <= min(per_person, live)  # each person's runs may all run, in any one process
    assert len(plan) * min(per_person, live) >= per_tenant  # so the tenant's limit is the one that binds


@pytest.mark.django_db
def test_the_fairness_seed_makes_a_busy_and_a_quiet_tenant_serving_long_running_with_their_members() -> None:
    from bench.fairness import BUSY, QUIET, seed

    busy, quiet, members, quiet_member = seed([4, 4, 4])
    busy, quiet, members, quiet_member = seed([4, 4, 4])  # again: nothing doubled

    assert busy.members.count() == 3
    assert list(quiet.members.all()) == [quiet_member]
    assert Tenant.objects.filter(slug__in=[BUSY, QUIET]).count() == 2
    for slug in (BUSY, QUIET):
        info = load_tenant(slug)
        assert info is not None
        assert info.toolsets == ("long_running",)
    assert services.token_issue(tenant=busy, user=members[2], site_root="http://127.0.0.1:1").token
