"""Two web processes sharing ``PROMETHEUS_MULTIPROC_DIR`` (prometheus-client's multiprocess mode):
either one's ``/metrics`` answers the sum of both."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio

from tests.conftest import LiveServer
from tests.mcp.clients import accept, connect, text
from tests.operate.scrape import scrape, value


def provision(url: str) -> str:
    async def run() -> str:
        async with connect(url, mode="2026-07-28", answer=accept(region="eu-west-1")) as client:
            return text(await client.call_tool("provision", {"name": "orders"}))

    return anyio.run(run)


def test_each_process_answers_the_calls_of_both(server_factory: Callable[..., LiveServer], tmp_path: Path) -> None:
    shared = tmp_path / "prometheus"
    shared.mkdir()
    a = server_factory(PROMETHEUS_MULTIPROC_DIR=str(shared))
    b = server_factory(PROMETHEUS_MULTIPROC_DIR=str(shared))
    try:
        assert provision(a.mcp_url("open")) == "Provisioned 'orders' in eu-west-1."
        assert provision(b.mcp_url("open")) == "Provisioned 'orders' in eu-west-1."
        assert provision(b.mcp_url("open")) == "Provisioned 'orders' in eu-west-1."

        for server in (a, b):
            samples = scrape(server.url)
            assert value(samples, "mcpsite_tool_calls_total", tool="provision", outcome="ok") == 3
            assert value(samples, "mcpsite_input_required_rounds_total", method="tools/call") == 3
            assert value(samples, "mcpsite_tool_call_duration_seconds_count", tool="provision") == 6
            assert value(samples, "mcpsite_keyring_keys", phase="minting") == 1  # read once, not summed
        assert len(list(shared.glob("counter_*.db"))) == 2  # one file per process
    finally:
        a.stop()
        b.stop()
