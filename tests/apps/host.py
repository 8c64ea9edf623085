"""A test MCP Apps host: a page built on the official AppBridge (scripts/apps-host, bundled by
scripts/apps-host-install) served on loopback, and its backend, a real `mcp.Client` (2026-07-28)
that declares the Apps extension and holds the host's connection to mcpsite.

As in a real host, the page asks the backend for what the view asks of the server
(``tools/call``, ``resources/read``); the backend also makes the conversation's own tool call,
answering each URL-mode question the way the test says (`AppsHost.answer`), and hands its result
to the view.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import Future
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio.from_thread
import httpx2
from mcp import Client
from mcp.client.extension import ClientExtension
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitRequestParams, ElicitRequestURLParams, ElicitResult
from pydantic import BaseModel

ROOT = Path(__file__).resolve().parent.parent.parent
APPS = "io.modelcontextprotocol/ui"
APP_MIME_TYPE = "text/html;profile=mcp-app"


class AppsSupport(ClientExtension):
    """The client side of MCP Apps as a host declares it: the extension and the MIME type it renders."""

    identifier = APPS

    def settings(self) -> dict[str, Any]:
        return {"mimeTypes": [APP_MIME_TYPE]}


@cache
def page_directory() -> Path:
    """Where scripts/apps-host-install put the host page and its bundle (run once per session)."""
    done = subprocess.run(
        [str(ROOT / "scripts" / "apps-host-install")], capture_output=True, text=True, check=True, timeout=600
    )
    return Path(done.stdout.strip().splitlines()[-1])


def wire(model: Any) -> Any:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True) if isinstance(model, BaseModel) else model


@dataclass
class AppsHost:
    mcp_url: str
    token: str
    apps: bool = True  # declare the extension (False: a plain client, for comparison)
    answer: str = "accept"  # what the user does with a URL-mode question
    asked: queue.Queue[ElicitRequestURLParams] = field(default_factory=queue.Queue)
    _stack: list[AbstractContextManager[Any]] = field(default_factory=list)

    # --- lifetime ----------------------------------------------------------------------------

    def __enter__(self) -> AppsHost:
        portal_cm = anyio.from_thread.start_blocking_portal()
        self.portal = portal_cm.__enter__()
        self._stack.append(portal_cm)
        client_cm = self.portal.wrap_async_context_manager(self._connect())
        self.client: Client = client_cm.__enter__()
        self._stack.append(client_cm)
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        threading.Thread(target=self._http.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._http.shutdown()
        self._http.server_close()
        while self._stack:
            self._stack.pop().__exit__(None, None, None)

    @property
    def page_url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}/host.html"

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[Client]:
        async def on_elicit(context: Any, params: ElicitRequestParams) -> ElicitResult:
            assert isinstance(params, ElicitRequestURLParams), f"expected URL-mode questions only: {params}"
            self.asked.put(params)
            return ElicitResult(action=self.answer)  # type: ignore[arg-type]

        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.token}"}, timeout=httpx2.Timeout(60.0))
        async with (
            http,
            Client(
                streamable_http_client(self.mcp_url, http_client=http),
                mode="2026-07-28",
                elicitation_callback=on_elicit,
                extensions=[AppsSupport()] if self.apps else None,
            ) as client,
        ):
            yield client

    # --- what the backend asks the server ---------------------------------------------------

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One request of the view's (through the page), answered as the bridge expects."""

        async def ask() -> Any:
            if method == "tools/call":
                return await self.client.call_tool(params["name"], params.get("arguments") or {})
            if method == "resources/read":
                return await self.client.read_resource(params["uri"])
            raise MCPError(code=-32601, message=f"the test host forwards no {method}")

        return wire(self.portal.call(ask))

    def tools(self) -> dict[str, dict[str, Any]]:
        listed = self.portal.call(self.client.list_tools)
        return {tool["name"]: tool for tool in wire(listed)["tools"]}

    def resources(self) -> list[dict[str, Any]]:
        return list(wire(self.portal.call(self.client.list_resources))["resources"])

    def call_in_background(self, name: str, arguments: dict[str, Any]) -> Future[Any]:
        """The conversation's own call, running while the view is shown."""
        return self.portal.start_task_soon(self.client.call_tool, name, arguments)

    # --- the page -------------------------------------------------------------------------------

    def show(self, page: Any, tool_name: str, arguments: dict[str, Any], *, say_which_tool: bool = True) -> Any:
        """Render the view the tool points at for a call with `arguments` (the AppBridge sends
        the view its input); the view's frame. ``say_which_tool``: the host context names the tool."""
        tool = self.tools()[tool_name]
        uri = tool["_meta"]["ui"]["resourceUri"]
        (content,) = wire(self.portal.call(self.client.read_resource, uri))["contents"]
        assert content["mimeType"] == APP_MIME_TYPE
        page.goto(self.page_url)
        page.wait_for_function("() => window.host !== undefined")
        page.evaluate(
            "([html, tool, args, say]) => window.host.mount(html, tool, args, say)",
            [content["text"], tool, arguments, say_which_tool],
        )
        return page.frame_locator("#view")

    def hand_result(self, page: Any, result: Any) -> None:
        page.evaluate("(result) => window.host.result(result)", wire(result))

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        host = self
        directory = page_directory()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                kinds = {"/host.html": "text/html", "/host.bundle.js": "text/javascript"}
                if self.path == "/favicon.ico":
                    self._send(204, b"", "image/x-icon")
                    return
                if self.path not in kinds:
                    self._send(404, b"", "text/plain")
                    return
                self._send(200, (directory / self.path.lstrip("/")).read_bytes(), kinds[self.path])

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                try:
                    answer = {"result": host.request(body["method"], body.get("params") or {})}
                except MCPError as exc:
                    answer = {"error": {"code": exc.code, "message": str(exc)}}
                self._send(200, json.dumps(answer).encode(), "application/json")

        return Handler


@contextmanager
def apps_host(mcp_url: str, token: str, **kwargs: Any) -> Iterator[AppsHost]:
    with AppsHost(mcp_url, token, **kwargs) as host:
        yield host
