"""The approvals app's gauges for ``/metrics`` (named in ``MCPSITE_METRICS_COLLECTORS``)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import Metric

from approvals.models import Elicitation
from mcpsite.metrics import count_by_choice


class PendingElicitations:
    """Pending URL-mode elicitations by kind (payment, approval, consent): one grouped query on the
    indexed status."""

    def collect(self) -> Iterator[Metric]:
        yield count_by_choice(
            "mcpsite_pending_elicitations",
            "Pending URL-mode elicitations by kind.",
            "kind",
            Elicitation.objects.filter(status=Elicitation.Status.PENDING),
            "kind",
            Elicitation.Kind.values,
        )
