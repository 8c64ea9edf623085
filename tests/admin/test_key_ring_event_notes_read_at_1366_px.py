"""The key ring events list at 1366 px: the Note column is wide enough to read (it was squeezed
to one character beside the nav sidebar, the filters and a 40-character OAuth client id), and
the client id is shortened, whole on hover. Headless Chromium, screenshot in test-output/."""

from __future__ import annotations

import uuid
from typing import Any

from mcpsite.actors import Via
from mcpsite.models import KeyRingEvent
from tests.conftest import ROOT, Cast, LiveServer, sign_in_to_admin

SHOTS = ROOT / "test-output" / "screenshots"
NOTE = "override: rounds sealed with it before 12:00:00 UTC now fail with -32602"


def test_staff_read_the_note_of_a_key_ring_event_at_1366_px(live: LiveServer, cast: Cast, page: Any) -> None:
    client = uuid.uuid4().hex + "AbCdEfGh"  # as long as an OAuth client id
    kid = uuid.uuid4().hex[:8]
    KeyRingEvent.objects.create(
        action=KeyRingEvent.Action.RETIRED_NOW,
        kid=kid,
        actor_id=cast.user("staff").pk,
        note=NOTE,
        oauth_client=client,
        via=Via.API,
    )
    page.set_viewport_size({"width": 1366, "height": 800})
    sign_in_to_admin(page, live, f"/admin/mcpsite/keyringevent/?q={kid}")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "key-ring-events.png"), full_page=True)

    row = page.locator(f"#result_list tr:has-text('{kid}')")
    assert row.locator("td.field-note").inner_text() == NOTE
    assert row.locator("td.field-acted_via").inner_text() == f"API client {client[:10]}\N{HORIZONTAL ELLIPSIS}"
    assert row.locator("td.field-acted_via code").get_attribute("title") == client
    note_width = row.locator("td.field-note").evaluate("td => td.getBoundingClientRect().width")
    assert note_width >= 300, note_width
    # The note wraps at most onto a few lines, and nothing runs off the screen sideways.
    assert row.locator("td.field-note").evaluate("td => td.getBoundingClientRect().height") < 80
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
