"""Endpoint URLs are set by operators, so they may name only public https addresses: never this
machine, its private network or a metadata service (SSRF). Loopback is allowed only by the test
switch, which is off by default."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
from django.conf import settings

from notifications import services
from notifications.addresses import EndpointRefused, check_url
from notifications.models import Endpoint
from tests.conftest import Cast

HTTPS_ONLY = "Only https URLs may receive notifications."


def refusal(url: str) -> str:
    with pytest.raises(EndpointRefused) as caught:
        check_url(url)
    return caught.value.reason


def test_the_loopback_switch_is_off_by_default() -> None:
    env = {k: v for k, v in os.environ.items() if k != "MCPSITE_NOTIFICATIONS_ALLOW_LOOPBACK"}
    script = "import django; django.setup(); from django.conf import settings; print(settings.NOTIFICATIONS)"
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert "'ALLOW_LOOPBACK': False" in result.stdout


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://127.0.0.1/hooks", "127.0.0.1 is a private, loopback or reserved address (127.0.0.1)."),
        ("https://localhost:8443/hooks", "localhost is a private, loopback or reserved address"),
        ("https://[::1]/hooks", "::1 is a private, loopback or reserved address (::1)."),
        ("https://10.0.0.5/hooks", "10.0.0.5 is a private, loopback or reserved address (10.0.0.5)."),
        ("https://192.168.1.1/", "192.168.1.1 is a private, loopback or reserved address (192.168.1.1)."),
        ("https://169.254.169.254/latest/meta-data/", "169.254.169.254 is a private, loopback or reserved address"),
        ("https://100.64.0.1/", "100.64.0.1 is a private, loopback or reserved address (100.64.0.1)."),
        ("https://0.0.0.0/", "0.0.0.0 is a private, loopback or reserved address (0.0.0.0)."),
        ("https://[::ffff:10.0.0.1]/", "::ffff:10.0.0.1 is a private, loopback or reserved address (10.0.0.1)."),
        ("https://224.0.0.1/", "224.0.0.1 is a private, loopback or reserved address (224.0.0.1)."),
        ("http://93.184.215.14/hooks", HTTPS_ONLY),
        ("ftp://93.184.215.14/hooks", HTTPS_ONLY),
        ("https://user:pw@93.184.215.14/hooks", "The URL may not carry a user name or password."),
    ],
)
def test_an_endpoint_url_on_a_private_or_loopback_address_is_refused(
    monkeypatch: pytest.MonkeyPatch, url: str, reason: str
) -> None:
    monkeypatch.setitem(settings.NOTIFICATIONS, "ALLOW_LOOPBACK", False)
    assert refusal(url).startswith(reason)


def test_a_public_https_address_is_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(settings.NOTIFICATIONS, "ALLOW_LOOPBACK", False)
    check_url("https://93.184.215.14/hooks")


def test_the_test_switch_allows_loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(settings.NOTIFICATIONS, "ALLOW_LOOPBACK", True)
    check_url("http://127.0.0.1:9/hooks")
    check_url("https://[::1]:9/hooks")
    assert refusal("https://10.0.0.5/hooks") == "10.0.0.5 is a private, loopback or reserved address (10.0.0.5)."
    assert refusal("http://93.184.215.14/hooks") == HTTPS_ONLY


def test_creating_an_endpoint_on_a_private_address_writes_nothing(
    monkeypatch: pytest.MonkeyPatch, django_db_setup: Any, cast: Cast
) -> None:
    monkeypatch.setitem(settings.NOTIFICATIONS, "ALLOW_LOOPBACK", False)
    with pytest.raises(EndpointRefused):
        services.endpoint_create(url="https://169.254.169.254/hooks", event_types=["approval.pending"])
    assert not Endpoint.objects.filter(url="https://169.254.169.254/hooks").exists()
