"""A server on a database with a migration not applied (rolled back here; or new code started
before its ``migrate`` ran) answers ``/readyz`` with 503 naming ``migrations`` and the first
missing one, and is ready once the database is migrated."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx2

from tests.conftest import LiveServer
from tests.operate.conftest import manage


def test_a_rolled_back_migration_makes_readyz_503_until_migrate_runs(
    server_factory: Callable[..., LiveServer], sqlite_env: dict[str, str]
) -> None:
    manage("migrate", "mcp_tasks", "0002_task_client_address", "-v0", env=sqlite_env)
    server = server_factory(MCPSITE_DATABASE_URL=sqlite_env["MCPSITE_DATABASE_URL"], MCPSITE_REDIS_URL="")
    try:
        response = httpx2.get(f"{server.url}/readyz", timeout=10)

        assert response.status_code == 503, response.text
        body = response.json()
        assert body["failing"] == ["migrations"]
        checks = {check["name"]: check for check in body["checks"]}
        assert checks["migrations"]["detail"] == "1 not applied, first mcp_tasks.0003_task_waits_on"
        assert checks["database"]["ok"] and checks["keyring"]["ok"]

        manage("migrate", "--noinput", "-v0", env=sqlite_env)
        deadline = time.monotonic() + 10
        while (again := httpx2.get(f"{server.url}/readyz", timeout=10)).status_code != 200:
            assert time.monotonic() < deadline, again.text
            time.sleep(0.2)
    finally:
        server.stop()
