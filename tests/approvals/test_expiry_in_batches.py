"""Thousands of rows expiring together are expired in batches (one UPDATE per batch, a bounded
number of queries, each row still audited and announced), and while the embedded beat works
through them the MCP endpoint keeps answering: the beat does not run on the thread the hot
path's database calls queue on."""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from approvals.models import Elicitation, ElicitationEvent
from approvals.services.expiry import elicitations_expire
from mcpsite.models import Tenant
from tests.conftest import Cast, LiveServer
from tests.mcp.clients import modern_post


def stale_rows(count: int, *, subject: str, status: str = Elicitation.Status.PENDING, **fields: Any) -> list[str]:
    """`count` rows past their expiry for one principal, inserted in one go."""
    now = timezone.now()
    demo = Tenant.objects.get(slug="demo")
    rows = [
        Elicitation(
            id=f"el_{uuid.uuid4().hex}",
            tenant=demo,
            subject=subject,
            tool="request_refund",
            args_digest=f"{i:064d}",
            reference=f"stale-{i}",
            kind=Elicitation.Kind.APPROVAL,
            message="stale",
            url="http://127.0.0.1/approvals/status/x/",
            status=status,
            created_at=now - timedelta(hours=2),
            expires_at=now - timedelta(hours=1),
            **fields,
        )
        for i in range(count)
    ]
    Elicitation.objects.bulk_create(rows, batch_size=2000)
    return [row.pk for row in rows]


@pytest.mark.django_db
def test_expiring_thousands_of_stale_rows_is_a_bounded_number_of_queries(
    django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    count, size = 3000, 500
    settings.APPROVALS = {**settings.APPROVALS, "EXPIRE_BATCH_SIZE": size, "EXPIRE_TICK_SECONDS": 60.0}
    stale = stale_rows(count, subject=f"s-{uuid.uuid4().hex}")
    (completed,) = stale_rows(
        1, subject=f"c-{uuid.uuid4().hex}", status=Elicitation.Status.COMPLETED, completed_at=timezone.now()
    )
    (fresh,) = stale_rows(1, subject=f"f-{uuid.uuid4().hex}")
    Elicitation.objects.filter(pk=fresh).update(expires_at=timezone.now() + timedelta(hours=1))

    with CaptureQueriesContext(connection) as queries, django_capture_on_commit_callbacks(execute=True):
        assert elicitations_expire() >= count

    # Per batch: savepoint, SELECT ... FOR UPDATE SKIP LOCKED, one UPDATE, one INSERT of the audit
    # rows, release, and the published_at UPDATE after commit; the last batch finds the rest.
    batches = math.ceil(count / size) + 1
    assert len(queries) <= 7 * batches, [q["sql"][:80] for q in queries.captured_queries[:20]]
    ended = Elicitation.objects.filter(pk__in=stale)
    assert ended.filter(status=Elicitation.Status.EXPIRED, outcome={"expired": True}).count() == count
    assert not ended.filter(published_at__isnull=True).exists()
    audit = ElicitationEvent.objects.filter(elicitation_id__in=stale)
    assert audit.filter(via="beat", status=Elicitation.Status.EXPIRED).count() == audit.count() == count
    # A completed row is never expired, and a row not yet past its expiry is left alone.
    assert Elicitation.objects.get(pk=completed).status == Elicitation.Status.COMPLETED
    assert not ElicitationEvent.objects.filter(elicitation_id=completed).exists()
    assert Elicitation.objects.get(pk=fresh).status == Elicitation.Status.PENDING


@pytest.mark.django_db
def test_the_batch_update_never_expires_a_completed_row() -> None:
    """A row completed between the batch's SELECT and its UPDATE (a webhook won) stays completed."""
    (completed,) = stale_rows(
        1, subject=f"c-{uuid.uuid4().hex}", status=Elicitation.Status.COMPLETED, completed_at=timezone.now()
    )
    assert Elicitation.objects.filter(pk=completed).expire(now=timezone.now()) == 0
    assert Elicitation.objects.get(pk=completed).status == Elicitation.Status.COMPLETED


def test_an_mcp_call_is_answered_while_the_embedded_beat_expires_thousands_of_rows(
    server_factory: Callable[..., LiveServer], cast: Cast, django_db_blocker: Any
) -> None:
    subject = f"pile-{uuid.uuid4().hex}"
    with django_db_blocker.unblock():
        pile = stale_rows(20_000, subject=subject)
    # The embedded default: no Redis, so the server runs the beat itself; small batches keep it busy.
    server = server_factory(
        MCPSITE_REDIS_URL="",
        MCPSITE_APPROVALS_EXPIRE_EVERY_SECONDS="1",
        MCPSITE_APPROVALS_EXPIRE_BATCH_SIZE="100",
    )
    try:
        with django_db_blocker.unblock():
            rows = Elicitation.objects.filter(subject=subject)
            deadline = time.monotonic() + 30
            while not rows.filter(status=Elicitation.Status.EXPIRED).exists():  # the beat has started on them
                assert time.monotonic() < deadline, "the embedded beat never started expiring the rows"
                time.sleep(0.05)
            token = cast.token(server)  # a token the server has not seen: verifying it needs the database

            started = time.monotonic()
            response = modern_post(server.mcp_url(), "tools/list", token=token)
            answered_in = time.monotonic() - started
            still_pending = rows.filter(status=Elicitation.Status.PENDING).count()

            assert response.status_code == 200, response.text
            assert "pay_deposit" in response.text
            assert answered_in < 5.0, f"tools/list waited {answered_in:.1f}s behind the beat"
            print(f"tools/list answered in {answered_in:.3f}s with {still_pending} rows still pending")

            deadline = time.monotonic() + 120
            while rows.filter(status=Elicitation.Status.PENDING).exists():
                assert time.monotonic() < deadline, "the beat did not expire the pile"
                time.sleep(0.2)
            assert ElicitationEvent.objects.filter(elicitation__subject=subject, via="beat").count() == len(pile)
    finally:
        server.stop()
        with django_db_blocker.unblock():
            Elicitation.objects.filter(subject=subject).delete()
