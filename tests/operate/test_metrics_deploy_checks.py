"""The deploy checks about ``/metrics``: a short token is an error (the web process refuses to
start), and an https site with no trusted proxy is warned about (every caller through a proxy on
this host would look like loopback)."""

from __future__ import annotations

import pytest
from django.conf import settings

from mcpsite.checks import metrics_are_private


def ids(monkeypatch: pytest.MonkeyPatch, **mcpsite: object) -> list[str]:
    for name, value in mcpsite.items():
        monkeypatch.setitem(settings.MCPSITE, name, value)
    return [message.id or "" for message in metrics_are_private()]


def test_a_short_metrics_token_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ids(monkeypatch, METRICS_TOKEN="short") == ["mcpsite.E006"]
    assert ids(monkeypatch, METRICS_TOKEN="x" * 32) == []
    assert ids(monkeypatch, METRICS_TOKEN="") == []


def test_an_https_site_without_a_trusted_proxy_is_warned_while_metrics_are_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(settings, "SITE_ROOT", "https://mcp.example.com")
    assert ids(monkeypatch, TRUSTED_PROXIES=[], METRICS_TOKEN="") == ["mcpsite.W001"]
    assert ids(monkeypatch, TRUSTED_PROXIES=["10.0.0.1"]) == []
    assert ids(monkeypatch, TRUSTED_PROXIES=[], METRICS=False) == []
