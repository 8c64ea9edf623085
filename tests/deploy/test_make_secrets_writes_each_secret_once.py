"""deploy/make-secrets: the six secret files compose mounts and Kubernetes' Secret is made from,
each random, kept on a second run, in a folder only its owner can read; the settings read them
through ``MCPSITE_<NAME>_FILE``."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT
from tests.deploy.conftest import DEPLOY, SECRET_SETTINGS, SECRETS


def make_secrets(folder: Path, **env: str) -> str:
    done = subprocess.run(
        [str(DEPLOY / "make-secrets"), str(folder)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_it_makes_six_random_secrets_in_a_folder_only_its_owner_reads(tmp_path: Path) -> None:
    folder = tmp_path / "secrets"
    printed = make_secrets(folder)
    assert printed.split() == [word for name in SECRETS for word in ("made", str(folder / name))]
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    values = {name: (folder / name).read_text() for name in SECRETS}
    assert sorted(os.listdir(folder)) == sorted(SECRETS)
    assert all(len(values[n]) >= 64 for n in ("secret_key", "key_encryption_key", "postgres_password"))
    assert len(set(values.values())) == len(SECRETS)
    assert values["database_url"] == f"postgres://mcpsite:{values['postgres_password']}@postgres:5432/mcpsite"
    assert values["redis_url"] == "redis://redis:6379/0"
    assert not any(v.endswith("\n") for v in values.values()), "a secretKeyRef would keep the newline"


def test_a_second_run_keeps_every_secret_it_made(tmp_path: Path) -> None:
    folder = tmp_path / "secrets"
    make_secrets(folder)
    before = {name: (folder / name).read_text() for name in SECRETS}
    assert make_secrets(folder).split()[::2] == ["kept"] * len(SECRETS)
    assert {name: (folder / name).read_text() for name in SECRETS} == before


def test_the_hosts_can_be_named_for_a_cluster(tmp_path: Path) -> None:
    folder = tmp_path / "secrets"
    make_secrets(folder, DATABASE_HOST="db.internal:6432", REDIS_HOST="cache.internal:6380")
    assert (folder / "database_url").read_text().endswith("@db.internal:6432/mcpsite")
    assert (folder / "redis_url").read_text() == "redis://cache.internal:6380/0"


def test_the_settings_read_what_it_made(tmp_path: Path) -> None:
    folder = tmp_path / "secrets"
    make_secrets(folder)
    env = {k: v for k, v in os.environ.items() if k not in SECRET_SETTINGS}
    env |= {f"{setting}_FILE": str(folder / name) for setting, name in SECRET_SETTINGS.items()}
    code = (
        "from django.conf import settings as s; "
        "print(s.SECRET_KEY, s.MCPSITE['KEY_ENCRYPTION_KEY'], s.APPROVALS['SANDBOX_WEBHOOK_SECRET'], "
        "s.DATABASES['default']['HOST'], s.REDIS_URL)"
    )
    done = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    read = {name: (folder / name).read_text() for name in SECRETS}
    assert done.stdout.split() == [
        read["secret_key"],
        read["key_encryption_key"],
        read["sandbox_webhook_secret"],
        "postgres",
        "redis://redis:6379/0",
    ]
