"""Part 4 of the benchmark times each completion from the webhook's request start, and stops the run
on a negative interval instead of printing it (issue 17: a p50 of -4.95 ms had been printed)."""

from __future__ import annotations

import pytest

from bench.latency import NegativeInterval, Sample, refuse_negative, summarise

# perf_counter readings (seconds) of one 2025-11-25 sample as it happens on loopback: B publishes
# the completion before it answers, so the notification reaches the client 5 ms before the
# webhook's response does.
SENT, NOTIFIED, RESPONDED = 100.000, 100.020, 100.025


def test_a_notification_that_beats_the_webhook_response_is_timed_from_the_webhook_request() -> None:
    sample = Sample(sent=SENT, responded=RESPONDED, arrived=NOTIFIED)

    assert sample.latency_ms() == pytest.approx(20.0)
    assert sample.webhook_ms() == pytest.approx(25.0)
    assert sample.arrived_before_response() is True


def test_the_summary_reports_no_interval_between_the_webhook_response_and_the_completion() -> None:
    samples = [
        Sample(sent=SENT, responded=RESPONDED, arrived=NOTIFIED),
        Sample(sent=SENT, responded=RESPONDED, arrived=RESPONDED + 0.001),
        Sample(sent=SENT, responded=RESPONDED, arrived=NOTIFIED + 0.002),
    ]

    summary = summarise(samples)

    assert summary["samples"] == 3
    assert summary["raw_latency_ms"] == [20.0, 26.0, 22.0]
    assert summary["latency_ms"] == pytest.approx({"p50": 22.0, "p99": 26.0, "min": 20.0, "max": 26.0})
    assert summary["raw_webhook_ms"] == [25.0, 25.0, 25.0]
    assert summary["arrived_before_response"] == 2


def test_a_completion_read_before_its_webhook_was_sent_stops_the_run() -> None:
    # Readings of two clocks (or one taken in another process) can order the ends backwards.
    sample = Sample(sent=SENT, responded=RESPONDED, arrived=SENT - 0.00495)

    with pytest.raises(NegativeInterval) as refused:
        summarise([sample])

    assert str(refused.value) == (
        "completion latency (webhook request -> client): -4.950 ms is negative; "
        "both ends must be read from one clock, start first"
    )
    assert refused.value.what == "completion latency (webhook request -> client)"


def test_a_negative_figure_read_back_from_a_run_is_refused_not_printed() -> None:
    assert refuse_negative([0.0, 1.5], what="completion legacy, rep 1") == [0.0, 1.5]

    with pytest.raises(NegativeInterval, match=r"^completion legacy, rep 1: -4\.950 ms is negative; "):
        refuse_negative([1.5, -4.95], what="completion legacy, rep 1")
