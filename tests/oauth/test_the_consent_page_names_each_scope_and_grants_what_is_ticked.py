"""The consent page shows each scope a client asks for in words, at 1366 px, and lets the member
grant a subset: ``mcp`` always (a token without it calls nothing), each tool scope only if left
ticked. The token then carries just what was granted. A tool scope ticked but never asked for is
not granted. Headless Chromium, screenshot in test-output/."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
from django.core.cache import cache
from oauth2_provider.models import AccessToken

from tests.conftest import ROOT, Cast, LiveServer
from tests.oauth.browser import CALLBACK
from tests.oauth.helpers import Pkce, authorize_query, exchange, register_client

SHOTS = ROOT / "test-output" / "screenshots"


def consent_page(live: LiveServer, page: Any, scope: str) -> tuple[str, Pkce]:
    """alice signed in on the consent page of a fresh client asking for `scope`."""
    cache.delete("mcpsite:dcr:127.0.0.1")  # the suite registers many clients from this address
    client_id = register_client(live).json()["client_id"]
    pkce = Pkce.new()
    page.set_viewport_size({"width": 1366, "height": 800})
    page.route(f"{CALLBACK}**", lambda route: route.fulfill(status=200, body="You can close this window."))
    page.goto(live.url + authorize_query(client_id, live.mcp_url(), pkce, scope=scope))
    page.fill("#id_username", "alice")
    page.fill("#id_password", "alice-password-1")
    page.click("button[type=submit]")
    page.wait_for_selector("#authorizationForm")
    return client_id, pkce


def allow(live: LiveServer, page: Any, client_id: str, pkce: Pkce) -> httpx2.Response:
    with page.expect_request(lambda request: request.url.startswith(CALLBACK)) as info:
        page.click("button[name=allow]")
    code = parse_qs(urlsplit(info.value.url).query)["code"][0]
    return exchange(live, client_id, code, pkce.verifier, live.mcp_url())


def test_each_scope_is_named_in_words_and_a_subset_grant_yields_just_that_subset(
    live: LiveServer, cast: Cast, page: Any
) -> None:
    client_id, pkce = consent_page(live, page, "mcp files:write payments")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "consent-scopes.png"), full_page=True)

    items = page.locator("ul.scopes li")
    assert [text.split() for text in items.all_inner_texts()] == [
        "Call this tenant's MCP tools mcp (always)".split(),
        "Delete folders and the files in them files:write".split(),
        "Pay deposits and ask for refunds (each payment still opens a page you confirm) payments".split(),
    ]
    mcp_box = page.locator("input[name=granted][value=mcp]")
    assert mcp_box.is_checked() and mcp_box.is_disabled()
    assert page.locator("input[name=granted][value='files:write']").is_checked()
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0

    page.uncheck("input[name=granted][value=payments]")
    token = allow(live, page, client_id, pkce)
    assert token.status_code == 200, token.text
    assert token.json()["scope"] == "mcp files:write"
    assert AccessToken.objects.get(token=token.json()["access_token"]).scope == "mcp files:write"


def test_unticking_every_tool_scope_still_grants_mcp(live: LiveServer, cast: Cast, page: Any) -> None:
    client_id, pkce = consent_page(live, page, "mcp files:write")
    page.uncheck("input[name=granted][value='files:write']")
    token = allow(live, page, client_id, pkce)
    assert token.status_code == 200, token.text
    assert token.json()["scope"] == "mcp"


def test_a_ticked_scope_the_client_never_asked_for_is_not_granted(live: LiveServer, cast: Cast, page: Any) -> None:
    client_id, pkce = consent_page(live, page, "mcp")
    # The page offers only what was asked; a box added to it by hand grants nothing more.
    page.evaluate(
        """() => document.querySelector('#authorizationForm').insertAdjacentHTML(
            'beforeend', '<input type="checkbox" name="granted" value="payments" checked>')"""
    )
    token = allow(live, page, client_id, pkce)
    assert token.status_code == 200, token.text
    assert token.json()["scope"] == "mcp"
