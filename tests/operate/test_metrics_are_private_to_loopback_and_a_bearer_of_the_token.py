"""``/metrics`` answers a loopback peer and, from anywhere else, only a bearer of
``MCPSITE_METRICS_TOKEN``; without a token set it is not found off loopback. The peer is the one
uvicorn settled on: behind a trusted proxy, the address the proxy forwarded."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx2
import pytest
from django.conf import settings
from django.test import Client

from tests.conftest import ROOT, Cast, LiveServer
from tests.operate.scrape import parse

TOKEN = secrets.token_urlsafe(32)
OUTSIDE = "203.0.113.9"


@pytest.fixture(scope="module")
def proxied(server_factory: Callable[..., LiveServer]) -> Iterator[LiveServer]:
    """A server behind a trusted proxy on loopback: its X-Forwarded-For is believed."""
    server = server_factory(MCPSITE_TRUSTED_PROXIES="127.0.0.1", MCPSITE_METRICS_TOKEN=TOKEN)
    yield server
    server.stop()


def get(server: LiveServer, **headers: str) -> httpx2.Response:
    return httpx2.get(f"{server.url}/metrics", headers=headers, timeout=10)


def test_a_loopback_caller_reads_the_metrics_without_a_token(proxied: LiveServer) -> None:
    response = get(proxied)
    assert response.status_code == 200
    assert ("mcpsite_keyring_keys", frozenset({("phase", "minting")})) in parse(response.text)


def test_a_caller_from_outside_without_the_token_is_refused(proxied: LiveServer) -> None:
    assert get(proxied, **{"X-Forwarded-For": OUTSIDE}).status_code == 403
    wrong = get(proxied, **{"X-Forwarded-For": OUTSIDE, "Authorization": f"Bearer {TOKEN[:-1]}x"})
    assert wrong.status_code == 403
    assert "mcpsite_" not in wrong.text


def test_a_caller_from_outside_with_the_token_reads_the_metrics(proxied: LiveServer) -> None:
    response = get(proxied, **{"X-Forwarded-For": OUTSIDE, "Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200
    assert "mcpsite_tool_calls" in response.text


def test_without_a_token_set_the_metrics_are_not_found_off_loopback(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(settings.MCPSITE, "METRICS_TOKEN", "")
    assert Client(REMOTE_ADDR=OUTSIDE).get("/metrics").status_code == 404
    assert Client(REMOTE_ADDR=OUTSIDE).get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 404
    for loopback in ("127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1"):
        assert Client(REMOTE_ADDR=loopback).get("/metrics").status_code == 200, loopback


def test_metrics_turned_off_are_not_found_even_on_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(settings.MCPSITE, "METRICS", False)
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics").status_code == 404


def test_the_token_can_be_read_from_a_file(tmp_path: Path) -> None:
    secret = tmp_path / "metrics_token"
    secret.write_text(TOKEN + "\n")
    env = {k: v for k, v in os.environ.items() if k != "MCPSITE_METRICS_TOKEN"}
    shown = subprocess.run(
        [sys.executable, "manage.py", "shell", "-v0", "-c", "from django.conf import settings; "
         "print(settings.MCPSITE['METRICS_TOKEN'])"],
        cwd=ROOT, env={**env, "MCPSITE_METRICS_TOKEN_FILE": str(secret)}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert shown.stdout.strip() == TOKEN, shown.stderr
