"""Who writes the audit rows (``MCPSITE_AUDIT_WRITER``): by default the beat's drain where there is
Redis, the serving process's writer thread where there is not; a drain asked for without Redis, or
a word it does not know, is refused at start-up with the variable named, not run with rows piling
up nowhere."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOW = "import django; django.setup(); from django.conf import settings; print(settings.AUDIT['WRITER'])"


def start(**env: str | None) -> subprocess.CompletedProcess[str]:
    """A process of the site set up with `env` (None: unset), printing the writer it chose."""
    merged = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    for name, value in env.items():
        if value is None:
            merged.pop(name, None)
        else:
            merged[name] = value
    return subprocess.run(
        [sys.executable, "-c", SHOW], env=merged, cwd=ROOT, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(("redis", "writer"), [(os.environ["MCPSITE_REDIS_URL"], "redis"), (None, "process")])
def test_by_default_the_drain_writes_where_there_is_redis(redis: str | None, writer: str) -> None:
    started = start(MCPSITE_AUDIT_WRITER=None, MCPSITE_REDIS_URL=redis)
    assert started.returncode == 0, started.stderr
    assert started.stdout.split() == [writer]


@pytest.mark.parametrize(
    ("redis", "value", "refusal"),
    [
        (None, "redis", "MCPSITE_AUDIT_WRITER: redis needs MCPSITE_REDIS_URL"),
        (os.environ["MCPSITE_REDIS_URL"], "kafka", "MCPSITE_AUDIT_WRITER: expected process or redis, got 'kafka'"),
    ],
)
def test_a_writer_that_cannot_write_is_refused_at_start_up(redis: str | None, value: str, refusal: str) -> None:
    started = start(MCPSITE_AUDIT_WRITER=value, MCPSITE_REDIS_URL=redis)
    assert started.returncode == 1
    assert started.stderr.strip().splitlines()[-1] == f"django.core.exceptions.ImproperlyConfigured: {refusal}"
