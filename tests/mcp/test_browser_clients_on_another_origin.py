"""Browser-based MCP clients: a page on another origin may call the MCP and OAuth endpoints when
its origin is in MCPSITE_CORS_ALLOWED_ORIGINS; any other origin is blocked by the browser. A
preflight authenticates nothing: the actual request still needs a member's token."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2
import pytest

from tests.conftest import Cast, LiveServer, free_port

PAGE_PORT, OTHER_PORT = free_port(), free_port()
ALLOWED = f"http://127.0.0.1:{PAGE_PORT}"  # a loopback page: passes the DNS-rebinding check either way
DISALLOWED = f"http://127.0.0.1:{OTHER_PORT}"
REMOTE = "https://app.example"  # allowed for CORS, not in MCPSITE_MCP_ALLOWED_ORIGINS' defaults

MCP_HEADERS = "authorization, content-type, mcp-method, mcp-protocol-version"
ALLOWED_HEADERS = (
    "Authorization, Content-Type, Accept, Last-Event-ID, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name"
)
EXPOSED = "Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, WWW-Authenticate"

TOOLS_LIST = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/list",
    "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    },
}

# What the page's script does: a plain fetch() with the headers an MCP client sends.
FETCH = """async ([url, token, body]) => {
  const headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                   "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"};
  if (token) headers["Authorization"] = "Bearer " + token;
  try {
    const r = await fetch(url, {method: "POST", headers, body});
    return {status: r.status, body: await r.text(), challenge: r.headers.get("WWW-Authenticate")};
  } catch (e) {
    return {blocked: String(e)};
  }
}"""


@pytest.fixture(scope="module")
def site(server_factory: Callable[..., LiveServer]) -> LiveServer:
    return server_factory(MCPSITE_CORS_ALLOWED_ORIGINS=f"{ALLOWED},{REMOTE}")


class ClientPage(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<h1>An MCP client</h1>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module", autouse=True)
def client_pages() -> Iterator[None]:
    """The client's page on two other loopback origins (real servers: Chromium lets a page reach a
    loopback address only from the loopback address space)."""
    servers = [ThreadingHTTPServer(("127.0.0.1", port), ClientPage) for port in (PAGE_PORT, OTHER_PORT)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield
    for server in servers:
        server.shutdown()
        server.server_close()


def open_page(page: Any, origin: str) -> None:
    page.goto(f"{origin}/client.html")


def preflight(url: str, origin: str, method: str = "POST", headers: str = MCP_HEADERS) -> httpx2.Response:
    return httpx2.options(
        url,
        headers={"Origin": origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": headers},
    )


def test_a_page_on_an_allowed_origin_lists_the_tools_with_a_members_token(
    site: LiveServer, cast: Cast, page: Any
) -> None:
    open_page(page, ALLOWED)
    result = page.evaluate(FETCH, [site.mcp_url(), cast.token(site), json.dumps(TOOLS_LIST)])
    assert result["status"] == 200, result
    assert {t["name"] for t in json.loads(result["body"])["result"]["tools"]} == {
        "provision",
        "delete_folder",
        "book_table",
    }


def test_a_page_on_an_allowed_origin_without_a_token_gets_401_and_reads_the_challenge(
    site: LiveServer, page: Any
) -> None:
    open_page(page, ALLOWED)
    result = page.evaluate(FETCH, [site.mcp_url(), None, json.dumps(TOOLS_LIST)])
    assert result["status"] == 401
    assert f'resource_metadata="{site.url}/.well-known/oauth-protected-resource/t/demo/mcp"' in result["challenge"]


def test_a_page_on_an_allowed_origin_with_another_tenants_token_gets_401(
    site: LiveServer, cast: Cast, page: Any
) -> None:
    open_page(page, ALLOWED)
    result = page.evaluate(FETCH, [site.mcp_url(), cast.token(site, "mallory", "other"), json.dumps(TOOLS_LIST)])
    assert result["status"] == 401
    assert 'error="invalid_token"' in result["challenge"]


def test_a_page_on_another_origin_is_blocked_by_the_browser(site: LiveServer, cast: Cast, page: Any) -> None:
    open_page(page, DISALLOWED)
    result = page.evaluate(FETCH, [site.mcp_url(), cast.token(site), json.dumps(TOOLS_LIST)])
    assert result == {"blocked": "TypeError: Failed to fetch"}


def test_a_page_on_an_allowed_origin_reads_the_authorization_server_metadata(site: LiveServer, page: Any) -> None:
    open_page(page, ALLOWED)
    metadata = page.evaluate(
        "async (url) => (await fetch(url)).json()", f"{site.url}/.well-known/oauth-protected-resource/t/demo/mcp"
    )
    assert metadata["resource"] == site.mcp_url()
    server = page.evaluate(
        "async (url) => (await fetch(url)).json()", f"{site.url}/.well-known/oauth-authorization-server"
    )
    assert server["token_endpoint"] == f"{site.url}/o/token/"


def test_a_preflight_on_the_mcp_url_is_answered_without_a_token(site: LiveServer) -> None:
    response = preflight(site.mcp_url(), ALLOWED)
    assert response.status_code == 204
    assert response.headers["access-control-allow-origin"] == ALLOWED
    assert response.headers["access-control-allow-methods"] == "GET, POST, DELETE"
    assert response.headers["access-control-allow-headers"] == ALLOWED_HEADERS
    assert response.headers["vary"] == "Origin"
    assert "access-control-allow-credentials" not in response.headers
    assert "www-authenticate" not in response.headers


@pytest.mark.parametrize("origin", [DISALLOWED, "null", "http://127.0.0.1"])
def test_a_preflight_from_another_origin_is_refused_without_cors_headers(site: LiveServer, origin: str) -> None:
    response = preflight(site.mcp_url(), origin)
    assert response.status_code == 403
    assert "access-control-allow-origin" not in response.headers


def test_a_preflight_for_a_method_the_endpoint_does_not_serve_is_refused(site: LiveServer) -> None:
    response = preflight(site.mcp_url(), ALLOWED, method="PUT")
    assert response.status_code == 403
    assert "access-control-allow-origin" not in response.headers


def test_a_preflight_for_an_unknown_tenant_is_answered_as_for_a_real_one(site: LiveServer) -> None:
    """Whether a tenant exists is told to no one but its members
    (tests/mcp/test_an_unknown_tenant_answers_as_a_private_one.py)."""
    unknown, real = preflight(site.mcp_url("nobody"), ALLOWED), preflight(site.mcp_url(), ALLOWED)
    assert unknown.status_code == real.status_code == 204
    # Each carries its own request id (`mcpsite.logs`), which tells nothing of the tenant.
    assert unknown.headers["x-request-id"] != real.headers["x-request-id"]
    per_request = {"date", "x-request-id"}
    assert [(k, v) for k, v in unknown.headers.multi_items() if k not in per_request] == [
        (k, v) for k, v in real.headers.multi_items() if k not in per_request
    ]


def test_an_actual_cross_origin_response_exposes_the_mcp_headers_and_never_allows_credentials(
    site: LiveServer, cast: Cast
) -> None:
    response = httpx2.post(
        site.mcp_url(),
        content=json.dumps(TOOLS_LIST).encode(),
        headers={
            "Origin": ALLOWED,
            "Authorization": f"Bearer {cast.token(site)}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Mcp-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/list",
        },
    )
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == ALLOWED
    assert response.headers["access-control-expose-headers"] == EXPOSED
    assert response.headers["vary"] == "Origin"
    assert "access-control-allow-credentials" not in response.headers


def test_an_origin_allowed_for_cors_passes_the_dns_rebinding_check(site: LiveServer, cast: Cast) -> None:
    """Not a loopback origin, so only MCPSITE_CORS_ALLOWED_ORIGINS lets it past the SDK's Origin check."""
    headers = {
        "Origin": REMOTE,
        "Authorization": f"Bearer {cast.token(site)}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Mcp-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/list",
    }
    response = httpx2.post(site.mcp_url(), content=json.dumps(TOOLS_LIST).encode(), headers=headers)
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == REMOTE
    refused = httpx2.post(
        site.mcp_url(), content=json.dumps(TOOLS_LIST).encode(), headers={**headers, "Origin": "https://evil.example"}
    )
    assert refused.status_code == 403
    assert "access-control-allow-origin" not in refused.headers


