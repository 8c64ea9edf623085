"""A server whose Redis (its channel layer, cache and Celery broker) stops answers ``/readyz``
with 503 naming ``redis`` and ``broker``, within the checks' timeout, and is ready again once
Redis is back."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

import httpx2

from mcpsite.readiness import TIMEOUT_SECONDS
from tests.conftest import LiveServer
from tests.operate.conftest import OwnRedis


def test_stopping_redis_makes_readyz_503_naming_redis_and_broker(
    server_factory: Callable[..., LiveServer], own_redis: OwnRedis
) -> None:
    server = server_factory(MCPSITE_REDIS_URL=own_redis.url)
    try:
        assert httpx2.get(f"{server.url}/readyz", timeout=10).status_code == 200

        own_redis.stop()
        begun = time.monotonic()
        response = httpx2.get(f"{server.url}/readyz", timeout=10)
        took = time.monotonic() - begun

        assert response.status_code == 503, response.text
        body = response.json()
        assert body["status"] == "unready"
        assert body["failing"] == ["redis", "broker"]
        checks = {check["name"]: check for check in body["checks"]}
        assert checks["redis"] == {"name": "redis", "ok": False, "detail": checks["redis"]["detail"]}
        assert checks["redis"]["detail"].startswith("unreachable (")
        assert checks["database"]["ok"] and checks["migrations"]["ok"] and checks["keyring"]["ok"]
        # Nothing of where Redis is: the answer is public.
        assert str(own_redis.port) not in response.text
        assert took < 2 * TIMEOUT_SECONDS + 2

        restarted = subprocess.Popen(
            ["redis-server", "--port", str(own_redis.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 10
            while (again := httpx2.get(f"{server.url}/readyz", timeout=10)).status_code != 200:
                assert time.monotonic() < deadline, again.text
                time.sleep(0.2)
        finally:
            restarted.terminate()
            restarted.wait(timeout=10)
    finally:
        server.stop()
