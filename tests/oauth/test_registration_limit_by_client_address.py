"""The registration limit counts the real client address: X-Forwarded-For is believed only from a
trusted proxy (MCPSITE_TRUSTED_PROXIES), and the documented nginx overwrites what a client sends."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import httpx2
import pytest
from django.core.cache import cache

from tests.conftest import LiveServer, free_port
from tests.mcp.test_behind_a_proxy import Proxy
from tests.oauth.browser import CALLBACK

CLIENT = {
    "client_name": "rotating client",
    "application_type": "native",
    "redirect_uris": [CALLBACK],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
}


ADDRESSES = ["127.0.0.1", *(f"203.0.113.{n}" for n in range(1, 5)), "198.51.100.1", "198.51.100.2"]


@pytest.fixture(autouse=True)
def fresh_budgets() -> Iterator[None]:
    """The servers count in the suite's Redis, which the test shares: start and leave it clean."""
    keys = [f"mcpsite:dcr:{address}" for address in ADDRESSES]
    cache.delete_many(keys)
    yield
    cache.delete_many(keys)


def register(root: str, forwarded_for: str) -> int:
    response = httpx2.post(f"{root}/o/register/", json=CLIENT, headers={"X-Forwarded-For": forwarded_for}, timeout=10)
    if response.status_code == 429:
        assert response.json() == {
            "error": "slow_down",
            "error_description": "Too many client registrations; try again later.",
        }
    return response.status_code


def test_rotating_x_forwarded_for_without_a_trusted_proxy_does_not_bypass_the_registration_limit(
    server_factory: Callable[..., LiveServer],
) -> None:
    server = server_factory(MCPSITE_DCR_PER_HOUR="3")  # no MCPSITE_TRUSTED_PROXIES: the default
    try:
        statuses = [register(server.url, f"203.0.113.{n}") for n in range(1, 5)]
        assert statuses == [201, 201, 201, 429]
    finally:
        server.stop()


def test_behind_a_trusted_proxy_each_forwarded_address_has_its_own_registration_budget(
    server_factory: Callable[..., LiveServer],
) -> None:
    server = server_factory(MCPSITE_DCR_PER_HOUR="3", MCPSITE_TRUSTED_PROXIES="127.0.0.1")
    try:
        first = [register(server.url, "198.51.100.1") for _ in range(4)]
        second = [register(server.url, "198.51.100.2") for _ in range(4)]
        assert (first, second) == ([201, 201, 201, 429], [201, 201, 201, 429])
    finally:
        server.stop()


def test_nginx_overwrites_a_client_sent_x_forwarded_for(
    server_factory: Callable[..., LiveServer], tmp_path: Path
) -> None:
    port = free_port()
    root = f"http://127.0.0.1:{port}"
    env = {"MCPSITE_SITE_ROOT": root, "MCPSITE_DCR_PER_HOUR": "3", "MCPSITE_TRUSTED_PROXIES": "127.0.0.1"}
    a, b = server_factory(**env), server_factory(**env)
    proxy = Proxy(tmp_path, port, a, b)
    try:
        # The upstreams believe nginx; had nginx passed the client's header on (or appended to
        # it), each made-up address would have had its own budget.
        statuses = [register(proxy.url, f"203.0.113.{n}") for n in range(1, 5)]
        assert statuses == [201, 201, 201, 429]
    finally:
        proxy.stop()
        a.stop()
        b.stop()
