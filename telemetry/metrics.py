"""Prometheus metrics: every figure Spieltisch exports, with its name and labels, in one place.

`Metrics` holds them and is the only thing the rest of the code records into; the composition
root builds one per process and hands it down. Labels take values from small fixed sets (methods,
route templates, game ids, outcomes), never table ids, tokens or raw paths.

With several processes (gunicorn's workers, the RQ workers) each process writes its values into
files under `PROMETHEUS_MULTIPROC_DIR`, and a scrape of `/metrics` in any web process adds up the
files of all of them (prometheus_client's multiprocess mode). prometheus_client decides between
in-memory and file-backed values once, when it is imported, from that variable: the one piece of
process-wide state this needs, set by the Procfile before Python starts. Without the variable
(embedded: one process) the values live in memory and `/metrics` reads this process's registry.
(prometheus_client's own default `REGISTRY`, which it builds on import, is never used: every
metric here is registered with the registry of the `Metrics` that owns it, or with none.)
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from prometheus_client.registry import Collector

MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE = CONTENT_TYPE_LATEST
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
"""The methods a request is counted under by name; any other is counted as `other`."""
UNMATCHED = "unmatched"
"""The route of a request whose path matches no route (a 404): never the path itself."""
REQUEST_BUCKETS = (
    *(0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1),
    *(0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
"""Seconds: a warm read takes about half a millisecond, a move a few, a heavy read (an audit)
up to about a second."""
TURN_BUCKETS = (
    *(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5),
    *(1.0, 2.5, 5.0, 10.0, 30.0, 60.0),
)
"""Seconds: an unpaced bot turn takes milliseconds, a paced one its table's bot delay (1 to 2 s
by default), a webhook's up to its timeout."""
SNAPSHOT_READS = frozenset({"hit", "miss", "rejected"})
"""What reading a snapshot found: one to start from, none, or one that failed its checks."""
SUBSTITUTIONS = frozenset({"clock", "webhook_timeout", "webhook_error", "webhook_illegal"})
"""Why a stand-in moved for a seat: its person's clock ran out, or its webhook failed."""
REDIS_ERRORS = frozenset({"request", "worker", "scrape"})
"""Where Redis failed: a request (answered 503), a bot worker's loop (it waits and goes on), or
a scrape of the bot queue's figures."""
DEAD_PID = re.compile(r"_(\d+)\.db$")


class SnapshotRecorder(Protocol):
    """What the snapshot code records: each read of a snapshot and each snapshot written."""

    def snapshot_read(self, result: str) -> None:
        """`result` is one of `SNAPSHOT_READS`."""
        ...

    def snapshot_written(self) -> None: ...


