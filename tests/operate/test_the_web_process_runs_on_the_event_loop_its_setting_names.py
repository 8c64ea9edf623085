"""`mcp_server.serve` runs on the event loop ``MCPSITE_EVENT_LOOP`` names: the standard library's by
default (uvloop answers a few calls in a hundred late at saturation, bench/README.md), uvloop when
asked; any other value refuses to start, naming the setting. The server says which loop it is on
when it starts: that line is what is checked, the loop it actually runs, not the setting read."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable

import pytest

from tests.conftest import ROOT, LiveServer, free_port


@pytest.mark.parametrize(
    ("setting", "loop"),
    [
        (None, "asyncio.unix_events._UnixSelectorEventLoop"),
        ("uvloop", "uvloop.Loop"),
        ("asyncio", "asyncio.unix_events._UnixSelectorEventLoop"),
    ],
)
def test_the_server_runs_on_the_loop_named(
    server_factory: Callable[..., LiveServer], setting: str | None, loop: str
) -> None:
    server = server_factory(**({"MCPSITE_EVENT_LOOP": setting} if setting else {}))

    assert f"serving on the event loop {loop}" in server.log()


def test_an_unknown_loop_refuses_to_start_naming_the_setting() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mcp_server.serve", "--port", str(free_port())],
        cwd=ROOT,
        env={**os.environ, "MCPSITE_EVENT_LOOP": "tokio"},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode != 0
    assert "MCPSITE_EVENT_LOOP: expected asyncio or uvloop, got 'tokio'" in result.stderr
    assert "Uvicorn running" not in result.stderr
