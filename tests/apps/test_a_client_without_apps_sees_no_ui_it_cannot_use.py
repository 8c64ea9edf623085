"""A client that did not declare MCP Apps (the SDK's `mcp.Client` as it comes) sees no ``_meta.ui``,
no app-only tool and no ``ui://`` resource, in both generations, and still gets text answers; a
host that declared it sees all three, each view held to a strict policy of its own."""

from __future__ import annotations

import re
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.apps.conftest import screenshot
from tests.apps.host import APP_MIME_TYPE, APPS, AppsHost, AppsSupport
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import MODES, modern_post

APP_ONLY = {"step_status", "task_view_status", "task_view_cancel"}
VIEWS = {"ui://mcpsite/payment.html", "ui://mcpsite/approval.html", "ui://mcpsite/task.html"}


Listing = tuple[list[dict[str, Any]], list[dict[str, Any]], str]


def listing(url: str, token: str, mode: str, *, apps: bool) -> Listing:
    """Its tools, its resources, and what reading the payment view answers."""

    async def run() -> Listing:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        async with (
            http,
            Client(
                streamable_http_client(url, http_client=http), mode=mode, extensions=[AppsSupport()] if apps else None
            ) as client,
        ):
            tools = (await client.list_tools()).model_dump(by_alias=True, mode="json")["tools"]
            resources = (await client.list_resources()).model_dump(by_alias=True, mode="json")["resources"]
            try:
                await client.read_resource("ui://mcpsite/payment.html")
                read = "read"
            except MCPError as exc:
                read = str(exc)
            return tools, resources, read

    return anyio.run(run)


def advertised(url: str, token: str) -> dict[str, Any]:
    """The extensions the server names in its capabilities (2026-07-28 ``server/discover``)."""
    capabilities = modern_post(url, "server/discover", {}, token).json()["result"]["capabilities"]
    extensions: dict[str, Any] = capabilities.get("extensions", {})
    return extensions


@pytest.mark.parametrize("mode", MODES)
def test_a_plain_client_sees_no_ui_metadata_app_tools_or_views(server: LiveServer, alice: str, mode: str) -> None:
    tools, resources, read = listing(server.mcp_url("apps"), alice, mode, apps=False)
    names = {tool["name"] for tool in tools}
    assert {"pay_deposit", "request_refund", "book_table_with_deposit", "show_task"} <= names
    assert not names & APP_ONLY
    assert all("ui" not in (tool.get("_meta") or {}) for tool in tools)
    assert not [r for r in resources if r["uri"].startswith("ui://")]
    assert read == "Unknown resource: ui://mcpsite/payment.html"


@pytest.mark.parametrize("mode", MODES)
def test_a_host_with_apps_sees_each_tools_view_and_the_app_only_tools(
    server: LiveServer, alice: str, mode: str
) -> None:
    tools, resources, read = listing(server.mcp_url("apps"), alice, mode, apps=True)
    assert APPS in advertised(server.mcp_url("apps"), alice)
    by_name = {tool["name"]: tool for tool in tools}
    assert by_name["pay_deposit"]["_meta"]["ui"] == {"resourceUri": "ui://mcpsite/payment.html"}
    assert by_name["book_table_with_deposit"]["_meta"]["ui"] == {"resourceUri": "ui://mcpsite/payment.html"}
    assert by_name["request_refund"]["_meta"]["ui"] == {"resourceUri": "ui://mcpsite/approval.html"}
    assert by_name["show_task"]["_meta"]["ui"] == {"resourceUri": "ui://mcpsite/task.html"}
    for name in APP_ONLY:
        assert by_name[name]["_meta"]["ui"]["visibility"] == ["app"]
    assert {r["uri"] for r in resources if r["uri"].startswith("ui://")} == VIEWS
    assert read == "read"


def test_a_tenant_whose_toolsets_declare_no_view_offers_no_apps(server: LiveServer, cast: Cast) -> None:
    token = cast.token(server, "mallory", slug="other")
    assert APPS not in advertised(server.mcp_url("other"), token)
    tools, resources, read = listing(server.mcp_url("other"), token, "2026-07-28", apps=True)
    assert tools and all("ui" not in (tool.get("_meta") or {}) for tool in tools)
    assert not [r for r in resources if r["uri"].startswith("ui://")]
    assert read == "Unknown resource: ui://mcpsite/payment.html"


def test_each_view_allows_only_its_own_inline_script_and_style(server: LiveServer, alice: str, page: Any) -> None:
    with AppsHost(server.mcp_url("apps"), alice) as host:
        for uri in sorted(VIEWS):
            (content,) = host.request("resources/read", {"uri": uri})["contents"]
            assert content["mimeType"] == APP_MIME_TYPE
            assert content["_meta"]["ui"]["csp"] == {}  # no outside domain asked for
            html = content["text"]
            policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
            assert policy is not None
            assert policy.group(1).startswith("default-src 'none'; script-src 'sha256-")
            assert "unsafe" not in policy.group(1) and "http" not in policy.group(1)
            assert re.findall(r"<script\b[^>]*>", html) == ["<script>"]  # one, inline: no src anywhere
            assert not re.search(r"\b(src|href)=['\"]?https?:", html)

        view = host.show(page, "show_task", {"task_id": "tsk_none"})  # a view, rendered by the host
        view.locator("#error").wait_for(state="visible", timeout=10_000)
        frame = page.frames[1]
        injected = frame.evaluate(
            """() => new Promise((resolve) => {
                 document.addEventListener("securitypolicyviolation", (e) => resolve(e.violatedDirective));
                 const script = document.createElement("script");
                 script.textContent = "window.injected = true";
                 document.body.append(script);
               })"""
        )
        assert injected == "script-src-elem"
        assert frame.evaluate("() => window.injected") is None
        screenshot(page, "csp-refuses-an-injected-script")
