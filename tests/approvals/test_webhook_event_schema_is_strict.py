"""A signed delivery is parsed with a strict schema: an amount that is not a plain integer (a
list, a string, a float, a boolean), a currency that is not three letters, or an id of the
wrong type is a malformed body (400, nothing recorded), where it used to end in a 500 or be read
as something else (`[0, [2], 3]` was 20). Fields we do not read stay allowed. A signature dated
far in the future is refused like a stale one."""

from __future__ import annotations

import time
from typing import Any

import pytest

from approvals.models import Elicitation, WebhookDelivery
from tests.approvals.conftest import deliver, open_payment, payment_event
from tests.conftest import Cast, LiveServer


@pytest.fixture
def pending(cast: Cast) -> Elicitation:
    """A pending 20 EUR payment, opened the way a resolver opens it."""
    return open_payment(tenant_id=cast.tenant("demo").pk, reference="deposit-schema")


def assert_nothing_changed(row: Elicitation, event_id: str) -> None:
    row.refresh_from_db()
    assert row.status == Elicitation.Status.PENDING
    assert not WebhookDelivery.objects.filter(event_id=event_id).exists()


@pytest.mark.parametrize(
    "amount_total", [[1, 2], "1e9999999", [0, [2], 3], 2.5, True, "2000", -2000, 10**12, {"value": 2000}]
)
def test_an_amount_that_is_not_a_plain_integer_is_a_malformed_body(
    server: LiveServer, pending: Elicitation, amount_total: Any
) -> None:
    event = payment_event(pending)
    event["data"]["object"]["amount_total"] = amount_total
    response = deliver(server, event)
    assert (response.status_code, response.json()) == (400, {"error": "malformed body"})
    assert_nothing_changed(pending, event["id"])


@pytest.mark.parametrize(
    ("where", "value"),
    [
        ("currency", "euro"),
        ("currency", 978),
        ("client_reference_id", ["el_x"]),
        ("id", 12),
        ("payment_status", True),
        ("event id", 42),
        ("event type", None),
        ("data.object", "cs_1"),
    ],
)
def test_a_field_of_the_wrong_shape_is_a_malformed_body(
    server: LiveServer, pending: Elicitation, where: str, value: Any
) -> None:
    event = payment_event(pending)
    event_id = event["id"]
    if where == "event id":
        event["id"] = value
    elif where == "event type":
        event["type"] = value
    elif where == "data.object":
        event["data"]["object"] = value
    else:
        event["data"]["object"][where] = value
    response = deliver(server, event)
    assert (response.status_code, response.json()) == (400, {"error": "malformed body"})
    assert_nothing_changed(pending, event_id)


def test_fields_we_do_not_read_are_allowed(server: LiveServer, pending: Elicitation) -> None:
    event = payment_event(pending, livemode=False, api_version="2025-01-01")
    event["data"]["object"] |= {"customer_details": {"email": "a@example.com"}, "metadata": {}}
    response = deliver(server, event)
    assert (response.status_code, response.json()["outcome"]) == (200, "completed")
    pending.refresh_from_db()
    assert pending.status == Elicitation.Status.COMPLETED


def test_a_signature_dated_an_hour_ahead_is_refused(server: LiveServer, pending: Elicitation) -> None:
    event = payment_event(pending)
    response = deliver(server, event, timestamp=int(time.time()) + 3600)
    assert (response.status_code, response.json()) == (400, {"error": "future timestamp"})
    assert_nothing_changed(pending, event["id"])


def test_a_signature_dated_within_the_tolerance_ahead_is_accepted(server: LiveServer, pending: Elicitation) -> None:
    """Clocks drift: a few minutes ahead (under the 300 s tolerance) is not an attack."""
    response = deliver(server, payment_event(pending), timestamp=int(time.time()) + 120)
    assert (response.status_code, response.json()["outcome"]) == (200, "completed")
