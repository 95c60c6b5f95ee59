"""What a service under a benchmark counted itself: its `/metrics`, scraped at the edges of the
measured windows, read the way a dashboard reads them (counter deltas, histogram quantiles), to
print beside the benchmark's own figures."""

from __future__ import annotations

import math
import urllib.request
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(port: int) -> Samples:
    """Every sample `/metrics` of the server on `port` answers now."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


@dataclass(frozen=True)
class Served:
    """A route's requests between scrapes, as the server's histogram saw them."""

    count: float
    median_ms: float
    p99_ms: float


def served(windows: list[tuple[Samples, Samples]], method: str, route: str, status: str) -> Served:
    """The requests the server answered with `status` on `route` inside `windows` (each a scrape
    at its opening and one at its close)."""
    histogram = "spieltisch_http_request_duration_seconds_bucket"
    buckets: dict[float, float] = {}
    for opened, closed in windows:
        for (name, labels), value in closed.items():
            found = dict(labels)
            if name == histogram and (found["method"], found["route"], found["status"]) == (
                method,
                route,
                status,
            ):
                bound = float(found["le"])
                buckets[bound] = buckets.get(bound, 0.0) + value - opened.get((name, labels), 0.0)
    bounds = sorted(buckets.items())
    return Served(
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
