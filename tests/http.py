"""Plain HTTP against a live server, as a browser would send it: CSRF tokens, sign-in, messages."""

from __future__ import annotations

import re

import httpx2

from tests.conftest import LiveServer


def csrf(page: httpx2.Response) -> str:
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert match, f"no CSRF token on {page.url}"
    return match.group(1)


def management_forms(page: httpx2.Response) -> dict[str, str]:
    """The management fields of every inline formset on an admin page (``roles-TOTAL_FORMS``, ...),
    as a browser sends them back with the form."""
    return dict(re.findall(r'name="([\w-]+-(?:TOTAL|INITIAL|MIN_NUM|MAX_NUM)_FORMS)"[^>]*value="(\d*)"', page.text))


def signed_in(live: LiveServer, username: str, password: str) -> httpx2.Client:
    http = httpx2.Client(base_url=live.url, headers={"Referer": f"{live.url}/"}, timeout=10)
    form = http.get("/accounts/login/")
    response = http.post(
        "/accounts/login/", data={"csrfmiddlewaretoken": csrf(form), "username": username, "password": password}
    )
    assert response.status_code == 302, "sign-in failed"
    return http


def admin_messages(page: httpx2.Response) -> str:
    """The Django messages a page shows (the admin says there what an action did, or refused)."""
    return " ".join(re.findall(r'<li class="(?:success|info|warning|error)">(.*?)</li>', page.text, re.S))


def modern_tool_call(name: str, arguments: dict[str, object], *, token: str, request_id: str) -> tuple[dict, dict]:
    """A self-contained 2026-07-28 ``tools/call`` as a client POSTs it: the body and its headers,
    with a bearer token and an ``X-Request-ID`` of the caller's choosing."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
        "X-Request-ID": request_id,
    }
    return body, headers
