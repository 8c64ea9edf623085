"""A boolean setting spelt wrong is refused at start-up, naming the variable and what it accepts,
instead of being read as false (``MCPSITE_DEBUG=ture`` used to mean "off")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool

ACCEPTED = "1, true, yes, on, 0, false, no, off (any case; empty is false)"


def test_an_unknown_boolean_is_refused_with_the_variable_and_the_accepted_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MCPSITE_OTEL_SPANS", "ture")
    with pytest.raises(ImproperlyConfigured) as refused:
        env_bool("MCPSITE_OTEL_SPANS", False)
    assert str(refused.value) == f"MCPSITE_OTEL_SPANS: expected one of {ACCEPTED}, got 'ture'"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1", True),
        ("TRUE", True),
        (" yes ", True),
        ("On", True),
        ("0", False),
        ("False", False),
        ("no", False),
        ("off", False),
        ("", False),
    ],
)
def test_the_accepted_booleans_read_as_before(monkeypatch: pytest.MonkeyPatch, value: str, expected: bool) -> None:
    monkeypatch.setenv("MCPSITE_OTEL_SPANS", value)
    assert env_bool("MCPSITE_OTEL_SPANS", not expected) is expected


def test_an_unset_boolean_is_its_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCPSITE_OTEL_SPANS", raising=False)
    assert env_bool("MCPSITE_OTEL_SPANS", True) is True


def test_the_site_does_not_start_with_an_unknown_boolean() -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "MCPSITE_DEBUG": "maybe"}
    started = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert started.returncode == 1
    last = started.stderr.strip().splitlines()[-1]
    assert (
        last == f"django.core.exceptions.ImproperlyConfigured: MCPSITE_DEBUG: expected one of {ACCEPTED}, got 'maybe'"
    )
