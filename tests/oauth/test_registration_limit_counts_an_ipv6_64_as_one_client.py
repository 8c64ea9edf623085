"""The registration limit counts an IPv6 client by its /64: a host holds the whole /64 and may send
each registration from a fresh address in it, so counting exact addresses left it unlimited. An
IPv4 address counts alone, and its IPv4-mapped IPv6 spelling (``::ffff:a.b.c.d``, what a
dual-stack socket reports) counts as that IPv4 address. Client addresses arrive as a trusted
proxy names them (X-Forwarded-For from 127.0.0.1, MCPSITE_TRUSTED_PROXIES)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx2
import pytest
from django.core.cache import cache

from mcpsite.net import address_bucket
from tests.conftest import LiveServer
from tests.oauth.test_registration_limit_by_client_address import CLIENT

BUCKETS = ["2001:db8:1:2::/64", "2001:db8:1:3::/64", "198.51.100.7", "198.51.100.8"]


@pytest.fixture(autouse=True)
def fresh_budgets() -> Iterator[None]:
    """The servers count in the suite's Redis, which the test shares: start and leave it clean."""
    keys = [f"mcpsite:dcr:{bucket}" for bucket in BUCKETS]
    cache.delete_many(keys)
    yield
    cache.delete_many(keys)


@pytest.fixture
def behind_a_proxy(server_factory: Callable[..., LiveServer]) -> Iterator[LiveServer]:
    server = server_factory(MCPSITE_DCR_PER_HOUR="3", MCPSITE_TRUSTED_PROXIES="127.0.0.1")
    yield server
    server.stop()


def register(server: LiveServer, client_address: str) -> int:
    response = httpx2.post(
        f"{server.url}/o/register/", json=CLIENT, headers={"X-Forwarded-For": client_address}, timeout=10
    )
    return response.status_code


def test_fresh_addresses_in_one_ipv6_64_share_one_budget(behind_a_proxy: LiveServer) -> None:
    statuses = [register(behind_a_proxy, f"2001:db8:1:2:{n:x}::{n:x}") for n in range(1, 5)]
    assert statuses == [201, 201, 201, 429]


def test_the_next_ipv6_64_has_a_budget_of_its_own(behind_a_proxy: LiveServer) -> None:
    first = [register(behind_a_proxy, f"2001:db8:1:2::{n}") for n in range(1, 5)]
    neighbour = [register(behind_a_proxy, f"2001:db8:1:3::{n}") for n in range(1, 5)]
    assert (first, neighbour) == ([201, 201, 201, 429], [201, 201, 201, 429])


def test_an_ipv4_mapped_address_counts_as_its_ipv4_address(behind_a_proxy: LiveServer) -> None:
    statuses = [
        register(behind_a_proxy, address)
        for address in ["198.51.100.7", "::ffff:198.51.100.7", "::ffff:c633:6407", "198.51.100.7"]
    ]
    assert statuses == [201, 201, 201, 429]


def test_ipv4_addresses_next_to_each_other_count_apart(behind_a_proxy: LiveServer) -> None:
    first = [register(behind_a_proxy, "198.51.100.7") for _ in range(4)]
    neighbour = [register(behind_a_proxy, "198.51.100.8") for _ in range(4)]
    assert (first, neighbour) == ([201, 201, 201, 429], [201, 201, 201, 429])


@pytest.mark.parametrize(
    ("address", "bucket"),
    [
        ("2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"),
        ("2001:DB8:1:2::1", "2001:db8:1:2::/64"),
        ("fe80::1%eth0", "fe80::/64"),
        ("::ffff:198.51.100.7", "198.51.100.7"),
        ("198.51.100.7", "198.51.100.7"),
        ("-", "-"),
    ],
)
def test_each_address_has_one_bucket(address: str, bucket: str) -> None:
    assert address_bucket(address) == bucket
