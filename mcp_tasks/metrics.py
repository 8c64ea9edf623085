"""The tasks app's gauges for ``/metrics`` (named in ``MCPSITE_METRICS_COLLECTORS``)."""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Count
from prometheus_client.core import GaugeMetricFamily, Metric

from mcp_tasks.models import Task


class TaskStates:
    """Tasks by status, and the queue: working tasks no runner has started yet (claimed by no
    worker). Two queries on the indexed status; the sweep keeps the table to its TTL."""

    def collect(self) -> Iterator[Metric]:
        states = GaugeMetricFamily("mcpsite_tasks", "Durable tasks by status.", labels=["status"])
        counts = dict(Task.objects.values_list("status").annotate(n=Count("pk")).order_by())
        for status in Task.Status.values:
            states.add_metric([status], counts.get(status, 0))
        yield states
        queued = Task.objects.filter(status=Task.Status.WORKING, worker="").count()
        yield GaugeMetricFamily(
            "mcpsite_tasks_queued", "Working tasks waiting for a runner to start them.", value=queued
        )
