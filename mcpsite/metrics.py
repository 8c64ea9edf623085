"""Prometheus metrics: the metric objects, the scrape-time gauges of the core, and ``/metrics``.

Every metric of the site is defined here, so their names and their labels' bounds are read in one
place. Label values are bounded: a tool's name only when the tenant's server has that tool (else
``unknown``), outcomes and reasons from fixed lists, providers only when known. No tenant slug,
user or id is a label unless ``MCPSITE_METRICS_PER_TENANT`` turns the ``tenant`` label on (small
deployments: one series per tenant and tool).

Counters and the histogram are counted where things happen (the tool-call middleware,
`mcpsite.toolcall_metrics`; the token cache; the webhook receiver; the notification sender). What
the database holds (pending elicitations by kind, tasks by status and the queue of unstarted runs,
keys by phase) is read when scraped, by the collectors ``MCPSITE_METRICS_COLLECTORS`` names (the
apps' own, read by name: the core imports no app), with one grouped query each.

Several processes on one host (web processes, Celery workers) share their counts through
prometheus-client's multiprocess mode: set ``PROMETHEUS_MULTIPROC_DIR`` to an empty directory the
same for all of them (emptied before they start); any one process's ``/metrics`` then answers the
sum.

``/metrics`` answers a loopback peer (the address uvicorn settled on: a trusted proxy's forwarded
one) and, elsewhere, only a request carrying ``Authorization: Bearer <MCPSITE_METRICS_TOKEN>``;
without a token set it is not found off loopback (404), with a wrong or missing one 403.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
from collections.abc import Iterable, Iterator
from functools import cache
from typing import Any, Protocol

from django.conf import settings
from django.db import DatabaseError
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden, HttpResponseNotFound
from django.utils.module_loading import import_string
from django.views.decorators.http import require_GET
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from redis import RedisError

logger = logging.getLogger(__name__)


def enabled() -> bool:
    return bool(settings.MCPSITE["METRICS"])


def per_tenant() -> bool:
    return bool(settings.MCPSITE["METRICS_PER_TENANT"])


COUNTING = enabled()
"""Read once: the hot path's counters test this, not the settings."""

_TENANT = ("tenant",) if per_tenant() else ()
# Tool calls last from a millisecond (a cached echo) to minutes (a held URL-mode round).
DURATION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

MCP_REQUESTS = Counter(
    "mcpsite_mcp_requests",
    "MCP requests the SDK handled, by protocol generation and outcome (ok, input_required, error).",
    ["generation", "outcome", *_TENANT],
)
TOOL_CALLS = Counter(
    "mcpsite_tool_calls",
    "tools/call requests by tool and outcome (ok, tool_error, input_required, task, error).",
    ["tool", "outcome", *_TENANT],
)
COMPILED_TOOL_CALLS = Counter(
    "mcpsite_compiled_tool_calls",
    "tools/call requests answered by the compiled path (mcp_server.compiled_calls), not the SDK's handler.",
)
TOOL_CALL_SECONDS = Histogram(
    "mcpsite_tool_call_duration_seconds",
    "Time from a tools/call reaching the SDK to its answer, by tool.",
    ["tool", *_TENANT],
    buckets=DURATION_BUCKETS,
)
INPUT_REQUIRED_ROUNDS = Counter(
    "mcpsite_input_required_rounds",
    "Rounds answered input_required (a question for the client), by method.",
    ["method", *_TENANT],
)
REQUEST_STATE_REFUSALS = Counter(
    "mcpsite_request_state_refusals",
    "Rounds refused for their requestState (-32602), by reason.",
    ["reason"],
)
WEBHOOK_DELIVERIES = Counter(
    "mcpsite_webhook_deliveries",
    "Payment webhook deliveries by provider and result (rejected, duplicate, or how it was applied).",
    ["provider", "result"],
)
NOTIFICATION_ATTEMPTS = Counter(
    "mcpsite_notification_attempts",
    "Outgoing notification attempts by result (delivered, refused: a non-2xx answer, no_answer).",
    ["result"],
)
TOKEN_CACHE = Counter(
    "mcpsite_token_cache_lookups",
    "Bearer token lookups by result: hit (from this process's memory) or miss (read from the database).",
    ["result"],
)
TOKEN_CACHE_HIT = TOKEN_CACHE.labels(result="hit")
TOKEN_CACHE_MISS = TOKEN_CACHE.labels(result="miss")
AUDIT_DROPPED = Counter(
    "mcpsite_audit_dropped",
    "Tool-call audit rows not written, by reason: buffer_full (dropped rather than slow a call) or"
    " write_failed (the database refused a batch).",
    ["reason"],
)
AUDIT_DROPPED_FULL = AUDIT_DROPPED.labels(reason="buffer_full")
AUDIT_DROPPED_WRITE = AUDIT_DROPPED.labels(reason="write_failed")

