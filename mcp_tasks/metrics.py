"""The tasks app's gauges for ``/metrics`` (named in ``MCPSITE_METRICS_COLLECTORS``)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily, Metric

from mcp_tasks.models import Task
from mcpsite.metrics import count_by_choice


class TaskStates:
    """Tasks by status, and the queue: working tasks no runner has started yet (claimed by no
    worker). Two queries on the indexed status; the sweep keeps the table to its TTL."""

    def collect(self) -> Iterator[Metric]:
        yield count_by_choice(
            "mcpsite_tasks", "Durable tasks by status.", "status", Task.objects.all(), "status", Task.Status.values
        )
        queued = Task.objects.filter(status=Task.Status.WORKING, worker="").count()
        yield GaugeMetricFamily(
            "mcpsite_tasks_queued", "Working tasks waiting for a runner to start them.", value=queued
        )
