"""A scrape whose Redis is down still answers: the gauge read from Redis (the audit's queued
entries) is left out and logged, the database's gauges and the counters are there. Redis here is a
loopback port where nothing listens."""

from __future__ import annotations

import logging

import pytest
from django.test import override_settings

from mcpsite import metrics
from tests.conftest import free_port


@pytest.mark.django_db
def test_redis_down_leaves_out_the_audit_queue_gauge_and_nothing_else(caplog: pytest.LogCaptureFixture) -> None:
    with override_settings(REDIS_URL=f"redis://127.0.0.1:{free_port()}/0"), caplog.at_level(logging.ERROR):
        text = metrics.exposition().decode()

    assert "mcpsite_audit_queued_batches" not in text
    assert "mcpsite_keyring_keys{" in text  # a gauge read from the database
    assert "mcpsite_audit_dropped_total" in text  # a counter of this process
    assert [r.getMessage() for r in caplog.records if r.name == "mcpsite.metrics"] == [
        "metrics: QueuedCalls could not read its store; its gauges are left out"
    ]


@pytest.mark.django_db
def test_with_redis_up_the_gauge_is_there() -> None:
    assert "mcpsite_audit_queued_batches " in metrics.exposition().decode()
