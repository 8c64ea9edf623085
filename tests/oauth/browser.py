"""Signing in through the real pages, in Debian's headless Chromium driven by Playwright (async API,
so it shares the event loop with the SDK's OAuth client)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qs, urlsplit

from playwright.async_api import async_playwright

from tests.conftest import CHROMIUM, CHROMIUM_ARGS, ROOT

CALLBACK = "http://127.0.0.1:33418/callback"  # loopback redirect URI; the browser never really reaches it


@asynccontextmanager
async def chromium_page() -> AsyncIterator[Any]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page()

            async def callback(route: Any) -> None:
                await route.fulfill(status=200, content_type="text/plain", body="You can close this window.")

            await page.route(f"{CALLBACK}**", callback)
            yield page
        finally:
            await browser.close()


async def screenshot(page: Any, name: str) -> None:
    shots = ROOT / "test-output" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(shots / f"{name}.png"), full_page=True)


async def sign_in_and_decide(
    page: Any, authorize_url: str, username: str, password: str, *, allow: bool = True, shot: str | None = None
) -> dict[str, list[str]]:
    """Open the authorization URL, sign in, press Allow or Deny; return the callback's query."""
    await page.goto(authorize_url)
    if "/accounts/login/" in page.url:
        await page.fill("#id_username", username)
        await page.fill("#id_password", password)
        await page.click("button[type=submit]")
        await page.wait_for_load_state()
    if page.url.startswith(CALLBACK):  # refused before any consent page (error redirect)
        return parse_qs(urlsplit(page.url).query)
    if shot:
        await screenshot(page, shot)
    async with page.expect_request(lambda request: request.url.startswith(CALLBACK)) as info:
        await page.click("button[name=allow]" if allow else "button[name=deny]")
    request = await info.value
    # Let the navigation to the callback finish before the caller moves the page on: a `goto`
    # issued while it is still in flight is interrupted by Chromium's error page.
    await page.wait_for_url(f"{CALLBACK}**")
    await page.wait_for_load_state()
    return parse_qs(urlsplit(request.url).query)
