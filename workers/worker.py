"""The RQ workers that play bot turns.

`BotWorker` is the Procfile's worker. It runs each job in its own process instead of forking a
child per job as RQ's default worker does: a bot turn takes a few milliseconds, a fork costs more
than that (`bench/bots.py` prints both rates). Between jobs it also sweeps for turns whose job
was lost, and it outlives Redis outages: it waits, with backoff, and goes on. `EmbeddedWorker`
runs the same worker in a thread of the service when there is no Redis, and RQ's scheduler
(which `rq worker --with-scheduler` forks into a process of its own) in another: timeouts and
bots' human pace are scheduled jobs, and a fork would not share the in-process fakeredis.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from redis.client import Pipeline
from rq import SimpleWorker
from rq.executions import Execution
from rq.job import Job
from rq.queue import Queue
from rq.scheduler import RQScheduler
from rq.serializers import JSONSerializer
from rq.timeouts import TimerDeathPenalty
from rq.utils import now

from events.connect import is_outage
from telemetry.logs import JOB_LOG, REQUEST_ID, REQUEST_ID_META
from telemetry.metrics import Metrics
from workers.jobs import PLAYER, expire, play_turn, time_out
from workers.player import TurnPlayer
from workers.turns import TableSource, TurnQueue, bot_queue

HEARTBEAT_SECONDS = 1.0
"""The least time between a worker's standalone heartbeats, and between its checks for `rq suspend`
(see `BotWorker.heartbeat`)."""
SWEEP_SECONDS = 5
"""How often a worker looks for bot turns whose job was lost."""
STOP_SECONDS = 1
"""How long an idle embedded worker (`ThreadWorker`) takes at most to notice it was stopped."""
JOBS = logging.getLogger(JOB_LOG)
JOB_NAMES = frozenset(job.__name__ for job in (play_turn, time_out, expire))
"""The functions of `workers.jobs`: what a job is counted as (any other as `other`)."""


@dataclass(frozen=True)
class BotPlay:
    """What a bot worker runs: the player of turns, their queue, and where its sweep reads."""

    player: TurnPlayer
    turns: TurnQueue
    tables: TableSource
    metrics: Metrics | None = None


class BotWorker(SimpleWorker):
    """Runs bot jobs in-process and sweeps for lost turns every few seconds.

    The composition root builds its `play`; `bootstrap.Worker` is the one `rq worker` starts.
    """

    # The job's own line (`_ran`) names its table, version, seat, outcome and time: RQ's lines
    # need not repeat the job's arguments (its description) nor say how long a result is kept.
    log_result_lifespan = False

    def __init__(self, *args: Any, play: BotPlay, **kwargs: Any) -> None:
        kwargs["serializer"] = kwargs.get("serializer") or JSONSerializer
        kwargs["log_job_description"] = False
        # The worker waits for a job at most `worker_ttl - 15` seconds before its housekeeping,
        # where the sweep runs. `rq worker` always passes its own defaults (420 and 600), so
        # these are capped rather than defaulted.
        for name, most in (
            ("worker_ttl", SWEEP_SECONDS + 15),
            ("maintenance_interval", SWEEP_SECONDS),
        ):
            kwargs[name] = min(kwargs.get(name) or most, most)
        super().__init__(*args, **kwargs)
        self.play = play
        self._suspension_checked: datetime | None = None

    # RQ's work loop quits on any error but a ConnectionError while it waits for a job, and
    # Redis going away can surface in every step of it. Each step below rides the outage out,
    # so the worker never dies of one: a job cut off is found again by the sweep once its
    # claim runs out, and the dequeue waits, with backoff, until Redis answers again.
    max_connection_wait_time = float(SWEEP_SECONDS)

    @contextmanager
    def _riding_out(self, step: str) -> Iterator[None]:
        try:
            yield
        except Exception as error:
            if not is_outage(error):
                raise
            self.log.warning("Worker %s: Redis unavailable during %s: %s", self.name, step, error)
            self._redis_failed()

    def _redis_failed(self) -> None:
        if self.play.metrics is not None:
            self.play.metrics.redis_error("worker")

    def dequeue_job_and_maintain_ttl(
        self, timeout: int | None, max_idle_time: int | None = None
    ) -> tuple[Job, Queue] | None:
        wait = 1.0
        while True:
            try:
                return super().dequeue_job_and_maintain_ttl(timeout, max_idle_time)
            except Exception as error:
                if not is_outage(error):
                    raise
                self.log.warning(
                    "Worker %s: Redis unavailable: %s; retrying in %.0f s", self.name, error, wait
                )
                self._redis_failed()
                time.sleep(wait)
                wait = min(wait * self.exponential_backoff_factor, self.max_connection_wait_time)

    def execute_job(self, job: Job, queue: Queue) -> None:
        """Run `job` under the request id it was queued with: its log lines, and the jobs it
        queues, carry it."""
        token = PLAYER.set(self.play.player)
        request_id = REQUEST_ID.set(job.meta.get(REQUEST_ID_META))
        try:
            with self._riding_out(f"job {job.id}, which the sweep will queue again"):
                super().execute_job(job, queue)
        finally:
            REQUEST_ID.reset(request_id)
            PLAYER.reset(token)

    def perform_job(self, job: Job, queue: Queue, execution: Execution) -> bool:
        """Run `job`, then log it as one line and count it."""
        started = time.perf_counter()
        succeeded = False
        try:
            succeeded = super().perform_job(job, queue, execution)
            return succeeded
        finally:
            self._ran(job, succeeded, time.perf_counter() - started)

    def _ran(self, job: Job, succeeded: bool, seconds: float) -> None:
        name = (job.func_name or "").rpartition(".")[2]
        name = name if name in JOB_NAMES else "other"
        status = "finished" if succeeded else "failed"
        args = job.args
        JOBS.info(
            "%s %s %s",
            name,
            job.id,
            status,
            extra={
                "job": name,
                "job_id": job.id,
                "status": status,
                # What the job did: a turn played, substituted, or stale (`workers.player`). RQ
                # keeps the return value on the job it ran; with no result TTL, nowhere else.
                "outcome": job._result if succeeded else None,
                "duration_ms": round(seconds * 1000, 3),
                "table_id": args[0] if args else None,
                "version": args[1] if len(args) > 1 else None,
                "seat": args[2] if len(args) > 2 else None,
            },
        )
        if self.play.metrics is not None:
            self.play.metrics.job(name, status, seconds)

    # A bot turn is a few milliseconds of work; RQ's bookkeeping around each job is most of
    # its Redis calls. Three of them are repeats that nothing reads in between: a standalone
    # heartbeat before every dequeue (the worker's key lives `worker_ttl + 60` seconds, so one
    # a second is plenty), the state written "idle" after a job and again before the next
    # dequeue, and the check whether `rq suspend` was run (a round trip before every job, an
    # eighth of an empty job's CPU; a worker that notices within a second stops soon enough).
    # The job's own heartbeat after it ran is left out too (`handle_execution_ended`).
    # Heartbeats and states sent in RQ's own pipelines are kept as they are.
    def heartbeat(self, timeout: int | None = None, pipeline: Pipeline | None = None) -> None:
        if pipeline is None and timeout is None and lately(self.last_heartbeat):
            return
        with self._riding_out("a heartbeat"):
            super().heartbeat(timeout, pipeline)

    def set_state(self, state: str, pipeline: Pipeline | None = None) -> None:
        if pipeline is None and state == self._state:
            return
        super().set_state(state, pipeline)

    def handle_execution_ended(self, job: Job, queue: Queue, heartbeat_ttl: int) -> None:
        # RQ writes the job's heartbeat here, a round trip of its own, to keep the job alive
        # through its success or failure callback. Bot jobs have none: the pipeline that
        # records how the job ended follows at once.
        job.ended_at = now()

    def check_for_suspension(self, burst: bool) -> None:
        if lately(self._suspension_checked):
            return
        with self._riding_out("the check for suspension"):
            super().check_for_suspension(burst)
            self._suspension_checked = now()

    def run_maintenance_tasks(self) -> None:
        with self._riding_out("the maintenance"):
            super().run_maintenance_tasks()  # type: ignore[no-untyped-call]
            self.play.turns.sweep(self.play.tables)


def lately(moment: datetime | None) -> bool:
    """Whether `moment` is less than `HEARTBEAT_SECONDS` ago."""
    return moment is not None and (now() - moment).total_seconds() < HEARTBEAT_SECONDS


class ThreadWorker(BotWorker):
    """A `BotWorker` that runs in a thread: no signals, which only the main thread may use, so
    `stop` ends it instead."""

    death_penalty_class = TimerDeathPenalty

    def _install_signal_handlers(self) -> None:
        pass

    def stop(self) -> None:
        """Finish the job under way, if any, and take no other: within `STOP_SECONDS`."""
        self._stop_requested = True  # what RQ's signal handler sets; its work loop reads it

    def dequeue_job_and_maintain_ttl(
        self, timeout: int | None, max_idle_time: int | None = None
    ) -> tuple[Job, Queue] | None:
        # RQ's wait for a job ends with a job or a signal, never on its own: wait a while at a
        # time and look for a stop in between (no job then ends RQ's work loop).
        while not self._stop_requested:
            job = super().dequeue_job_and_maintain_ttl(STOP_SECONDS, max_idle_time=STOP_SECONDS)
            if job is not None:
                return job
        return None


class ThreadScheduler(RQScheduler):
    """RQ's scheduler in a thread: no signals, which only the main thread may use."""

    def _install_signal_handlers(self) -> None:
        pass