class Metrics:
    """Every metric of one process, and the registry `/metrics` serialises."""

    def __init__(self, *, multiprocess: bool = False) -> None:
        """`multiprocess`: values are in the files under `PROMETHEUS_MULTIPROC_DIR` (set before
        prometheus_client was imported), and `exposition` adds up every process's."""
        self.exposition = CollectorRegistry()
        own: CollectorRegistry | None = self.exposition
        if multiprocess:
            MultiProcessCollector(self.exposition)  # type: ignore[no-untyped-call]
            own = None  # registered nowhere: the collector reads these values from the files

        def counter(name: str, text: str, labels: Iterable[str] = ()) -> Counter:
            return Counter(f"spieltisch_{name}", text, list(labels), registry=own)

        def histogram(
            name: str, text: str, labels: Iterable[str], buckets: tuple[float, ...]
        ) -> Histogram:
            return Histogram(
                f"spieltisch_{name}", text, list(labels), registry=own, buckets=buckets
            )

        self._request_series: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}
        """Each request label set's two series, as `labels` found them: it costs more than
        the increments (a lock, validation)."""
        self.requests = counter(
            "http_requests", "HTTP requests answered", ("method", "route", "status")
        )
        self.request_seconds = histogram(
            "http_request_duration_seconds",
            "Time to answer an HTTP request (a live stream: to its first byte)",
            ("method", "route", "status"),
            REQUEST_BUCKETS,
        )
        self.moves = counter("moves", "Moves appended to tables' logs", ("game", "by"))
        self.bot_turns = counter("bot_turns", "Bot turns played", ("game", "outcome"))
        self.bot_turn_seconds = histogram(
            "bot_turn_latency_seconds",
            "From the event that gave a bot the move to its move appended; paced: a person sits "
            "at the table and its clock holds bots back (a bot delay or reaction time)",
            ("game", "paced"),
            TURN_BUCKETS,
        )
        self.jobs = counter("jobs", "Bot worker jobs run", ("job", "status"))
        self.job_seconds = histogram(
            "job_duration_seconds", "Time a bot worker spent on a job", ("job",), REQUEST_BUCKETS
        )
        self.streams_open = Gauge(
            "spieltisch_live_streams_open",
            "Live event streams open now",
            registry=own,
            multiprocess_mode="livesum",  # a dead process's streams are closed
        )
        self.snapshots_read = counter("snapshots_read", "Snapshot reads by result", ("result",))
        self.snapshots_written = counter("snapshots_written", "Snapshots written")
        self.clock_timeouts = counter(
            "clock_timeouts", "Moves a stand-in made for a person whose time ran out", ("game",)
        )
        self.substitutions = counter(
            "substitutions", "Moves a stand-in made instead of a seat's player", ("game", "reason")
        )
        self.rate_limited = counter("rate_limited", "Requests refused by a rate limit", ("route",))
        self.redis_errors = counter(
            "redis_errors", "Redis unreachable or timing out, by where it hit", ("where",)
        )

    # -- recording ---------------------------------------------------------------------------

    def request(self, method: str, route: str, status: int, seconds: float) -> None:
        # Bounded: the methods counted by name, routes (never paths) and statuses are few.
        key = (method if method in METHODS else "other", route, status)
        if (series := self._request_series.get(key)) is None:
            labels = (*key[:2], str(status))
            series = self.requests.labels(*labels), self.request_seconds.labels(*labels)
            self._request_series[key] = series
        count, duration = series
        count.inc()
        duration.observe(seconds)

    def move(self, game: str, by: str) -> None:
        """A move appended at a `game` table, made `by` a person, a bot or a stand-in."""
        self.moves.labels(game, by).inc()

    def bot_turn(
        self, game: str, outcome: str, latency_seconds: float | None, *, paced: bool
    ) -> None:
        """A bot's move appended (`outcome` played or substituted), `latency_seconds` after the
        event that gave it the move (None: not known), at a table that `paced` its bots."""
        self.bot_turns.labels(game, outcome).inc()
        if latency_seconds is not None:
            labels = (game, "true" if paced else "false")
            self.bot_turn_seconds.labels(*labels).observe(max(0.0, latency_seconds))

    def job(self, name: str, status: str, seconds: float) -> None:
        self.jobs.labels(name, status).inc()
        self.job_seconds.labels(name).observe(seconds)

    def stream_opened(self) -> None:
        self.streams_open.inc()

    def stream_closed(self) -> None:
        self.streams_open.dec()

    def snapshot_read(self, result: str) -> None:
        self.snapshots_read.labels(known(result, SNAPSHOT_READS)).inc()

    def snapshot_written(self) -> None:
        self.snapshots_written.inc()

    def clock_timeout(self, game: str) -> None:
        self.clock_timeouts.labels(game).inc()
        self.substitution(game, "clock")

    def substitution(self, game: str, reason: str) -> None:
        self.substitutions.labels(game, known(reason, SUBSTITUTIONS)).inc()

    def refused(self, route: str) -> None:
        """A request to `route` refused by its rate limit."""
        self.rate_limited.labels(route).inc()

    def redis_error(self, where: str) -> None:
        self.redis_errors.labels(known(where, REDIS_ERRORS)).inc()

    # -- exposition --------------------------------------------------------------------------

    def collect_also(self, collector: Collector) -> None:
        """Add figures read when `/metrics` is scraped (the bot queue's, from Redis)."""
        self.exposition.register(collector)

    def render(self) -> bytes:
        """Every metric in the Prometheus text format (`CONTENT_TYPE`)."""
        return generate_latest(self.exposition)


def known(value: str, values: frozenset[str]) -> str:
    """`value` if it is one of `values`, else `other`: a label never takes an unforeseen value."""
    return value if value in values else "other"


def multiprocess_dir() -> Path | None:
    """The directory of multiprocess mode, if the environment sets one."""
    path = os.environ.get(MULTIPROCESS_DIR)
    return Path(path) if path else None


def running(pid: int) -> bool:
    """Whether a process `pid` runs on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def prepare_multiprocess_dir(alive: Callable[[int], bool] = running) -> None:
    """Create the multiprocess directory, and remove the files of processes no longer `alive`
    (left by an earlier run): prometheus_client wants it emptied between runs, and other live
    processes (bot workers) may share it. Their counters restart, which Prometheus's `rate()`
    reads as a reset. Called by the web server's master process before it forks its workers."""
    path = multiprocess_dir()
    if path is None:
        return
    path.mkdir(parents=True, exist_ok=True)
    for file in path.glob("*.db"):
        if (found := DEAD_PID.search(file.name)) and not alive(int(found.group(1))):
            file.unlink(missing_ok=True)


def process_exited(pid: int) -> None:
    """A process of this host's service exited: its live gauges (streams open) stop counting."""
    if multiprocess_dir() is not None:
        mark_process_dead(pid)  # type: ignore[no-untyped-call]
