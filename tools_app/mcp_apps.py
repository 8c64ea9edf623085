"""MCP Apps (SEP-1865, ``io.modelcontextprotocol/ui``) for toolsets, on the SDK's `mcp.server.apps`.

A tool points at a view (``@toolset.tool(ui=VIEW)`` stamps ``_meta.ui.resourceUri``); the host
renders the view's ``ui://`` resource (``text/html;profile=mcp-app``) in a sandboxed iframe and
the view reads what it shows through app-only tools (``_meta.ui.visibility: ["app"]``) that the
host calls for it. Here:

- `View`: one self-contained HTML document per view. Its script and style are inlined and
  allowed by hash only (``default-src 'none'``; no other script, no network, no frames, no
  forms), and the resource declares no outside domain (``_meta.ui.csp`` empty), so a host grants
  it nothing beyond the bridge.
- `apps_extension`: the SDK's `Apps` extension for a tenant, built from the views its toolsets
  declare (their resources, and their app-only tools once each); None when they declare none.
- `HideAppsFromPlainClients`: a client that did not declare the extension (with the MCP Apps
  MIME type) sees no ``_meta.ui`` on tools, no app-only tools and no ``ui://`` resources; every
  tool still answers text for it.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.server.apps import APP_MIME_TYPE, Apps, ResourceCsp, client_supports_apps
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import BaseModel

if TYPE_CHECKING:
    from tools_app.toolsets import Toolset

UI_SCHEME = "ui://"
_SHARED = Path(__file__).resolve().parent / "ui"


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def content_security_policy(script: str, style: str) -> str:
    """The view's whole policy: its own inline script and style (by hash) and nothing else."""
    return "; ".join(
        (
            "default-src 'none'",
            f"script-src {_hash(script)}",
            f"style-src {_hash(style)}",
            "img-src 'none'",
            "connect-src 'none'",
            "frame-src 'none'",
            "form-action 'none'",
            "base-uri 'none'",
        )
    )


@dataclass(frozen=True)
class View:
    """A ``ui://mcpsite/<name>.html`` view: its markup read from ``<directory>/<name>.html``, its
    script and style from ``<directory>/<files>.{js,css}`` (``files``: the name unless views share
    them), after the shared bridge (``tools_app/ui/app.js``: the view's side of the MCP Apps
    protocol) and base style. ``app_tools``: what the view calls through the host, registered with
    visibility ``app``."""

    name: str
    title: str
    directory: Path
    app_tools: tuple[Callable[..., Any], ...] = ()
    description: str = ""
    files: str = ""

    @property
    def uri(self) -> str:
        return f"{UI_SCHEME}mcpsite/{self.name}.html"

    def _read(self, suffix: str) -> str:
        name = self.name if suffix == ".html" else self.files or self.name
        return (self.directory / f"{name}{suffix}").read_text()

    @functools.cached_property
    def html(self) -> str:
        script = (_SHARED / "app.js").read_text() + "\n" + self._read(".js")
        style = (_SHARED / "base.css").read_text() + "\n" + self._read(".css")
        for text, end in ((script, "</script"), (style, "</style")):
            if end in text.lower():
                raise ValueError(f"view {self.name}: its inlined text may not contain {end}")
        return (
            "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>\n"
            f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy(script, style)}">\n'
            f"<meta name='viewport' content='width=device-width, initial-scale=1'><title>{self.title}</title>\n"
            f"<style>{style}</style></head>\n<body data-view='{self.name}'>\n{self._read('.html')}\n"
            f"<script>{script}</script>\n</body></html>\n"
        )


def apps_extension(toolsets: Sequence[Toolset]) -> Apps | None:
    """The SDK's Apps extension serving the views these toolsets declare; None when none does."""
    views: dict[str, View] = {}
    for toolset in toolsets:
        for view in toolset.views():
            views.setdefault(view.uri, view)
    if not views:
        return None
    apps = Apps()
    registered: set[str] = set()
    for view in views.values():
        apps.add_html_resource(
            view.uri,
            view.html,
            name=view.name,
            title=view.title,
            description=view.description or None,
            csp=ResourceCsp(),  # no outside domain: no fetch, no image, no frame from anywhere
            prefers_border=True,
        )
        for fn in view.app_tools:
            if fn.__name__ not in registered:
                registered.add(fn.__name__)
                apps.tool(resource_uri=view.uri, visibility=["app"])(fn)
    return apps


def _is_app_only(tool: dict[str, Any]) -> bool:
    ui = (tool.get("_meta") or {}).get("ui") or {}
    return isinstance(ui, dict) and ui.get("visibility") == ["app"]


def _plain_tool(tool: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in (tool.get("_meta") or {}).items() if k != "ui" and k != "ui/resourceUri"}
    plain = {k: v for k, v in tool.items() if k != "_meta"}
    return {**plain, "_meta": meta} if meta else plain


def _dump(result: HandlerResult) -> dict[str, Any]:
    if isinstance(result, BaseModel):
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dict(result or {})


def unknown_resource(uri: str) -> MCPError:
    """What the SDK answers a read of a resource it does not have (for a view a caller may not see)."""
    return MCPError(code=INVALID_PARAMS, message=f"Unknown resource: {uri}", data={"uri": uri})


class HideAppsFromPlainClients:
    """A server middleware: what MCP Apps adds is shown only to clients that declared them.

    The shared tool records are never changed (`Toolset.tools` builds them once per process);
    the answer is rewritten instead. A plain client reading a ``ui://`` resource by its address
    gets the SDK's own answer for an unknown resource."""

    LISTS = frozenset({"tools/list", "resources/list", "resources/read"})

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method not in self.LISTS or client_supports_apps(ctx):
            return await call_next(ctx)
        if ctx.method == "resources/read":
            uri = str((ctx.params or {}).get("uri", ""))
            if uri.startswith(UI_SCHEME):
                raise unknown_resource(uri)
            return await call_next(ctx)
        answer = _dump(await call_next(ctx))
        if ctx.method == "tools/list":
            answer["tools"] = [_plain_tool(t) for t in answer.get("tools", []) if not _is_app_only(t)]
        else:
            answer["resources"] = [
                r
                for r in answer.get("resources", [])
                if not str(r.get("uri", "")).startswith(UI_SCHEME) and r.get("mimeType") != APP_MIME_TYPE
            ]
        return answer
