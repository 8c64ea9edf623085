"""A signed delivery whose JSON nests deeper than anything a provider sends is refused where it is
parsed: 400 "body nested too deeply", nothing recorded, one log line that says so. It used to end
in a 500 with a traceback: 100,000 levels raised RecursionError in the JSON decoder, and 950 levels
parsed but raised it again when the payload was encoded for the database."""

from __future__ import annotations

import json

import pytest

from approvals.models import Elicitation, WebhookDelivery
from approvals.providers import stripe_signature_header
from approvals.providers.sandbox import webhook_secret
from mcpsite.jsonbody import MAX_DEPTH
from tests.approvals.conftest import deliver, open_payment, payment_event
from tests.conftest import Cast, LiveServer


@pytest.fixture
def pending(cast: Cast) -> Elicitation:
    return open_payment(tenant_id=cast.tenant("demo").pk, reference="deposit-nested")


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def signed_body(event: dict[str, object], levels: int) -> bytes:
    """The event with `levels` nested lists where a provider puts extra fields (``metadata``)."""
    text = json.dumps({**event, "metadata": "NESTED"}).replace('"NESTED"', nested(levels))
    return text.encode()


def signed(body: bytes) -> dict[str, str]:
    return {"Stripe-Signature": stripe_signature_header(body=body, secret=webhook_secret())}


@pytest.mark.parametrize("levels", [100_000, 950, MAX_DEPTH])
def test_a_signed_body_nested_too_deeply_is_refused_and_changes_nothing(
    server: LiveServer, pending: Elicitation, levels: int
) -> None:
    event = payment_event(pending)
    body = signed_body(event, levels)
    server.mark_log()

    response = deliver(server, body=body, headers=signed(body))

    assert (response.status_code, response.json()) == (400, {"error": "body nested too deeply"})
    pending.refresh_from_db()
    assert pending.status == Elicitation.Status.PENDING
    assert not WebhookDelivery.objects.filter(event_id=event["id"]).exists()
    log = server.log_since_mark()
    assert "Traceback" not in log
    refusals = [line for line in log.splitlines() if " WARNING " in line or " ERROR " in line]
    assert len(refusals) == 1, log
    assert refusals[0].endswith("webhook from sandbox rejected: body nested too deeply")


def test_a_body_nested_as_deep_as_allowed_is_delivered(server: LiveServer, pending: Elicitation) -> None:
    event = payment_event(pending)
    body = signed_body(event, MAX_DEPTH - 1)  # the event itself is the first level

    response = deliver(server, body=body, headers=signed(body))

    assert (response.status_code, response.json()["outcome"]) == (200, "completed")
