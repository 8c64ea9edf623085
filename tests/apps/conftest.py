"""Tenants serving the views (`payments`, `long_running`), their own server, one headless
Chromium per module and a page at 1366 px whose screenshots are named by the test."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from demo.models import Booking
from mcpsite.models import Tenant
from tests.conftest import CHROMIUM, CHROMIUM_ARGS, ROOT, Cast, LiveServer

SHOTS = ROOT / "test-output" / "screenshots"
TOOLSETS = ["payments", "long_running"]


@pytest.fixture(scope="package")
def apps_tenants(django_db_setup: None, django_db_blocker: Any) -> None:
    """`apps` (alice and bob) and `apps-two` (alice alone), both serving every view."""
    from django.contrib.auth import get_user_model

    with django_db_blocker.unblock():
        users = get_user_model().objects
        for slug, members in (("apps", ["alice", "bob"]), ("apps-two", ["alice"])):
            tenant, _ = Tenant.objects.update_or_create(
                slug=slug, defaults={"name": slug.title(), "toolsets": TOOLSETS}
            )
            tenant.members.add(*users.filter(username__in=members))


@pytest.fixture(scope="package")
def server(server_factory: Callable[..., LiveServer], apps_tenants: None) -> Iterator[LiveServer]:
    server = server_factory(MCPSITE_APPROVALS_HOLD_SECONDS="1", MCPSITE_APPROVALS_LEGACY_WAIT_SECONDS="5")
    yield server
    server.stop()


@pytest.fixture
def alice(cast: Cast, server: LiveServer) -> str:
    return cast.token(server, "alice", slug="apps")


@pytest.fixture
def booking(django_db_blocker: Any) -> int:
    with django_db_blocker.unblock():
        tenant = Tenant.objects.get(slug="apps")
        return Booking.objects.create(tenant=tenant, date=datetime.date(2026, 3, 14), party_size=4).pk


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's headless Chromium, once per module (never a browser Playwright downloads)."""
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop on this thread, which Django's async-safety check
    # mistakes for async code; the tests' ORM calls are plain sync.
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.errors = []  # what the page (or the view's frame) raised, and any CSP violation
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
    yield page
    context.close()


def screenshot(page: Any, name: str) -> None:
    """`test-output/screenshots/apps-<name>.png`, the whole host page at 1366 px."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"apps-{name}.png"), full_page=True)
    assert (SHOTS / f"apps-{name}.png").stat().st_size > 0
