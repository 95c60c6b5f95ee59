"""The bot queue's figures, read from RQ when `/metrics` is scraped: nothing to keep in step."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from redis import RedisError
from rq import Queue
from rq.registry import ScheduledJobRegistry


class QueueFigures(Collector):
    """How many bot jobs wait in `queue`, how long its oldest has waited, and how many are
    scheduled for later (paced bots, clocks' deadlines). If Redis does not answer, the scrape
    goes on without them and `failed` is called."""

    def __init__(
        self,
        queue: Queue,
        failed: Callable[[], None] = lambda: None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.queue = queue
        self.failed = failed
        self.clock = clock

    def collect(self) -> Iterator[Metric]:
        try:
            depth = self.queue.count
            oldest = self._oldest_wait()
            scheduled = ScheduledJobRegistry(queue=self.queue).count  # type: ignore[no-untyped-call]
        except RedisError:
            self.failed()
            return
        yield GaugeMetricFamily(
            "spieltisch_bot_queue_depth", "Bot jobs waiting for a worker", value=depth
        )
        yield GaugeMetricFamily(
            "spieltisch_bot_queue_oldest_age_seconds",
            "How long the oldest bot job waiting for a worker has waited (0: none waits)",
            value=oldest,
        )
        yield GaugeMetricFamily(
            "spieltisch_bot_jobs_scheduled",
            "Bot jobs scheduled for later: paced bot turns, clocks' deadlines, open tables' expiry",
            value=scheduled,
        )

    def _oldest_wait(self) -> float:
        """Seconds since the job at the head of the queue (the next to run) was queued."""
        for job_id in self.queue.get_job_ids(0, 1):
            job = self.queue.fetch_job(job_id)
            if job is not None and job.enqueued_at is not None:
                queued = job.enqueued_at
                if queued.tzinfo is None:
                    queued = queued.replace(tzinfo=UTC)  # RQ keeps UTC
                return max(0.0, (self.clock() - queued).total_seconds())
        return 0.0
