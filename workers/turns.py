"""Queueing bot turns as RQ jobs, and finding again the turns whose job was lost."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from redis import Redis, RedisError
from redis.client import Pipeline
from rq import Queue, Retry
from rq.job import Job
from rq.serializers import JSONSerializer

from domain.table import Status, Table, Tables
from events.store import Mark
from telemetry.logs import job_meta

log = logging.getLogger(__name__)

QUEUE = "bots"
WAITING = "bots:waiting"
"""A sorted set: the tables with a bot turn outstanding, scored by when to look again."""
MARKED_AT = "{bots:waiting}:versions"
"""A hash in `WAITING`'s hash slot: the version of each marked table whose change marked it
last. A `schedule` or sweep working from an older version leaves the mark alone: the newer
change's own `schedule` may have failed, and the mark is what brings the sweep to it."""
UNLESS_NEWER = """
local marked = redis.call('HGET', KEYS[2], ARGV[1])
if marked and tonumber(marked) > tonumber(ARGV[2]) then
    return 0
end
if ARGV[3] == '' then
    redis.call('ZREM', KEYS[1], ARGV[1])
    redis.call('HDEL', KEYS[2], ARGV[1])
else
    redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
end
return 1
"""
"""Mark table ARGV[1] for time ARGV[3] (unmark it: ''), as of version ARGV[2], unless a newer
version marked it since."""
RESTAMP = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
    redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
end
"""
"""Stamp table ARGV[1] with version ARGV[3] if its stamp is still ARGV[2]."""
PLAY_TURN = "workers.jobs.play_turn"
TIME_OUT = "workers.jobs.time_out"
EXPIRE = "workers.jobs.expire"
RETRIES = 2
RESULT_TTL_SECONDS = 5
"""How long a finished job's hash lingers before Redis expires it. RQ deletes a job kept for
no time (TTL 0) in a dozen round trips after it ran; an expiry is one command in the pipeline
that records its success."""
RESCHEDULED_TTL_SECONDS = 8 * 24 * 3600
"""How long a job scheduled again and again under one id (a seat's timeout, an open table's
expiry) lingers after it ran: longer than the longest turn a clock allows. A run that found its
version stale can finish just after the job was scheduled anew, and set its hash to expire:
the hash must outlive that until the new time comes. (Scheduling it again clears the expiry.)"""
HANDOVER_SECONDS = 3600.0
"""How long before a deadline RQ's scheduler is given its job, while no bot may act. Until
then the deadline waits as the table's mark in the sweep's set, which the append writes in its
own round trip: on a day's clock a move that leaves a person to act schedules nothing, where
scheduling the next seat's timeout again was a third of what the web process spent on it
besides the append."""


def bot_queue(redis: Redis) -> Queue:
    """The RQ queue of bot turns; jobs are JSON (ids and versions), never pickles."""
    return Queue(QUEUE, connection=redis, serializer=JSONSerializer)


def job_id(table_id: str, version: int, seat: int) -> str:
    """One job per turn: queueing the same turn twice collapses into one job."""
    return f"turn-{table_id}-{version}-{seat}"


def not_before(moment: datetime) -> datetime:
    """The whole second at or after `moment`: RQ's scheduler keeps whole seconds, rounded down,
    which would run a job up to a second before its time."""
    whole = moment.replace(microsecond=0)
    return whole if whole == moment else whole + timedelta(seconds=1)


def timeout_job_id(table_id: str, seat: int) -> str:
    """One timeout job per seat: each decision the table waits for schedules it again, for the
    new version and deadline, so a day's default deadline leaves no job behind per move."""
    return f"timeout-{table_id}-{seat}"


def claim_key(table_id: str, version: int, seat: int) -> str:
    return f"game:{{{table_id}}}:turn:{version}:{seat}"


def has_bots(table: Table) -> bool:
    """Whether any seat of `table` is played by a machine (a built-in bot or a webhook)."""
    return any(seat and seat.player for seat in table.seats)


@dataclass(frozen=True)
class Scheduled:
    """What `TurnQueue.schedule` queued, and the bot turn it left to its caller (`keep`)."""

    jobs: list[str]
    kept: int | None = None


