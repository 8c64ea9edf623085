"""On the embedded default (the SQLite file in var/), `seed_demo` (run by `scripts/run`) makes a
staff sign-in and gives the demo member a password, each generated, stored hashed and printed
once; a second run says they exist and how to reset them. With a deployed database it prints none.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from tests.conftest import ROOT

SIGN_IN = re.compile(r"^(Staff|Member) sign-in .*?: (\w+) / (\S+)   \(shown only now; stored hashed\)$", re.M)


def manage(var: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in {"MCPSITE_DATABASE_URL", "MCPSITE_REDIS_URL"}}
    env |= {"MCPSITE_VAR_DIR": str(var), "PORT": "8123"}
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_first_run_prints_each_sign_in_once_and_the_second_says_how_to_reset(tmp_path: Path) -> None:
    manage(tmp_path, "migrate", "--noinput", "-v0")

    first = manage(tmp_path, "seed_demo")
    second = manage(tmp_path, "seed_demo")

    made = {kind: (name, password) for kind, name, password in SIGN_IN.findall(first)}
    assert made.keys() == {"Staff", "Member"}, first
    assert made["Staff"][0] == "admin" and made["Member"][0] == "demo"
    assert "Staff sign-in (admin: http://127.0.0.1:8123/admin/)" in first
    assert SIGN_IN.findall(second) == []
    for name, password in made.values():
        assert password not in second
        assert f"{name} exists; its password was shown once" in second
        assert f"manage.py changepassword {name}" in second
    checked = manage(
        tmp_path,
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model; U = get_user_model(); "
        f"a = U.objects.get(username='admin'); d = U.objects.get(username='demo'); "
        f"print(a.is_staff, a.is_superuser, a.check_password({made['Staff'][1]!r}), "
        f"d.is_staff, d.check_password({made['Member'][1]!r}), {made['Member'][1]!r} in d.password)",
    )
    assert checked.splitlines()[-1].split() == [
        "True",
        "True",
        "True",
        "False",
        "True",
        "False",
    ]  # hashed, not stored as given


@pytest.mark.django_db
def test_a_deployed_database_gets_no_sign_in() -> None:
    out = StringIO()
    call_command("seed_demo", stdout=out)

    assert "sign-in" not in out.getvalue()
    assert not get_user_model().objects.filter(username="admin").exists()
    assert not get_user_model().objects.get(username="demo").has_usable_password()
