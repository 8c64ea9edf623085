"""Operators list elicitations by tenant, kind, status, age and flag, newest first, a page at a
time by cursor; and list webhook deliveries, the flagged ones apart."""

from __future__ import annotations

import uuid
from datetime import timedelta
from decimal import Decimal
from typing import Any

import httpx2
import pytest

from approvals.models import Elicitation, WebhookDelivery
from approvals.services.opening import PaymentTerms, elicitation_open
from approvals.services.staff import elicitation_end_by_staff
from mcpsite.actors import Actor, Via
from mcpsite.models import Tenant
from tests.api.conftest import api, machine_client
from tests.conftest import Cast, LiveServer
from tools_app.principal import Principal


def opened(tenant: Tenant, kind: str, *, age: timedelta = timedelta(0)) -> Elicitation:
    row = elicitation_open(
        tenant_id=tenant.pk,
        principal=Principal(f"client-{uuid.uuid4().hex[:8]}", "issuer", "1"),
        tool="request_refund",
        args_digest=uuid.uuid4().hex,
        kind=kind,
        reference=f"{kind}-listed",
        message="listed",
        payment=PaymentTerms(amount=Decimal("5.00"), currency="EUR") if kind == "payment" else None,
    )
    if age:
        Elicitation.objects.filter(pk=row.pk).update(created_at=row.created_at - age)
    return row


@pytest.fixture
def rows(cast: Cast) -> dict[str, Elicitation]:
    """At a tenant of their own: an old approval, a denied approval, a consent, a flagged payment."""
    tenant = Tenant.objects.create(slug=f"list-{uuid.uuid4().hex[:6]}", name="Lists", toolsets=["demo"])
    made = {
        "old": opened(tenant, "approval", age=timedelta(hours=2)),
        "denied": opened(tenant, "approval"),
        "consent": opened(tenant, "consent"),
        "paid": opened(tenant, "payment"),
    }
    elicitation_end_by_staff(elicitation=made["denied"], action="deny", actor=Actor(Via.STAFF, cast.user("staff")))
    WebhookDelivery.objects.create(
        provider="sandbox",
        event_id=f"evt_{uuid.uuid4().hex}",
        event_type="checkout.session.completed",
        elicitation=made["paid"],
        outcome=WebhookDelivery.Outcome.MISMATCH,
        flagged=True,
    )
    return made


def ids(http: httpx2.Client, **params: Any) -> list[str]:
    response = http.get("/elicitations/", params=params)
    assert response.status_code == 200, response.text
    return [row["id"] for row in response.json()["results"]]


def test_filters_pick_the_rows_asked_for(server: LiveServer, rows: dict[str, Elicitation]) -> None:
    tenant = rows["old"].tenant.slug
    with api(server, machine_client(server, "ops", ["approvals:read"]).token) as http:
        assert ids(http, tenant=tenant) == [rows[n].pk for n in ("paid", "consent", "denied", "old")]
        assert ids(http, tenant=tenant, kind="approval") == [rows["denied"].pk, rows["old"].pk]
        assert ids(http, tenant=tenant, kind="approval", status="pending") == [rows["old"].pk]
        assert ids(http, tenant=tenant, status="declined") == [rows["denied"].pk]
        assert ids(http, tenant=tenant, older_than=3600) == [rows["old"].pk]
        assert ids(http, tenant=tenant, newer_than=3600) == [rows[n].pk for n in ("paid", "consent", "denied")]
        assert ids(http, tenant=tenant, flagged="true") == [rows["paid"].pk]
        assert rows["paid"].pk not in ids(http, tenant=tenant, flagged="false")

        detail = http.get(f"/elicitations/{rows['denied'].pk}/").json()
        assert (detail["tenant"], detail["status"], detail["completed_by"]) == (tenant, "declined", "staff")
        assert [(e["source"], e["status"], e["actor"]) for e in detail["events"]] == [
            ("client", "pending", None),
            ("staff", "declined", "staff"),
        ]
        bad = http.get("/elicitations/", params={"kind": "refund"})
        assert (bad.status_code, bad.json()) == (400, {"kind": "one of payment, approval, consent"})
        bad = http.get("/elicitations/", params={"older_than": "an hour"})
        assert (bad.status_code, bad.json()) == (400, {"older_than": "a whole number of seconds"})


def test_pages_follow_the_cursor_newest_first_without_repeats(server: LiveServer, rows: dict[str, Elicitation]) -> None:
    tenant = rows["old"].tenant.slug
    seen: list[str] = []
    with api(server, machine_client(server, "ops", ["approvals:read"]).token) as http:
        page = http.get("/elicitations/", params={"tenant": tenant, "page_size": 1}).json()
        assert page["previous"] is None
        while True:
            seen += [row["id"] for row in page["results"]]
            if page["next"] is None:
                break
            assert "cursor=" in page["next"]
            page = http.get(page["next"]).json()
    assert seen == [rows[n].pk for n in ("paid", "consent", "denied", "old")]


def test_flagged_webhook_deliveries_are_listed_apart(server: LiveServer, rows: dict[str, Elicitation]) -> None:
    with api(server, machine_client(server, "ops", ["approvals:read"]).token) as http:
        flagged = http.get("/webhook-deliveries/", params={"flagged": "true", "page_size": 500}).json()["results"]
        everything = http.get("/webhook-deliveries/", params={"page_size": 500}).json()["results"]
    assert flagged and all(d["flagged"] for d in flagged)
    assert rows["paid"].pk in [d["elicitation"] for d in flagged]
    assert len(everything) >= len(flagged)
    assert set(flagged[0]) == {
        "id",
        "provider",
        "event_id",
        "event_type",
        "received_at",
        "elicitation",
        "outcome",
        "flagged",
    }