# The reasons the SDK's requestState boundary logs, and ours (`mcpsite.keyring`); anything else is
# counted as "other", so a codec's message (one names a key id) never becomes a label value.
REFUSAL_REASONS = frozenset(
    {
        "non-string requestState",
        "codec error",
        "malformed",
        "minted in the future",
        "expired",
        "request binding",
        "audience",
        "principal drift",
        "principal",
        "seal",
        "replayed",
        "no verified expiry",
    }
)


def count_refusal(reason: str) -> None:
    if reason.startswith("unknown or retired key"):
        reason = "unknown key"
    elif reason not in REFUSAL_REASONS:
        reason = "other"
    REQUEST_STATE_REFUSALS.labels(reason=reason).inc()


def count_webhook(*, provider: str, known: bool, result: str) -> None:
    WEBHOOK_DELIVERIES.labels(provider=provider if known else "unknown", result=result).inc()


def count_notification_attempt(*, status_code: int | None) -> None:
    if status_code is None:
        result = "no_answer"
    else:
        result = "delivered" if 200 <= status_code < 300 else "refused"
    NOTIFICATION_ATTEMPTS.labels(result=result).inc()


# --- what the database holds, read when scraped ----------------------------------------------------


class ScrapeCollector(Protocol):
    def collect(self) -> Iterable[Metric]: ...


def count_by_choice(
    name: str, documentation: str, label: str, rows: QuerySet[Any], field: str, choices: Iterable[str]
) -> GaugeMetricFamily:
    """A gauge of `rows` counted per value of `field` (one grouped query), every choice present
    (0 when none): the shape of each of our database gauges."""
    counts = dict(rows.values_list(field).annotate(n=Count("pk")).order_by())
    gauge = GaugeMetricFamily(name, documentation, labels=[label])
    for choice in choices:
        gauge.add_metric([choice], counts.get(choice, 0))
    return gauge


class KeyRingPhases:
    """requestState keys by phase (verifying, minting, retired): one grouped query."""

    def collect(self) -> Iterator[Metric]:
        from mcpsite.models import RequestStateKey

        yield count_by_choice(
            "mcpsite_keyring_keys",
            "requestState keys by phase.",
            "phase",
            RequestStateKey.objects.all(),
            "phase",
            RequestStateKey.Phase.values,
        )


@cache
def _collector_classes() -> tuple[type[ScrapeCollector], ...]:
    return tuple(import_string(path) for path in settings.MCPSITE["METRICS_COLLECTORS"])


class _FromDatabase:
    """The scrape-time collectors, each apart: a database (or Redis) that fails one leaves out its
    gauges (logged), not the process's counters."""

    def collect(self) -> Iterator[Metric]:
        for cls in _collector_classes():
            try:
                yield from list(cls().collect())
            except (DatabaseError, RedisError):
                logger.exception("metrics: %s could not read its store; its gauges are left out", cls.__name__)


class _ThisProcess:
    """The counters of this process (single-process mode)."""

    def collect(self) -> Iterable[Metric]:
        return REGISTRY.collect()


def multiprocess_dir() -> str | None:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


def exposition() -> bytes:
    """The text a scrape gets: every process's counters (multiprocess mode) or this one's, and the
    database's gauges."""
    registry = CollectorRegistry(auto_describe=False)
    if multiprocess_dir():
        multiprocess.MultiProcessCollector(registry)
    else:
        registry.register(_ThisProcess())
    registry.register(_FromDatabase())
    return generate_latest(registry)


# --- /metrics --------------------------------------------------------------------------------------


def _loopback(address: str) -> bool:
    try:
        peer = ipaddress.ip_address(address)
    except ValueError:
        return False
    if isinstance(peer, ipaddress.IPv6Address) and peer.ipv4_mapped is not None:
        peer = peer.ipv4_mapped
    return peer.is_loopback


def _bearer(request: HttpRequest) -> str | None:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def allowed(request: HttpRequest) -> HttpResponse | None:
    """None when this request may read the metrics, else the refusal to answer."""
    if _loopback(request.META.get("REMOTE_ADDR", "")):
        return None
    expected: str = settings.MCPSITE["METRICS_TOKEN"]
    if not expected:
        return HttpResponseNotFound()  # not offered off loopback
    given = _bearer(request)
    if given is None or not hmac.compare_digest(given.encode(), expected.encode()):
        return HttpResponseForbidden()
    return None


@require_GET
def metrics_view(request: HttpRequest, **kwargs: Any) -> HttpResponse:
    if not enabled():
        return HttpResponseNotFound()
    refused = allowed(request)
    if refused is not None:
        return refused
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)
