"""The audit app's gauge for ``/metrics`` (named in ``MCPSITE_METRICS_COLLECTORS``)."""

from __future__ import annotations

from collections.abc import Iterator

from django.conf import settings
from prometheus_client.core import GaugeMetricFamily, Metric

from audit.conf import audit_settings
from audit.handoff import client


class QueuedCalls:
    """Entries (up to 200 calls each) waiting in Redis for the beat's drain (`audit.handoff`): a
    number that only grows says no drain is running, before calls are dropped. None without Redis."""

    def collect(self) -> Iterator[Metric]:
        if not settings.REDIS_URL:
            return
        with client() as redis:  # Redis down: the scrape leaves this gauge out (`mcpsite.metrics`)
            queued = int(redis.llen(audit_settings()["QUEUE_KEY"]))
        yield GaugeMetricFamily(
            "mcpsite_audit_queued_batches", "Audit entries in Redis not yet written by the beat's drain.", value=queued
        )
