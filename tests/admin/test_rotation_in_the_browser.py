"""The rotation flow as staff click it, in headless Chromium, with screenshots in test-output/."""

from __future__ import annotations

import time
from typing import Any

from mcpsite.models import KeyRingEvent, RequestStateKey
from tests.conftest import ROOT, Cast, LiveServer, sign_in_to_admin

SHOTS = ROOT / "test-output" / "screenshots"


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"rotation-{name}.png"), full_page=True)


def run_action(page: Any, kid: str, action: str) -> str:
    page.check(f"tr:has-text('{kid}') input.action-select")
    page.select_option("select[name=action]", action)
    page.click("button[name=index]")
    page.wait_for_load_state()
    return str(page.inner_text("ul.messagelist"))


def test_staff_rotate_the_ring_in_the_admin(live: LiveServer, cast: Cast, page: Any) -> None:
    old = RequestStateKey.objects.get(phase=RequestStateKey.Phase.MINTING)
    sign_in_to_admin(page, live, "/admin/mcpsite/requeststatekey/")
    assert "live process" in page.inner_text("#rollout-summary")
    shot(page, "1-ring")

    page.click("ul.object-tools a.addlink")
    page.click("input[name=generate]")
    assert "Generated key" in page.inner_text("ul.messagelist")
    new = RequestStateKey.objects.filter(phase=RequestStateKey.Phase.VERIFYING).latest("created_at")
    shot(page, "2-added")

    deadline = time.monotonic() + 20
    while "now mints new requestState" not in (message := run_action(page, new.kid, "promote")):
        assert "live processes have loaded key" in message or "s more" in message, message
        assert time.monotonic() < deadline
        time.sleep(0.5)
    shot(page, "3-promoted")

    refused = run_action(page, old.kid, "retire")
    assert "may still be in flight" in refused
    shot(page, "4-retire-refused")

    forced = run_action(page, old.kid, "retire_now")
    assert f"Key {old.kid} retired." in forced
    assert "now gets -32602" in forced
    shot(page, "5-retired-now")
    assert "retired now (override)" in page.inner_text("#ring-audit")
    assert KeyRingEvent.objects.filter(kid=old.kid, action="retired_now", actor__username="staff").exists()
