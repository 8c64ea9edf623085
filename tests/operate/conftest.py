"""What the readiness tests share: a Redis of their own (to stop), and a SQLite database of their
own (to roll a migration back on), each beside the suite's; what the log tests share: a server
writing JSON logs."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.conftest import ROOT, LiveServer, database_url, free_port


@dataclass
class OwnRedis:
    port: int
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[OwnRedis]:
    port = free_port()
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
    )
    server = OwnRedis(port=port, process=process)
    deadline = time.monotonic() + 10
    while True:
        try:
            redis.Redis(port=port, socket_connect_timeout=1).ping()
            break
        except redis.ConnectionError:
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)
    yield server
    server.stop()


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``manage.py <args>`` in a subprocess with `env`; fails the test with its output if it fails."""
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.fixture
def sqlite_env(tmp_path: Path) -> dict[str, str]:
    """A fresh SQLite database, migrated, with a minting key, and no Redis: the embedded default's parts."""
    env = {
        **os.environ,
        "MCPSITE_DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "MCPSITE_REDIS_URL": "",
    }
    manage("migrate", "--noinput", "-v0", env=env)
    manage("shell", "-c", "from mcpsite.keyring import keyring_ensure_minting; keyring_ensure_minting()", env=env)
    return env


def production_env(**overrides: str) -> dict[str, str]:
    """What a deployment sets: PostgreSQL, Redis, an https site root behind a trusted proxy, every
    secret its own random value, and nothing the suite allows itself (loopback notifications)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"MCPSITE_NOTIFICATIONS_ALLOW_LOOPBACK", "MCPSITE_SILENCED_SYSTEM_CHECKS"}
    }
    env.update(
        {
            "MCPSITE_SITE_ROOT": "https://mcp.example.com",
            "MCPSITE_ALLOWED_HOSTS": "mcp.example.com",
            "MCPSITE_TRUSTED_PROXIES": "10.0.0.1",
            "MCPSITE_SECRET_KEY": secrets.token_urlsafe(50),
            "MCPSITE_KEY_ENCRYPTION_KEY": secrets.token_urlsafe(48),
            "MCPSITE_SANDBOX_WEBHOOK_SECRET": f"whsec_{secrets.token_hex(32)}",
        }
    )
    env.update(overrides)
    return env


@pytest.fixture
def database_url_for_servers(django_db_setup: None) -> str:
    """The suite's test database, as the live servers are given it."""
    return database_url()


# The log tests' server believes forwarded headers, and so X-Request-ID, from 127.0.0.2 only: a
# client on 127.0.0.1 is an outsider, one on 127.0.0.2 stands for the proxy.
PROXY_ADDRESS = "127.0.0.2"


@pytest.fixture(scope="package")
def json_server(server_factory: Callable[..., LiveServer]) -> Iterator[LiveServer]:
    server = server_factory(MCPSITE_LOG_FORMAT="json", MCPSITE_TRUSTED_PROXIES=PROXY_ADDRESS)
    yield server
    server.stop()


def json_lines(text: str) -> list[dict[str, Any]]:
    """Every line a server wrote, each parsed as one JSON object (a line that is not one fails)."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]
