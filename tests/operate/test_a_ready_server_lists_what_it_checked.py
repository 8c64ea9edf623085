"""``/readyz`` answers 200 with every check it made, each passing; ``/healthz`` stays a bare "ok"."""

from __future__ import annotations

from collections.abc import Callable

import httpx2

from tests.conftest import LiveServer


def test_a_deployed_server_is_ready_with_database_migrations_keyring_redis_and_broker(live: LiveServer) -> None:
    response = httpx2.get(f"{live.url}/readyz", timeout=10)

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "ready"
    assert body["failing"] == []
    assert [(check["name"], check["ok"]) for check in body["checks"]] == [
        ("database", True),
        ("migrations", True),
        ("keyring", True),
        ("redis", True),
        ("broker", True),
    ]
    assert response.headers["cache-control"] == "no-store"


def test_without_redis_no_redis_or_broker_check_is_listed(
    server_factory: Callable[..., LiveServer], sqlite_env: dict[str, str]
) -> None:
    server = server_factory(MCPSITE_DATABASE_URL=sqlite_env["MCPSITE_DATABASE_URL"], MCPSITE_REDIS_URL="")
    try:
        response = httpx2.get(f"{server.url}/readyz", timeout=10)
    finally:
        server.stop()

    assert response.status_code == 200, response.text
    assert [check["name"] for check in response.json()["checks"]] == ["database", "migrations", "keyring"]


def test_healthz_answers_ok_and_checks_nothing(live: LiveServer) -> None:
    response = httpx2.get(f"{live.url}/healthz", timeout=10)

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
