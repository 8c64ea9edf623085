"""Webhook deliveries are counted by provider and result; a provider we do not know is counted as
``unknown``, never under the name in its URL (any caller chooses that)."""

from __future__ import annotations

import httpx2

from tests.conftest import LiveServer
from tests.operate.scrape import moved, scrape

DELIVERIES = "mcpsite_webhook_deliveries_total"


def test_a_badly_signed_and_an_unknown_providers_delivery_are_counted_apart(live: LiveServer) -> None:
    before = scrape(live.url)

    unsigned = httpx2.post(f"{live.url}/approvals/webhooks/sandbox/", content=b"{}", timeout=10)
    made_up = httpx2.post(f"{live.url}/approvals/webhooks/made-up-pay/", content=b"{}", timeout=10)

    assert (unsigned.status_code, made_up.status_code) == (400, 404)
    after = scrape(live.url)
    assert moved(before, after, DELIVERIES, provider="sandbox", result="rejected") == 1
    assert moved(before, after, DELIVERIES, provider="unknown", result="unknown_provider") == 1
    assert not any("made-up-pay" in str(labels) for _, labels in after)
