"""The migration's second step (compose's `migrate`, the Kubernetes Job): ``manage.py keyring_init``
makes the first requestState key on a new database, and on every later run finds it and makes none."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def manage(*args: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_keyring_init_makes_one_minting_key_and_keeps_it(tmp_path: Path) -> None:
    env = {**os.environ, "MCPSITE_DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", "MCPSITE_REDIS_URL": ""}
    manage("migrate", "--noinput", "-v0", env=env)
    first = manage("keyring_init", env=env)
    assert re.fullmatch(r"minting key \S+\n", first), first
    assert manage("keyring_init", env=env) == first
    count = "from mcpsite.models import RequestStateKey as K; print(K.objects.count(), K.objects.get().phase)"
    assert manage("shell", "-c", count, env=env).splitlines()[-1].split() == ["1", "minting"]
