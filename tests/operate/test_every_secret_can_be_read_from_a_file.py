"""Every secret setting can be given as ``NAME_FILE=/path`` (a mounted secret) instead of ``NAME``:
a server given all of them so starts, is ready and serves; both forms at once, or a file that
cannot be read, is refused at start-up naming the variable."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from tests.conftest import ROOT, LiveServer, free_port

SECRETS = (
    "MCPSITE_SECRET_KEY",
    "MCPSITE_KEY_ENCRYPTION_KEY",
    "MCPSITE_SANDBOX_WEBHOOK_SECRET",
    "MCPSITE_DATABASE_URL",
    "MCPSITE_REDIS_URL",
)


def from_files(env: dict[str, str], directory: Path) -> dict[str, str]:
    """`env` with each secret moved into a file of its own, newline-terminated as `echo` writes it."""
    moved = dict(env)
    for name in SECRETS:
        path = directory / name.lower()
        path.write_text(moved.pop(name) + "\n")
        path.chmod(0o600)
        moved[f"{name}_FILE"] = str(path)
    return moved


def test_a_server_given_every_secret_as_a_file_is_ready(
    tmp_path: Path, database_url_for_servers: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    port = free_port()
    env = {
        **os.environ,
        "PORT": str(port),
        "MCPSITE_SITE_ROOT": f"http://127.0.0.1:{port}",
        "MCPSITE_DATABASE_URL": database_url_for_servers,
        "MCPSITE_TASKS_IN_PROCESS": "1",
    }
    server = LiveServer(
        port=port, env=from_files(env, tmp_path), log_path=tmp_path_factory.mktemp("server") / "server.log"
    )
    server.start()
    try:
        response = httpx2.get(f"{server.url}/readyz", timeout=10)
    finally:
        server.stop()

    # The database, Redis and broker reached with the URLs from files; the key ring opened with the
    # key-encryption key from its file (the same the suite's rows were sealed under).
    assert response.status_code == 200, response.text
    assert [check["name"] for check in response.json()["checks"]] == [
        "database",
        "migrations",
        "keyring",
        "redis",
        "broker",
    ]


SHOW = (
    "from django.conf import settings; print(settings.SECRET_KEY); print(settings.MCPSITE['KEY_ENCRYPTION_KEY']);"
    " print(settings.APPROVALS['SANDBOX_WEBHOOK_SECRET']); print(settings.REDIS_URL)"
)


def test_the_settings_read_the_same_value_from_a_file(tmp_path: Path) -> None:
    env = from_files(dict(os.environ), tmp_path)
    shown = subprocess.run(
        [sys.executable, "manage.py", "shell", "-v0", "-c", SHOW],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == [
        os.environ["MCPSITE_SECRET_KEY"],
        os.environ["MCPSITE_KEY_ENCRYPTION_KEY"],
        os.environ["MCPSITE_SANDBOX_WEBHOOK_SECRET"],
        os.environ["MCPSITE_REDIS_URL"],
    ]


def start_refused(env: dict[str, str]) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "mcp_server.serve", "--port", str(free_port())],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    return result.stderr


def test_both_a_secret_and_its_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "kek"
    path.write_text("another-key-encryption-key-0123456789abcdef")
    env = {**os.environ, "MCPSITE_KEY_ENCRYPTION_KEY_FILE": str(path)}

    error = start_refused(env)

    assert (
        "ImproperlyConfigured: MCPSITE_KEY_ENCRYPTION_KEY and MCPSITE_KEY_ENCRYPTION_KEY_FILE are both set: set one"
        in error
    )


def test_a_secret_file_that_cannot_be_read_is_refused(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key != "MCPSITE_SECRET_KEY"}
    env["MCPSITE_SECRET_KEY_FILE"] = str(tmp_path / "missing")

    error = start_refused(env)

    assert f"MCPSITE_SECRET_KEY_FILE: cannot read {tmp_path / 'missing'}: No such file or directory" in error
