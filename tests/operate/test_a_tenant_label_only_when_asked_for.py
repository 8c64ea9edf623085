"""No series names a tenant by default; ``MCPSITE_METRICS_PER_TENANT`` adds the ``tenant`` label to
the request and tool-call series (a small deployment's choice)."""

from __future__ import annotations

from collections.abc import Callable

import anyio

from tests.conftest import LiveServer
from tests.mcp.clients import accept, connect, text
from tests.operate.scrape import scrape, value


def provision(url: str) -> str:
    async def run() -> str:
        async with connect(url, answer=accept(region="eu-west-1")) as client:
            return text(await client.call_tool("provision", {"name": "orders"}))

    return anyio.run(run)


def test_per_tenant_labels_name_the_tenant_that_was_called(server_factory: Callable[..., LiveServer]) -> None:
    server = server_factory(MCPSITE_METRICS_PER_TENANT="1")
    try:
        assert provision(server.mcp_url("open")) == "Provisioned 'orders' in eu-west-1."
        samples = scrape(server.url)
    finally:
        server.stop()

    assert value(samples, "mcpsite_tool_calls_total", tool="provision", outcome="ok", tenant="open") == 1
    assert value(samples, "mcpsite_input_required_rounds_total", method="tools/call", tenant="open") == 1


def test_by_default_no_series_names_a_tenant(live: LiveServer) -> None:
    assert provision(live.mcp_url("open")) == "Provisioned 'orders' in eu-west-1."
    samples = scrape(live.url)

    assert value(samples, "mcpsite_tool_calls_total", tool="provision", outcome="ok") >= 1
    assert not any(name == "tenant" for _, labels in samples for name, _ in labels)
    assert not any("open" == v or "demo" == v for _, labels in samples for _, v in labels)
