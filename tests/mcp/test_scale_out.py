"""Stateless rounds on any instance: two uvicorn processes on one PostgreSQL share the key ring,
and state minted before a restart verifies after it."""

from __future__ import annotations

from collections.abc import Callable

import anyio

from tests.conftest import Cast, LiveServer
from tests.mcp.clients import text
from tests.mcp.test_request_state import first_round, retry


def test_state_minted_by_one_process_verifies_on_another(server_factory: Callable[..., LiveServer], cast: Cast) -> None:
    a = server_factory()
    # Both processes must name the same public URL: they stand behind one proxy.
    b = server_factory(MCPSITE_SITE_ROOT=a.url)
    try:
        token = cast.token(a)
        state = anyio.run(first_round, a.mcp_url(), token)
        result = anyio.run(retry, b.mcp_url(), token, state)
        assert text(result) == "Provisioned 'orders' in eu-west-1."
    finally:
        a.stop()
        b.stop()


def test_state_minted_before_a_restart_verifies_after_it(server_factory: Callable[..., LiveServer], cast: Cast) -> None:
    server = server_factory()
    try:
        token = cast.token(server)
        state = anyio.run(first_round, server.mcp_url(), token)
        server.stop(kill=True)
        server.start()
        result = anyio.run(retry, server.mcp_url(), token, state)
        assert text(result) == "Provisioned 'orders' in eu-west-1."
    finally:
        server.stop()
