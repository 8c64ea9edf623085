"""An IPv6 address that carries an IPv4 one is judged by the address it carries, and IPv6 forms
that are never a public destination are refused whatever they carry: otherwise
`https://[64:ff9b::a9fe:a9fe]/` would reach the metadata service through a NAT64 gateway."""

from __future__ import annotations

import pytest
from django.conf import settings

from notifications.addresses import EndpointRefused, check_url


@pytest.fixture(autouse=True)
def loopback_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(settings.NOTIFICATIONS, "ALLOW_LOOPBACK", False)


def refusal(url: str) -> str:
    with pytest.raises(EndpointRefused) as caught:
        check_url(url)
    return caught.value.reason


def test_nat64_address_of_loopback_is_refused() -> None:
    assert refusal("https://[64:ff9b::7f00:1]/hooks") == (
        "64:ff9b::7f00:1 is a private, loopback or reserved address (64:ff9b::7f00:1, which carries 127.0.0.1)."
    )


def test_nat64_address_of_the_metadata_service_is_refused() -> None:
    assert refusal("https://[64:ff9b::a9fe:a9fe]/latest/meta-data/").endswith("which carries 169.254.169.254).")


def test_nat64_address_of_a_private_network_is_refused() -> None:
    assert refusal("https://[64:ff9b::a00:5]/hooks").endswith("which carries 10.0.0.5).")


def test_local_use_nat64_address_is_refused_even_of_a_public_address() -> None:
    assert refusal("https://[64:ff9b:1::5db8:d70e]/hooks") == (
        "64:ff9b:1::5db8:d70e is a private, loopback or reserved address (64:ff9b:1::5db8:d70e)."
    )


def test_6to4_address_of_loopback_is_refused() -> None:
    assert refusal("https://[2002:7f00:1::1]/hooks").endswith("(2002:7f00:1::1, which carries 127.0.0.1).")


def test_6to4_address_of_a_private_network_is_refused() -> None:
    assert refusal("https://[2002:c0a8:101::1]/hooks").endswith("which carries 192.168.1.1).")


def test_ipv4_compatible_address_of_loopback_is_refused() -> None:
    assert refusal("https://[::7f00:1]/hooks") == "::7f00:1 is a private, loopback or reserved address (::7f00:1)."


def test_ipv4_compatible_address_is_refused_even_of_a_public_address() -> None:
    assert refusal("https://[::5db8:d70e]/hooks") == (
        "::5db8:d70e is a private, loopback or reserved address (::5db8:d70e)."
    )


def test_site_local_address_is_refused() -> None:
    assert refusal("https://[fec0::1]/hooks") == "fec0::1 is a private, loopback or reserved address (fec0::1)."


@pytest.mark.parametrize(
    "address",
    ["::ffff:7f00:1", "fc00::1", "fe80::1", "2001:db8::1", "2001::a9fe:a9fe", "100::1", "3fff::1", "ff02::1", "::"],
)
def test_other_non_global_ipv6_addresses_are_refused(address: str) -> None:
    assert "is a private, loopback or reserved address" in refusal(f"https://[{address}]/hooks")


@pytest.mark.parametrize(
    "address",
    [
        "2606:2800:21f:cb07:6820:80da:af6b:8b2c",  # a plain global IPv6 address
        "64:ff9b::5db8:d70e",  # NAT64 of 93.184.215.14
        "2002:5db8:d70e::1",  # 6to4 of 93.184.215.14
    ],
)
def test_a_public_ipv6_address_and_the_forms_carrying_a_public_ipv4_one_are_accepted(address: str) -> None:
    assert [str(a) for a in check_url(f"https://[{address}]/hooks")] == [address]
