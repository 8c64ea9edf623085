"""DNS rebinding: a name may resolve to a checked, harmless address when the URL is checked and
to another (the metadata service, an admin on the private network) a moment later, when the
connection opens. An attempt connects to the address that was checked, and the receiver still
sees the name it was addressed by.

The DNS server is the third party here: a resolver that answers `rebind.test` with one loopback
address the first time and another ever after stands in for it (`socket.getaddrinfo`, which both
our check and the HTTP client ask). Two real receivers listen on the same port, one on each
address; loopback is allowed by the notifications tests' switch (both are loopback, so the check
passes whichever it sees: what is tested is where the POST goes)."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from typing import Any

import pytest

from notifications.sending import pinned, post
from tests.notifications.conftest import Receiver, verify

NAME = "rebind.test"
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
CHECKED, REBOUND = "127.0.0.1", "127.0.0.2"


@pytest.fixture
def rebinding_resolver(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """`rebind.test` resolves to CHECKED once, then to REBOUND; other names as usual. Returns
    the answers given, in order."""
    real = socket.getaddrinfo
    answers: list[str] = []

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host != NAME:
            return real(host, port, *args, **kwargs)
        answers.append(CHECKED if not answers else REBOUND)
        return real(answers[-1], port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return answers


def test_a_name_that_rebinds_after_the_check_is_posted_to_the_checked_address(
    rebinding_resolver: list[str], receiver_factory: Callable[..., Receiver]
) -> None:
    checked = receiver_factory(host=CHECKED)
    port = int(checked.url.split(":")[2].split("/")[0])
    rebound = receiver_factory(host=REBOUND, port=port)

    outcome = post(url=f"http://{NAME}:{port}/hooks", secret=SECRET, msg_id="msg_1", payload={"a": 1}, timeout=5)

    assert (outcome.status_code, outcome.error) == (200, "")
    assert rebound.received == []
    [received] = checked.wait_for(1)
    assert {k.lower(): v for k, v in received.headers.items()}["host"] == f"{NAME}:{port}"
    assert verify(SECRET, received) == {"a": 1}
    assert rebinding_resolver == [CHECKED]  # looked up once: the connection asked nobody


def test_an_https_name_is_pinned_with_its_name_kept_for_sni_and_host() -> None:
    target = pinned("https://hooks.example.com:8443/in?x=1", ipaddress.ip_address("93.184.215.14"))
    assert str(target.url) == "https://93.184.215.14:8443/in?x=1"
    assert target.headers == {"host": "hooks.example.com:8443"}
    assert target.extensions == {"sni_hostname": "hooks.example.com"}


def test_an_ipv6_address_is_pinned_in_brackets_and_the_default_port_is_not_named() -> None:
    target = pinned("https://hooks.example.com/in", ipaddress.ip_address("2606:2800:21f:cb07:6820:80da:af6b:8b2c"))
    assert str(target.url) == "https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/in"
    assert target.headers == {"host": "hooks.example.com"}
