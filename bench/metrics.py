"""What a service under a benchmark counted itself: its `/metrics` scraped at the edges of the
measured windows (or its processes' multiprocess directory read), read the way a dashboard reads
them (deltas, histogram quantiles), to print beside the benchmark's own figures."""

from __future__ import annotations

import math
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(port: int) -> Samples:
    """Every sample `/metrics` of the server on `port` answers now."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        return parsed(answer.read().decode())


def collected(path: Path) -> Samples:
    """Every sample the processes writing into the multiprocess directory `path` recorded."""
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(path))  # type: ignore[no-untyped-call]
    return parsed(generate_latest(registry).decode())


def parsed(text: str) -> Samples:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


@dataclass(frozen=True)
class Observed:
    """What a histogram observed: how many, and their median and 99th percentile."""

    count: float
    median_ms: float
    p99_ms: float


def observed(windows: list[tuple[Samples, Samples]], histogram: str, **labels: str) -> Observed:
    """What `histogram` observed with `labels` inside `windows` (each the samples at its
    opening and at its close)."""
    buckets: dict[float, float] = {}
    for opened, closed in windows:
        for (name, sample_labels), value in closed.items():
            found = dict(sample_labels)
            if name == f"{histogram}_bucket" and labels.items() <= found.items():
                bound = float(found["le"])
                earlier = opened.get((name, sample_labels), 0.0)
                buckets[bound] = buckets.get(bound, 0.0) + value - earlier
    bounds = sorted(buckets.items())
    return Observed(
        count=bounds[-1][1] if bounds else 0.0,
        median_ms=quantile(0.5, bounds) * 1000,
        p99_ms=quantile(0.99, bounds) * 1000,
    )


def quantile(q: float, buckets: list[tuple[float, float]]) -> float:
    """Prometheus's `histogram_quantile`: linear within the bucket the rank falls in.
    `buckets` are (upper bound, cumulative count), ascending, the last one +Inf."""
    if not buckets or buckets[-1][1] == 0:
        return math.nan
    rank = q * buckets[-1][1]
    lower, below = 0.0, 0.0
    for bound, count in buckets:
        if count >= rank:
            if math.isinf(bound):
                return lower  # past the highest finite bound: all a histogram can say
            return lower + (bound - lower) * (rank - below) / (count - below)
        lower, below = bound, count
    return lower
