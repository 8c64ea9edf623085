"""The beat deletes audit rows older than ``MCPSITE_AUDIT_RETENTION_DAYS``, oldest first, a bounded
batch per statement and a bounded number of batches a run: a backlog is worked off over runs."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from audit.conf import audit_settings
from audit.models import ToolCall
from audit.tasks import toolcalls_purge
from mcpsite.models import Tenant

pytestmark = pytest.mark.django_db


def test_old_rows_go_two_batches_a_run_and_recent_ones_stay() -> None:
    now = timezone.now()
    demo = Tenant.objects.get(slug="demo")
    ages = [40, 39, 38, 37, 36, 29, 1]  # days; the retention below is 30
    ids = [
        ToolCall.objects.create(
            at=now - timedelta(days=age),
            tenant=demo,
            tool="provision",
            arguments_digest="a" * 64,
            outcome=ToolCall.Outcome.RESULT,
            duration_ms=1.0,
            generation="2026-07-28",
        ).pk
        for age in ages
    ]
    conf = {**audit_settings(), "RETENTION_DAYS": 30, "DELETE_BATCH_SIZE": 2, "DELETE_BATCHES_PER_RUN": 2}

    with override_settings(AUDIT=conf):
        assert toolcalls_purge.apply().get() == 4
        assert list(ToolCall.objects.filter(pk__in=ids).order_by("at").values_list("pk", flat=True)) == ids[4:]
        assert toolcalls_purge.apply().get() == 1
        assert toolcalls_purge.apply().get() == 0
    assert list(ToolCall.objects.filter(pk__in=ids).order_by("at").values_list("pk", flat=True)) == ids[5:]
