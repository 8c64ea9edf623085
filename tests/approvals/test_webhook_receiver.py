"""The receiver's answers: refused deliveries (400) change nothing; verified ones are recorded
once, and money for an unknown, ended or differently priced elicitation is flagged for staff."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from typing import Any

import httpx2
import pytest
from django.db.models import F

from approvals.models import Elicitation, WebhookDelivery
from approvals.providers import stripe_signature_header
from approvals.providers.sandbox import webhook_secret
from approvals.services.expiry import elicitations_expire
from tests.approvals.conftest import deliver, open_payment, payment_event
from tests.conftest import Cast, LiveServer


@pytest.fixture
def pending(cast: Cast) -> Elicitation:
    """A pending 20 EUR payment, opened the way a resolver opens it."""
    return open_payment(tenant_id=cast.tenant("demo").pk, reference="deposit-test")


def signed(body: bytes, **kwargs: Any) -> dict[str, str]:
    return {"Stripe-Signature": stripe_signature_header(body=body, secret=webhook_secret(), **kwargs)}


def assert_nothing_changed(row: Elicitation, event_id: str) -> None:
    row.refresh_from_db()
    assert row.status == Elicitation.Status.PENDING
    assert not WebhookDelivery.objects.filter(event_id=event_id).exists()


def test_valid_delivery_completes_the_payment(server: LiveServer, pending: Elicitation) -> None:
    response = deliver(server, payment_event(pending))
    assert (response.status_code, response.json()["outcome"]) == (200, "completed")
    pending.refresh_from_db()
    assert pending.status == Elicitation.Status.COMPLETED


def test_bad_signature_is_refused(server: LiveServer, pending: Elicitation) -> None:
    event = payment_event(pending)
    response = deliver(server, event, headers={"Stripe-Signature": f"t={int(time.time())},v1={'0' * 64}"})
    assert (response.status_code, response.json()) == (400, {"error": "bad signature"})
    assert_nothing_changed(pending, event["id"])


def test_signature_made_with_another_secret_is_refused(server: LiveServer, pending: Elicitation) -> None:
    event = payment_event(pending)
    body = json.dumps(event).encode()
    header = stripe_signature_header(body=body, secret="whsec_not_ours")
    response = deliver(server, body=body, headers={"Stripe-Signature": header})
    assert (response.status_code, response.json()) == (400, {"error": "bad signature"})
    assert_nothing_changed(pending, event["id"])


def test_missing_signature_is_refused(server: LiveServer, pending: Elicitation) -> None:
    event = payment_event(pending)
    response = deliver(server, body=json.dumps(event).encode(), headers={})
    assert (response.status_code, response.json()) == (400, {"error": "missing signature"})
    assert_nothing_changed(pending, event["id"])


def test_stale_timestamp_is_refused(server: LiveServer, pending: Elicitation) -> None:
    event = payment_event(pending)
    response = deliver(server, event, timestamp=int(time.time()) - 301)  # tolerance is 300 s
    assert (response.status_code, response.json()) == (400, {"error": "stale timestamp"})
    assert_nothing_changed(pending, event["id"])


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]", b'{"id": "evt_malformed"}', b"\xff\xfe"])
def test_malformed_body_is_refused_even_when_signed(server: LiveServer, pending: Elicitation, body: bytes) -> None:
    headers = {"Stripe-Signature": f"t={int(time.time())},v1={'0' * 64}"}
    if body != b"\xff\xfe":  # not UTF-8: cannot even be signed the Stripe way
        headers = signed(body)
    response = deliver(server, body=body, headers=headers)
    assert (response.status_code, response.json()) == (400, {"error": "malformed body"})
    assert_nothing_changed(pending, "evt_malformed")


def test_unknown_elicitation_is_recorded_and_flagged(server: LiveServer, pending: Elicitation) -> None:
    event = payment_event(pending)
    event["data"]["object"]["client_reference_id"] = "el_no_such_elicitation"
    response = deliver(server, event)
    assert (response.status_code, response.json()["outcome"], response.json()["flagged"]) == (
        200,
        "unknown_elicitation",
        True,
    )
    assert WebhookDelivery.objects.get(event_id=event["id"]).flagged
    pending.refresh_from_db()
    assert pending.status == Elicitation.Status.PENDING


def test_payment_for_an_expired_elicitation_is_recorded_and_flagged(server: LiveServer, pending: Elicitation) -> None:
    Elicitation.objects.filter(pk=pending.pk).update(expires_at=F("created_at") + timedelta(milliseconds=1))
    elicitations_expire()
    event = payment_event(pending)
    response = deliver(server, event)
    assert (response.status_code, response.json()["outcome"], response.json()["flagged"]) == (200, "not_pending", True)
    assert WebhookDelivery.objects.get(event_id=event["id"]).elicitation_id == pending.pk
    pending.refresh_from_db()
    assert pending.status == Elicitation.Status.EXPIRED


def test_wrong_amount_is_flagged_and_completes_nothing(server: LiveServer, pending: Elicitation) -> None:
    event = payment_event(pending)
    event["data"]["object"]["amount_total"] = 1
    response = deliver(server, event)
    assert (response.status_code, response.json()["outcome"], response.json()["flagged"]) == (200, "mismatch", True)
    pending.refresh_from_db()
    assert pending.status == Elicitation.Status.PENDING


def test_duplicate_delivery_is_acknowledged_and_changes_nothing(server: LiveServer, pending: Elicitation) -> None:
    event = payment_event(pending)
    assert deliver(server, event).json()["outcome"] == "completed"
    pending.refresh_from_db()
    completed_at = pending.completed_at

    response = deliver(server, event)

    assert (response.status_code, response.json()) == (200, {"received": True, "duplicate": True})
    pending.refresh_from_db()
    assert pending.completed_at == completed_at
    assert WebhookDelivery.objects.filter(event_id=event["id"]).count() == 1


def test_unknown_provider_is_not_found(server: LiveServer) -> None:
    assert httpx2.post(f"{server.url}/approvals/webhooks/nopay/", content=b"{}").status_code == 404
