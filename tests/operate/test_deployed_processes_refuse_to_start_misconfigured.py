"""Deployed (any database but the embedded default's), the web process and the Celery worker refuse
to start without ``MCPSITE_KEY_ENCRYPTION_KEY``, with the sandbox provider's default secret, or
with loopback notifications allowed, naming each; ``manage.py check --deploy`` lists the same."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, free_port
from tests.operate.conftest import production_env


def misconfigured_env() -> dict[str, str]:
    env = production_env(MCPSITE_NOTIFICATIONS_ALLOW_LOOPBACK="1")
    del env["MCPSITE_KEY_ENCRYPTION_KEY"], env["MCPSITE_SANDBOX_WEBHOOK_SECRET"]
    return env


def assert_names_each_refusal(output: str) -> None:
    assert "(mcpsite.E001) MCPSITE_KEY_ENCRYPTION_KEY is not set" in output, output
    assert "(mcpsite.E003) MCPSITE_SANDBOX_WEBHOOK_SECRET is not set" in output, output
    assert "(mcpsite.E004) MCPSITE_NOTIFICATIONS_ALLOW_LOOPBACK is on" in output, output


def test_check_deploy_fails_naming_each_missing_or_default_secret() -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=ROOT,
        env=misconfigured_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 1
    assert_names_each_refusal(result.stderr)


def test_the_web_process_refuses_to_start_and_listens_nowhere() -> None:
    port = free_port()
    result = subprocess.run(
        [sys.executable, "-m", "mcp_server.serve", "--port", str(port)],
        cwd=ROOT,
        env=misconfigured_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 1
    assert "refusing to start deployed (manage.py check --deploy):" in result.stderr
    assert_names_each_refusal(result.stderr)
    assert "Uvicorn running" not in result.stderr


@pytest.mark.parametrize("command", [["worker", "--pool", "solo"], ["beat"]])
def test_a_celery_worker_or_beat_refuses_to_start(command: list[str], tmp_path: Path) -> None:
    if command == ["beat"]:
        command = [*command, "--schedule", str(tmp_path / "schedule")]  # not in the checkout
    result = subprocess.run(
        [sys.executable, "-m", "celery", "-A", "config", *command, "--loglevel", "INFO"],
        cwd=ROOT,
        env=misconfigured_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode != 0
    assert_names_each_refusal(result.stdout + result.stderr)


def test_a_check_the_operator_acknowledges_does_not_refuse() -> None:
    """Django's own way to accept a check: ``MCPSITE_SILENCED_SYSTEM_CHECKS`` (the suite's loopback receivers)."""
    env = production_env(MCPSITE_NOTIFICATIONS_ALLOW_LOOPBACK="1", MCPSITE_SILENCED_SYSTEM_CHECKS="mcpsite.E004")
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--tag", "mcpsite"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stderr
    assert "1 silenced" in result.stdout