class EmbeddedWorker:
    """The embedded mode's bot worker: a daemon thread, started when the first turn is queued."""

    def __init__(self) -> None:
        self.play: BotPlay | None = None
        self._worker: ThreadWorker | None = None
        self._scheduler: ThreadScheduler | None = None
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            if self._worker is not None:
                return
            assert self.play is not None, "give the worker its play before starting it"
            redis = self.play.turns.redis
            self._worker = ThreadWorker([bot_queue(redis)], connection=redis, play=self.play)
            self._scheduler = ThreadScheduler(
                [bot_queue(redis)], connection=redis, serializer=JSONSerializer
            )
            # The same in-process server, not a client made anew from its settings.
            self._scheduler._connection = redis  # type: ignore[assignment]
            self._threads = [
                threading.Thread(
                    target=self._worker.work,
                    kwargs={"with_scheduler": False, "logging_level": "WARNING"},
                    name="spieltisch-bots",
                    daemon=True,
                ),
                threading.Thread(
                    target=self._scheduler.work, name="spieltisch-scheduler", daemon=True
                ),
            ]
            for thread in self._threads:
                thread.start()

    def stop(self, timeout: float = 10.0) -> bool:
        """Ask the worker and the scheduler to finish and wait up to `timeout` seconds for both;
        whether both have. The service's threads live as long as its process, but a process that
        builds several embedded apps (the tests do) would otherwise keep them all at work.

        The worker finishes the job under way, if any (within `STOP_SECONDS` when idle), the
        scheduler within its interval."""
        with self._lock:
            worker, scheduler, threads = self._worker, self._scheduler, self._threads
        if worker is None or scheduler is None:
            return True
        worker.stop()
        scheduler.request_stop()  # type: ignore[no-untyped-call]
        ends = time.monotonic() + timeout
        for thread in threads:
            thread.join(max(0.0, ends - time.monotonic()))
        return not any(thread.is_alive() for thread in threads)
