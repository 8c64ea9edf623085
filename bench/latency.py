"""Part 4's arithmetic: the intervals of one completion sample and their summary (pure, no I/O).

Every instant is read with `time.perf_counter()` in `bench/completion.py`'s process, on its one
event loop, so every interval subtracts two readings of the same clock. Only intervals whose start
causes their end are reported: the webhook request's start precedes both the webhook's response
and the completion reaching the waiting client. The webhook's response and the completion are not
ordered (B publishes the completion before it answers the webhook), so the time between them is
never reported as a latency; only which came first is counted.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any


class NegativeInterval(ValueError):
    """An interval ended before it started: the measurement is wrong, so the run must stop."""

    def __init__(self, *, what: str, ms: float) -> None:
        super().__init__(f"{what}: {ms:.3f} ms is negative; both ends must be read from one clock, start first")
        self.what = what
        self.ms = ms


@dataclass(frozen=True)
class Sample:
    """One completion, three `time.perf_counter()` readings (seconds) in the client's process."""

    sent: float  # just before the webhook's request is written to B
    responded: float  # the webhook's response has been read
    arrived: float  # the waiting client learned of the completion (held round's response / notification)

    def latency_ms(self) -> float:
        """Webhook request's start -> the waiting client learns of the completion."""
        return interval_ms(self.sent, self.arrived, what="completion latency (webhook request -> client)")

    def webhook_ms(self) -> float:
        """Webhook request's start -> its response read: what B takes to apply the payment."""
        return interval_ms(self.sent, self.responded, what="webhook round trip")

    def arrived_before_response(self) -> bool:
        return self.arrived < self.responded


def interval_ms(start: float, end: float, *, what: str) -> float:
    ms = (end - start) * 1000
    if ms < 0:
        raise NegativeInterval(what=what, ms=ms)
    return ms


def refuse_negative(values: list[float], *, what: str) -> list[float]:
    """For figures read back from a child's JSON: a negative one stops the run instead of being printed."""
    for ms in values:
        if ms < 0:
            raise NegativeInterval(what=what, ms=ms)
    return values


def percentile(values: list[float], p: float) -> float:
    """Nearest rank (p99 of 50 samples is the largest, of 150 the 149th)."""
    ordered = sorted(values)
    return ordered[max(1, min(len(ordered), math.ceil(p * len(ordered) / 100))) - 1]


def describe(values: list[float]) -> dict[str, float]:
    return {
        "p50": statistics.median(values),
        "p99": percentile(values, 99),
        "min": min(values),
        "max": max(values),
    }


def summarise(samples: list[Sample]) -> dict[str, Any]:
    """What one run of `bench/completion.py` reports (milliseconds); raises on a negative interval."""
    latency = [s.latency_ms() for s in samples]
    webhook = [s.webhook_ms() for s in samples]
    return {
        "samples": len(samples),
        "latency_ms": describe(latency),
        "webhook_ms": describe(webhook),
        "arrived_before_response": sum(s.arrived_before_response() for s in samples),
        "raw_latency_ms": [round(v, 3) for v in latency],
        "raw_webhook_ms": [round(v, 3) for v in webhook],
    }
