"""The approvals app's gauges for ``/metrics`` (named in ``MCPSITE_METRICS_COLLECTORS``)."""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Count
from prometheus_client.core import GaugeMetricFamily, Metric

from approvals.models import Elicitation


class PendingElicitations:
    """Pending URL-mode elicitations by kind (payment, approval, consent): one grouped query on the
    indexed status."""

    def collect(self) -> Iterator[Metric]:
        gauge = GaugeMetricFamily(
            "mcpsite_pending_elicitations", "Pending URL-mode elicitations by kind.", labels=["kind"]
        )
        pending = Elicitation.objects.filter(status=Elicitation.Status.PENDING)
        counts = dict(pending.values_list("kind").annotate(n=Count("pk")).order_by())
        for kind in Elicitation.Kind.values:
            gauge.add_metric([kind], counts.get(kind, 0))
        yield gauge
