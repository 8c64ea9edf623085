"""The audit app's gauge for ``/metrics`` (named in ``MCPSITE_METRICS_COLLECTORS``)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

from django.conf import settings
from prometheus_client.core import GaugeMetricFamily, Metric
from redis import RedisError

from audit.conf import audit_settings
from audit.handoff import client

logger = logging.getLogger(__name__)


class QueuedCalls:
    """Entries (up to 200 calls each) waiting in Redis for the beat's drain (`audit.handoff`): a
    number that only grows says no drain is running, before calls are dropped. None without Redis."""

    def collect(self) -> Iterator[Metric]:
        if not settings.REDIS_URL:
            return
        try:
            with client() as redis:
                queued = int(redis.llen(audit_settings()["QUEUE_KEY"]))
        except RedisError:  # Redis down: this gauge is left out, not the scrape
            logger.exception("metrics: the audit's queued calls could not be read from Redis")
            return
        yield GaugeMetricFamily(
            "mcpsite_audit_queued_batches", "Audit entries in Redis not yet written by the beat's drain.", value=queued
        )
