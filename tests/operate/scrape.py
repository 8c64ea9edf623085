"""Reading ``/metrics`` as Prometheus does (prometheus-client's own parser)."""

from __future__ import annotations

import httpx2
from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parse(text: str) -> Samples:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def scrape(root: str, **headers: str) -> Samples:
    response = httpx2.get(f"{root}/metrics", headers=headers, timeout=10)
    assert response.status_code == 200, response.text[:300]
    assert response.headers["content-type"].startswith("text/plain; version=")
    return parse(response.text)


def value(samples: Samples, name: str, **labels: str) -> float:
    """A sample's value; 0 for a series not yet seen (a counter starts at 0)."""
    return samples.get((name, frozenset(labels.items())), 0.0)


def moved(before: Samples, after: Samples, name: str, **labels: str) -> float:
    return value(after, name, **labels) - value(before, name, **labels)