@dataclass(frozen=True)
class Claim:
    """The bot seats whose turns are claimed, when they may play (None: at once), and how long
    from now that is."""

    bots: list[int]
    due: datetime | None
    wait_ms: int = 0


class TableSource(Protocol):
    """Where the sweep reads tables: the service's `TableQueries`."""

    def current(self, table_id: str) -> Table | None:
        """The table as it is now; None if there is no such table."""
        ...


class TurnQueue:
    """Queues a job for each bot seat that may act, once per table version and seat, and
    schedules a timeout for each person the table waits for, at their deadline.

    At a table where a person plays, a bot's job waits for RQ's scheduler until the table's bot
    delay has passed since the event that gave it the move, or its reaction time while another
    seat may react out of turn: people can follow, and win a race fairly. All-bot tables play
    at full speed.

    A turn is claimed (a key that expires) when its job is queued. If the job is lost, say with a
    worker killed mid-turn, the claim runs out and the workers' periodic `sweep` schedules the
    table again, which queues the turn again. A job for a version that has passed does nothing,
    so a turn queued twice is still played once. The sweep also finds a table whose timeouts or
    expiry were never scheduled because the process that appended its change lost Redis or
    died: `expect` marks such a table before the append, and `schedule` clears the mark.

    While no bot may act, a deadline further away than `handover_seconds` (an hour) is not given
    to RQ's scheduler at each move but waits as the table's mark: the sweep gives it to the
    scheduler when it comes within the hour, or marks the table again if moves have pushed it
    back meanwhile. An open table's expiry waits the same way.
    """

    def __init__(
        self,
        redis: Redis,
        queue: Queue,
        tables: Tables,
        *,
        job_timeout_seconds: float,
        open_table_seconds: float = 24 * 3600.0,
        clock: Callable[[], float] = time.time,
        wake: Callable[[], None] = lambda: None,
        marks_with_appends: bool = False,
        handover_seconds: float = HANDOVER_SECONDS,
    ) -> None:
        self.redis = redis
        self.queue = queue
        self.tables = tables
        self.job_timeout = max(1, round(job_timeout_seconds))
        # A claim outlives the longest a job may run, so only a lost job lets it run out.
        self.claim_ms = (self.job_timeout + 5) * 1000
        self.open_table = timedelta(seconds=open_table_seconds)
        self.clock = clock
        self.wake = wake
        # The queue shares one Redis server with the games: the appends write the sweep's marks.
        self.marks_with_appends = marks_with_appends
        self.handover_seconds = handover_seconds

    def expect(self, table: Table, *, marked: bool = False) -> Mark | None:
        """Before a change to `table` is appended: have the sweep look at it once a claim's
        time has passed. So if `schedule` fails after the append, or its process dies, the
        turns, timeouts and expiry it should have queued are queued all the same. A table
        whose every deadline is further away than `handover_seconds`, with no bot to act, is
        marked for when the nearest comes that close instead (`parked`): `schedule` then
        leaves it to the sweep. On the games' own Redis (`marks_with_appends`) the mark is
        returned for the append to write, in its round trip and only if it lands, with the
        claims of the bots' turns the change leaves due (`schedule` is given what the append
        claimed); else it is written here, and `schedule` claims the turns. A table with
        nothing to schedule is not marked.

        A table of people keeps the earliest mark asked for; a table with bots takes the new
        one, which answers for everything the table waits for as of the change (the claim
        of a bot's turn just played, due soon, must not bring the sweep back for nothing).
        `marked`: the table is marked already (a queued turn's claim holds it), so a mark of
        its own round trip is not worth writing; one that rides with the append is."""
        if marked and not self.marks_with_appends:
            return None
        claim = self._claimable(table)
        if claim.bots:
            mark = Mark(
                WAITING,
                table.id,
                self._due(claim.wait_ms),
                replace=True,
                claims=tuple(claim_key(table.id, table.version, seat) for seat in claim.bots),
                claim_ms=self.claim_ms + claim.wait_ms,
                stamps=MARKED_AT,
                stamp=table.version,
            )
        elif (deadline := self._deadline(table)) is None:
            return None
        else:
            parked = self._handover(deadline)
            due = self._due() if parked is None else parked
            mark = Mark(
                WAITING,
                table.id,
                due,
                replace=has_bots(table),
                stamps=MARKED_AT,
                stamp=table.version,
            )
        if self.marks_with_appends:
            return mark
        # The stamp first: a `schedule` of an older version between the two must not unmark.
        # If the append is then refused, `refused` takes the stamp back.
        pipe = self.redis.pipeline(transaction=False)
        pipe.hset(MARKED_AT, table.id, str(table.version))
        pipe.zadd(WAITING, {table.id: mark.score}, lt=not mark.replace)
        pipe.execute()
        return None

    def refused(self, table: Table, actual: int) -> None:
        """The append of `table` that `expect` marked was refused: the stream is at `actual`.
        A stamp of `table`'s version written here, ahead of the version that landed instead,
        would keep the sweep coming back to the table until it reached that version; it is
        set back to the version that landed, unless another change stamped the table since."""
        if self.marks_with_appends or table.version <= actual:
            return
        try:
            self.redis.eval(RESTAMP, 1, MARKED_AT, table.id, table.version, actual)
        except RedisError:
            # The refusal stands whatever happens here: the sweep only looks again more often.
            log.warning("the stamp of table %s could not be set back", table.id, exc_info=True)

    def _deadline(self, table: Table) -> datetime | None:
        """The nearest time by which `table` must have a job run for a person, as far as its
        events tell: a person's timeout, or an open table's expiry."""
        if table.status is Status.OPEN:
            return None if table.changed_at is None else table.changed_at + self.open_table
        if table.status is not Status.RUNNING or not table.has_people:
            return None
        return min(self.tables.deadlines(table).values(), default=None)

    def parked(self, table: Table) -> float | None:
        """When (milliseconds since the epoch) the sweep is to hand `table`'s deadlines to RQ's
        scheduler, if no bot may act there and the nearest of those deadlines is further away
        than `handover_seconds`; else None: `schedule` has something to queue."""
        return self._parked(table, self._claimable(table))

    def _parked(self, table: Table, claim: Claim) -> float | None:
        """`parked`, given the turns `claim`able at `table`."""
        if claim.bots or (deadline := self._deadline(table)) is None:
            return None
        return self._handover(deadline)

    def _handover(self, deadline: datetime) -> float | None:
        """When to hand a table whose nearest deadline is `deadline` to RQ's scheduler, if
        that is still to come (milliseconds since the epoch)."""
        handover = deadline.timestamp() - self.handover_seconds
        return handover * 1000 if handover > self.clock() else None

    def schedule(
        self, table: Table, *, keep: bool = False, claimed: Sequence[bool] | None = None
    ) -> Scheduled:
        """Queue the turns of `table`'s bot seats that may act and are not queued yet, and the
        timeouts of the people it waits for; nothing while its deadlines are parked (`parked`).

        `keep`: the caller, a worker that has just moved at `table`, plays the first turn due
        at once of a built-in bot itself, in the same job: the turn is claimed like the others,
        so if the worker dies before it moves, the claim runs out and the sweep queues it.

        `claimed`: the append that stored `table` claimed its bots' turns already (the mark of
        `expect`), and these are the claims it won, one per bot seat that may act.

        One round trip schedules the timeouts (or an open table's expiry) and claims the bots'
        turns, unless the append claimed them and there is nothing else to schedule; one more
        queues the turns claimed, if any."""
        claim = self._claimable(table)
        if self._parked(table, claim) is not None:
            # The table's mark, written with the append, waits for them; the sweep that will
            # find it runs in the worker, which an embedded service starts when woken.
            self.wake()
            return Scheduled([])
        # Not a transaction: nothing here reads what another client may change meanwhile.
        with self.redis.pipeline(transaction=False) as pipe:
            ids = self._expiry(table, pipe) + self._timeouts(table, pipe)
            if claimed is None:
                self._claim(table, claim, pipe)
            replies = pipe.execute()  # no round trip when there is nothing in it
        if claimed is None:
            fresh = self._won(claim, replies)
        else:
            fresh = [seat for seat, won in zip(claim.bots, claimed, strict=True) if won]
        kept = (
            next((seat for seat in fresh if self._plays_here(table, seat, claim)), None)
            if keep
            else None
        )
        ids += self._queue(table, claim.due, [seat for seat in fresh if seat != kept])
        if ids:
            self.wake()
        return Scheduled(ids, kept)

    @staticmethod
    def _plays_here(table: Table, seat: int, claim: Claim) -> bool:
        """Whether a worker may play `seat`'s claimed turn at once, in the job it is in: a
        built-in bot, with nobody to wait for (a webhook is asked beside the worker)."""
        taken = table.seats[seat]
        return claim.due is None and taken is not None and taken.webhook is None

    def _expiry(self, table: Table, pipe: Pipeline) -> list[str]:
        """An open table expires when nobody sat down at it for `open_table_seconds`: each
        seat taken schedules the one job of the table again, later."""
        if table.status is not Status.OPEN or table.changed_at is None:
            return []
        due = not_before(table.changed_at + self.open_table)
        return [self._reschedule(f"expire-{table.id}", due, pipe, EXPIRE, table.id, table.version)]

    def _timeouts(self, table: Table, pipe: Pipeline) -> list[str]:
        if not table.has_people or table.status is not Status.RUNNING:
            return []
        ids = []
        for seat, deadline in self.tables.deadlines(table).items():
            if (taken := table.seats[seat]) is None or taken.player is not None:
                continue  # a machine answers in time, or its stand-in does
            name = timeout_job_id(table.id, seat)
            due = not_before(deadline)
            ids.append(self._reschedule(name, due, pipe, TIME_OUT, table.id, table.version, seat))
        return ids

    def _reschedule(
        self, name: str, due: datetime, pipe: Pipeline, function: str, *args: Any
    ) -> str:
        """Schedule the job `name` (again: with these arguments, at `due`) in `pipe`."""
        self.queue.enqueue_at(
            due, function, *args, **self._options(name, pipe, kept=RESCHEDULED_TTL_SECONDS)
        )
        pipe.persist(Job.key_for(name))
        return name

    def _claim(self, table: Table, claim: Claim, pipe: Pipeline) -> None:
        """Claim in `pipe` the turns of `claim`, `table`'s bot seats that may act, and mark the
        table as waiting for them (or as waiting for no bot); its replies come last in `pipe`."""
        if not claim.bots:
            # What `expect` marked the table for, the timeouts or the expiry, is scheduled
            # in this same pipeline: the sweep need not look again, unless a newer change
            # marked it meanwhile.
            # EVAL, not a registered script: that would cost the pipeline a SCRIPT EXISTS.
            pipe.eval(UNLESS_NEWER, 2, WAITING, MARKED_AT, table.id, table.version, "")
            return
        claim_ms = self.claim_ms + claim.wait_ms
        for seat in claim.bots:
            pipe.set(claim_key(table.id, table.version, seat), 1, nx=True, px=claim_ms)
        pipe.zadd(WAITING, {table.id: self._due(claim.wait_ms)})

    def _claimable(self, table: Table) -> Claim:
        """The turns of `table`'s bot seats that may act, to be claimed."""
        if not has_bots(table) or table.status is not Status.RUNNING:
            return Claim([], None)
        may_act = self.tables.may_act(table)
        bots = table.bots_among(may_act)
        if not bots:
            return Claim([], None)
        due = self._paced(table)
        wait_ms = 0 if due is None else max(0, round((due.timestamp() - self.clock()) * 1000))
        return Claim(bots, due, wait_ms)

    @staticmethod
    def _won(claim: Claim, replies: list[Any]) -> list[int]:
        """The seats whose turns `claim` won (its replies, then the waiting mark's, end
        `replies`): those not queued yet."""
        if not claim.bots:
            return []
        won = replies[-1 - len(claim.bots) : -1]
        return [seat for seat, new in zip(claim.bots, won, strict=True) if new]

    def _queue(self, table: Table, due: datetime | None, fresh: list[int]) -> list[str]:
        """Queue the turns of the bot seats `fresh`, to be played at `due` (None: at once)."""
        if not fresh:
            return []
        if due is not None:
            for seat in fresh:
                self.queue.enqueue_at(
                    due,
                    PLAY_TURN,
                    table.id,
                    table.version,
                    seat,
                    **self._options(job_id(table.id, table.version, seat)),
                )
        else:
            self.queue.enqueue_many(
                [
                    Queue.prepare_data(
                        PLAY_TURN,
                        (table.id, table.version, seat),
                        **self._prepared(job_id(table.id, table.version, seat)),
                    )
                    for seat in fresh
                ]
            )
        return [job_id(table.id, table.version, seat) for seat in fresh]

    def _paced(self, table: Table) -> datetime | None:
        """When bots may act at `table`: None for at once (no person plays, or no time known)."""
        if not table.has_people or table.changed_at is None:
            return None
        # While a race is open every bot move, a reaction or the move that closes it, waits the
        # reaction time: whether anyone holds a card to race with must not show in the pace.
        window = self.tables.race_open(table)
        clock = table.clock
        pause = max(clock.bot_delay_seconds, clock.reaction_seconds if window else 0.0)
        return not_before(table.changed_at + timedelta(seconds=pause)) if pause else None

    def _prepared(self, job: str, kept: int = RESULT_TTL_SECONDS) -> dict[str, Any]:
        return {
            "job_id": job,
            "timeout": self.job_timeout,
            "result_ttl": kept,
            "failure_ttl": 24 * 3600,
            "retry": Retry(max=RETRIES),
            # The request (or job) that queued the turn: its id follows into the worker's logs.
            "meta": job_meta(),
        }

    def _options(
        self, job: str, pipe: Pipeline | None = None, kept: int = RESULT_TTL_SECONDS
    ) -> dict[str, Any]:
        """`_prepared` as `Queue.enqueue_at` names them, written in `pipe` if given."""
        prepared = self._prepared(job, kept)
        prepared["job_timeout"] = prepared.pop("timeout")
        if pipe is not None:
            prepared["pipeline"] = pipe
        return prepared

    def _due(self, wait_ms: int = 0) -> float:
        """When a table waiting from now (its bots held back `wait_ms`) is next looked at by
        the sweep."""
        return self.clock() * 1000 + self.claim_ms + wait_ms

    def recheck(self, table: Table) -> None:
        """Have the sweep schedule `table` again at once: what was scheduled for it was
        overwritten (see `TurnPlayer.time_out`)."""
        self.redis.zadd(WAITING, {table.id: self.clock() * 1000}, lt=True)
        self.wake()

    def sweep(self, tables: TableSource) -> list[str]:
        """Schedule again every table still marked waiting once its mark is due: the turns whose
        claim ran out, and the timeouts and expiry a failed `schedule` left out; their job ids."""
        due: list[bytes] = self.redis.zrangebyscore(WAITING, "-inf", self.clock() * 1000)  # type: ignore[assignment]
        queued = []
        for member in due:
            table_id = member.decode()
            current = tables.current(table_id)
            if current is None:
                with self.redis.pipeline(transaction=False) as pipe:
                    pipe.zrem(WAITING, table_id)
                    pipe.hdel(MARKED_AT, table_id)
                    pipe.execute()
                continue
            if (parked := self.parked(current)) is not None:
                # Its deadlines moved on since it was marked: mark it for their new handover,
                # unless an append landed meanwhile (its mark stands, due: the next sweep).
                self.redis.eval(
                    UNLESS_NEWER, 2, WAITING, MARKED_AT, table_id, current.version, parked
                )
                continue
            if not self.tables.decides(current):
                # Created under a rules version a release dropped: nobody may act there and no
                # clock runs (`Tables.may_act`, `deadlines`), so `schedule` queues nothing and
                # only takes its mark away, rather than jobs that would fail for ever.
                log.warning(
                    "table %s (%s, rules version %s) is not decided by this code: left alone",
                    table_id,
                    current.game,
                    current.rules_version,
                )
            queued += self.schedule(current).jobs
        return queued
