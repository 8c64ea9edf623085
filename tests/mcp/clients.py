"""Real SDK clients for the live tests."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp import Client
from mcp.client.session import ElicitationFnT
from mcp.client.streamable_http import streamable_http_client
from mcp_types import ElicitRequestParams, ElicitResult

MODES = ["2026-07-28", "legacy"]

Answer = Callable[[ElicitRequestParams], ElicitResult]


def answering(answer: Answer, asked: list[str] | None = None) -> ElicitationFnT:
    async def callback(context: Any, params: ElicitRequestParams) -> ElicitResult:
        if asked is not None:
            asked.append(params.message)
        return answer(params)

    return callback


def accept(**content: Any) -> Answer:
    return lambda params: ElicitResult(action="accept", content=content)


def never(params: ElicitRequestParams) -> ElicitResult:
    raise AssertionError(f"unexpected question: {params.message}")


@asynccontextmanager
async def connect(
    url: str,
    token: str | None = None,
    *,
    mode: str = "2026-07-28",
    answer: Answer = never,
    asked: list[str] | None = None,
) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0))
    async with (
        http,
        Client(
            streamable_http_client(url, http_client=http),
            mode=mode,
            elicitation_callback=answering(answer, asked),
        ) as client,
    ):
        yield client


def text(result: Any) -> str:
    return str(result.content[0].text)


def modern_post(
    url: str, method: str, params: dict[str, Any] | None = None, token: str | None = None, **headers: str
) -> httpx2.Response:
    """One raw 2026-07-28 request, for the tests that need to see statuses and headers."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {
            **(params or {}),
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    return raw_post(url, json.dumps(body).encode(), token, **{"Mcp-Method": method, **headers})


def wait_until_served(url: str, token: str | None = None, *, seconds: float = 10.0) -> None:
    """Until `url` answers `token`'s ``tools/list``: a process hears of a new tenant within a
    second (a broadcast), or on its 5 s poll."""
    deadline = time.monotonic() + seconds
    while modern_post(url, "tools/list", token=token).status_code != 200:
        assert time.monotonic() < deadline, f"{url} is not served"
        time.sleep(0.1)


def raw_post(url: str, body: bytes, token: str | None = None, **headers: str) -> httpx2.Response:
    base = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
    }
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx2.post(url, content=body, headers={**base, **auth, **headers}, timeout=10)
