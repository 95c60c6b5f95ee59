"""Queueing bot turns as RQ jobs, and finding again the turns whose job was lost."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol

from redis import Redis
from rq import Queue, Retry
from rq.serializers import JSONSerializer

from domain.table import Status, Table

QUEUE = "bots"
WAITING = "bots:waiting"
"""A sorted set: the tables with a bot turn outstanding, scored by when to look again."""
PLAY_TURN = "workers.jobs.play_turn"
RETRIES = 2


def bot_queue(redis: Redis) -> Queue:
    """The RQ queue of bot turns; jobs are JSON (ids and versions), never pickles."""
    return Queue(QUEUE, connection=redis, serializer=JSONSerializer)


def job_id(table_id: str, version: int, seat: int) -> str:
    """One job per turn: queueing the same turn twice collapses into one job."""
    return f"turn-{table_id}-{version}-{seat}"


def claim_key(table_id: str, version: int, seat: int) -> str:
    return f"game:{{{table_id}}}:turn:{version}:{seat}"


def has_bots(table: Table) -> bool:
    """Whether any seat of `table` is played by a machine (a built-in bot or a webhook)."""
    return any(seat and seat.player for seat in table.seats)


class TableSource(Protocol):
    """Where the sweep reads tables: the service's `TableQueries`."""

    def current(self, table_id: str) -> tuple[Table, list[int]] | None:
        """The table and the seats that may act now; None if there is no such table."""
        ...


class TurnQueue:
    """Queues a job for each bot seat that may act, once per table version and seat.

    A turn is claimed (a key that expires) when its job is queued. If the job is lost, say with a
    worker killed mid-turn, the claim runs out and the next `schedule` of that table, from a read
    or from the workers' periodic `sweep`, queues the turn again. A job for a version that has
    passed does nothing, so a turn queued twice is still played once.
    """

    def __init__(
        self,
        redis: Redis,
        queue: Queue,
        *,
        job_timeout_seconds: float,
        clock: Callable[[], float] = time.time,
        wake: Callable[[], None] = lambda: None,
    ) -> None:
        self.redis = redis
        self.queue = queue
        self.job_timeout = max(1, round(job_timeout_seconds))
        # A claim outlives the longest a job may run, so only a lost job lets it run out.
        self.claim_ms = (self.job_timeout + 5) * 1000
        self.clock = clock
        self.wake = wake

    def expect(self, table: Table) -> None:
        """Before a change to `table` is appended: unless the table waits already, have the
        sweep look at it once a claim's time has passed. So if `schedule` fails after the
        append, or its process dies, the turns it should have queued are queued all the same."""
        if has_bots(table):
            self.redis.zadd(WAITING, {table.id: self._due()}, nx=True)

    def schedule(self, table: Table, may_act: Sequence[int]) -> list[str]:
        """Queue the turns of `table`'s bot seats in `may_act` not queued yet; their job ids."""
        if not has_bots(table):
            return []
        bots = table.bots_among(may_act) if table.status is Status.RUNNING else []
        if not bots:
            self.redis.zrem(WAITING, table.id)
            return []
        # One round trip claims the turns and marks the table as waiting; one more queues
        # the claimed ones: a bot move costs the worker few Redis calls beyond RQ's own.
        with self.redis.pipeline(transaction=False) as pipe:
            for seat in bots:
                pipe.set(claim_key(table.id, table.version, seat), 1, nx=True, px=self.claim_ms)
            pipe.zadd(WAITING, {table.id: self._due()})
            claimed = pipe.execute()[:-1]
        jobs = [
            Queue.prepare_data(
                PLAY_TURN,
                (table.id, table.version, seat),
                job_id=job_id(table.id, table.version, seat),
                timeout=self.job_timeout,
                result_ttl=0,
                failure_ttl=24 * 3600,
                retry=Retry(max=RETRIES),
            )
            for seat, fresh in zip(bots, claimed, strict=True)
            if fresh
        ]
        if not jobs:
            return []
        self.queue.enqueue_many(jobs)
        self.wake()
        return [job.job_id for job in jobs]

    def _due(self) -> float:
        """When a table waiting from now is next looked at by the sweep."""
        return self.clock() * 1000 + self.claim_ms

    def sweep(self, tables: TableSource) -> list[str]:
        """Queue again every outstanding turn whose claim ran out; their job ids."""
        due: list[bytes] = self.redis.zrangebyscore(WAITING, "-inf", self.clock() * 1000)  # type: ignore[assignment]
        queued = []
        for member in due:
            table_id = member.decode()
            current = tables.current(table_id)
            if current is None:
                self.redis.zrem(WAITING, table_id)
                continue
            queued += self.schedule(*current)
        return queued
