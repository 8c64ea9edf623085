"""One HTTP request played to an ASGI app in process, the way uvicorn plays it (`bench/inproc.py`
and the parity tests of `mcp_server.endpoint`; it lives here so `bench/` imports nothing from `tests/`)."""

from __future__ import annotations

import json
from typing import Any

import anyio
from starlette.types import ASGIApp, Message, Scope


def post_scope(path: str, headers: list[tuple[str, str]]) -> Scope:
    """The scope uvicorn builds for a POST to `path` on 127.0.0.1:8000 with these headers."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(name.encode(), value.encode()) for name, value in headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }


class Exchange:
    """The client's side of one request: the body, then (after `leave_after` seconds, or never)
    the disconnect; what came back is kept."""

    def __init__(self, body: bytes, *, leave_after: float | None = None) -> None:
        self.body = body
        self.leave_after = leave_after
        self.sent_body = False
        self.status: int | None = None
        self.headers: dict[str, str] = {}
        self.chunks: list[bytes] = []

    async def play(self, app: ASGIApp, scope: Scope) -> Exchange:
        await app(scope, self.receive, self.send)
        return self

    async def receive(self) -> Message:
        if not self.sent_body:
            self.sent_body = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        if self.leave_after is None:
            await anyio.sleep_forever()
        else:
            await anyio.sleep(self.leave_after)
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.headers = {k.decode().lower(): v.decode() for k, v in message.get("headers", [])}
        else:
            self.chunks.append(message.get("body", b""))

    @property
    def text(self) -> str:
        return b"".join(self.chunks).decode()

    def answer(self) -> tuple[int | None, str, Any]:
        """Status, media type and body (parsed when it is JSON)."""
        kind = self.headers.get("content-type", "").split(";")[0]
        body: Any = self.text
        if kind == "application/json" and body:
            body = json.loads(body)
        return self.status, kind, body