@pytest.mark.parametrize(
    ("path", "method"),
    [
        ("/.well-known/oauth-authorization-server", "GET"),
        ("/o/register/", "POST"),
        ("/o/token/", "POST"),
        ("/o/revoke_token/", "POST"),
    ],
)
def test_a_preflight_on_an_oauth_endpoint_is_answered(site: LiveServer, path: str, method: str) -> None:
    response = preflight(f"{site.url}{path}", ALLOWED, method=method, headers="content-type")
    assert response.status_code == 204
    assert response.headers["access-control-allow-origin"] == ALLOWED
    assert response.headers["access-control-allow-methods"] == method
    assert "access-control-allow-credentials" not in response.headers
    refused = preflight(f"{site.url}{path}", DISALLOWED, method=method, headers="content-type")
    assert refused.status_code == 403
    assert "access-control-allow-origin" not in refused.headers


def test_a_token_endpoint_error_is_readable_from_an_allowed_origin(site: LiveServer) -> None:
    response = httpx2.post(
        f"{site.url}/o/token/",
        data={"grant_type": "authorization_code", "code": "nope", "client_id": "nobody"},
        headers={"Origin": ALLOWED},
    )
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"
    assert response.headers["access-control-allow-origin"] == ALLOWED
    assert "Origin" in response.headers["vary"]
    assert "access-control-allow-credentials" not in response.headers


def test_other_django_pages_get_no_cors_headers(site: LiveServer) -> None:
    response = httpx2.get(f"{site.url}/accounts/login/", headers={"Origin": ALLOWED})
    assert response.status_code == 200
    assert "access-control-allow-origin" not in response.headers
    assert preflight(f"{site.url}/o/authorize/", ALLOWED, method="GET").status_code != 204


def test_the_protected_resource_metadata_stays_public_to_any_origin(site: LiveServer) -> None:
    """RFC 9728 metadata is public; the SDK serves it with `*` (no credentials), once."""
    url = f"{site.url}/.well-known/oauth-protected-resource/t/demo/mcp"
    response = httpx2.get(url, headers={"Origin": DISALLOWED})
    assert response.status_code == 200
    assert response.headers.get_list("access-control-allow-origin") == ["*"]
    assert preflight(url, DISALLOWED, method="GET", headers="mcp-protocol-version").status_code == 200
