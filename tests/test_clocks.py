"""Turn clocks: every table has one; a person who runs out of time gets a stand-in's move, and
after enough timeouts in a row a bot for the rest of the game; bots keep a human pace beside
people. Times come from a clock the test moves, and scheduled jobs are looked at, not waited for.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from random import Random
from typing import Any, cast

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient
from rq.job import Job
from rq.registry import FailedJobRegistry, ScheduledJobRegistry
from rq.serializers import JSONSerializer

from bootstrap import Services, build, web_app
from domain.game import Game
from domain.registry import GameRegistry, default_registry
from domain.table import (
    CLOCK_CHARGED,
    DEFAULT_CLOCK,
    GAME_CREATED,
    MOVE_SUBSTITUTED,
    PLAYER_RETURNED,
    SEAT_HANDED_TO_BOT,
    SeatUnavailable,
    Table,
    game_created_v2_to_v3,
)
from events.envelope import START
from events.store import ConcurrencyConflict, Mark
from service.config import Config
from service.tables import BotSeat
from service.views import Caller
from tests.live import TEST_REDIS_URL, call
from tests.stack import Stack
from tests.test_api import payload
from tests.test_bots import FULL_SPEED, GoneAfterAppend, drain, seat_human
from workers.player import Outcome
from workers.turns import (
    MARKED_AT,
    WAITING,
    Scheduled,
    TurnQueue,
    bot_queue,
    job_id,
    not_before,
    timeout_job_id,
)


@dataclass
class Now:
    """A clock the test moves."""

    at: datetime = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.at


@pytest.fixture
def app(any_redis: redis.Redis) -> Flask:
    return web_app(Config(), redis_client=any_redis)


def scheduled(services: Services) -> dict[str, datetime]:
    """The jobs waiting for RQ's scheduler, with when each is due."""
    registry = ScheduledJobRegistry(queue=bot_queue(services.redis))  # type: ignore[no-untyped-call]
    entries: list[tuple[bytes, float]] = services.redis.zrange(  # type: ignore[assignment]
        registry.key, 0, -1, withscores=True
    )
    return {name.decode(): datetime.fromtimestamp(score, UTC) for name, score in entries}


def release(services: Services) -> None:
    """What RQ's scheduler does once their time has come: queue every scheduled job."""
    queue = bot_queue(services.redis)
    registry = ScheduledJobRegistry(queue=queue)  # type: ignore[no-untyped-call]
    for name in scheduled(services):
        job = Job.fetch(name, connection=services.redis, serializer=JSONSerializer)
        registry.remove(job)
        queue.enqueue_job(job)


# -- the clock of a table ---------------------------------------------------------------------


def test_a_table_has_the_clock_it_was_created_with(client: FlaskClient) -> None:
    created = client.post(
        "/v1/tables", json={"game": "pig10", "seats": 2, "clock": {"turn_seconds": 60}}
    )
    assert created.status_code == 201, payload(created)
    table = payload(created)
    assert table["clock"] == {**DEFAULT_CLOCK.to_json(), "turn_seconds": 60}
    assert table["deadlines"] == {}, "an open table waits for nobody's move"
    default = payload(client.post("/v1/tables", json={"game": "pig10", "seats": 2}))
    assert default["clock"]["turn_seconds"] == DEFAULT_CLOCK.turn_seconds, "a day per decision"


def test_each_seat_waited_for_has_a_deadline_everyone_sees_alike(client: FlaskClient) -> None:
    created = payload(
        client.post("/v1/tables", json={"game": "pig10", "seats": 2, "clock": {"turn_seconds": 90}})
    )
    url = f"/v1/tables/{created['id']}"
    tokens = [payload(client.post(f"{url}/seats", json={"name": n}))["token"] for n in "ab"]
    views = [
        payload(
            client.get(url, headers={} if token is None else {"Authorization": f"Bearer {token}"})
        )
        for token in [None, *tokens]
    ]
    last = payload(client.get(f"{url}/events"))["events"][-1]
    expected = datetime.fromisoformat(last["meta"]["time"]) + timedelta(seconds=90)
    for view in views:
        assert view["deadlines"] == {str(seat): expected.isoformat() for seat in view["to_act"]}
    assert (
        payload(client.get(f"{url}/versions/{views[0]['version']}"))["deadlines"]
        == views[0]["deadlines"]
    )


@pytest.mark.parametrize(
    ("clock", "status", "kind"),
    [
        ({"turn_seconds": 0}, 422, "invalid-clock"),
        ({"timeouts": 0}, 422, "invalid-clock"),
        ({"reaction_seconds": 3600}, 422, "invalid-clock"),
        ({"turn_seconds": "soon"}, 422, "invalid-body"),
        ({"bank_minutes": 5}, 422, "invalid-body"),
    ],
)
def test_a_bad_clock_creates_nothing(
    client: FlaskClient, clock: dict[str, Any], status: int, kind: str
) -> None:
    answer = client.post("/v1/tables", json={"game": "pig10", "seats": 2, "clock": clock})
    assert answer.status_code == status
    assert payload(answer)["type"] == f"/problems/{kind}"
    assert payload(client.get("/v1/tables")) == []


def test_tables_created_before_clocks_have_the_default_one() -> None:
    upcast = game_created_v2_to_v3({"table": "t", "game": "pig10", "seats": 2})
    assert upcast["clock"] == DEFAULT_CLOCK.to_json()
    assert GAME_CREATED == "table.GameCreated"


# -- running out of time ----------------------------------------------------------------------


def timed_table(any_redis: redis.Redis, clock: dict[str, Any]) -> tuple[Services, Now, str, str]:
    """Pig 10 on `clock`: a person in seat 0, who moves first, and a bot in seat 1."""
    now = Now()
    services = build(any_redis, FULL_SPEED, clock=now)
    created = services.commands.create(
        "pig10", 2, {"first_seat": 0}, None, [BotSeat(1, "random")], clock=clock
    )
    table_id = str(created.body["id"])
    return services, now, table_id, seat_human(services, table_id)


def test_a_person_out_of_time_gets_a_stand_in_move_then_a_bot(any_redis: redis.Redis) -> None:
    services, now, table_id, _ = timed_table(any_redis, {"turn_seconds": 30, "timeouts": 2})
    tables = services.repository.tables
    timeouts = 0
    while (table := services.repository.load(table_id).table).result is None:
        drain(services)
        table = services.repository.load(table_id).table
        if table.result is not None or table.seats[0] is None or table.seats[0].player:
            break
        assert tables.to_act(table) == [0]
        deadline = tables.deadlines(table)[0]
        due = scheduled(services)[timeout_job_id(table_id, 0)]
        assert due == not_before(deadline)
        early = services.player.time_out(table_id, table.version, 0)
        assert early is Outcome.STALE, "no timeout before the deadline"
        now.at = deadline
        assert services.player.time_out(table_id, table.version, 0) is Outcome.SUBSTITUTED
        assert services.player.time_out(table_id, table.version, 0) is Outcome.STALE, "once"
        timeouts += 1
    drain(services)  # the bot now playing seat 0 finishes the game
    records = services.repository.store.read(table_id, START)
    substituted = [r.data for r in records if r.type == MOVE_SUBSTITUTED]
    assert substituted == [{"seat": 0, "reason": "timeout"}] * 2
    (handed,) = [r.data for r in records if r.type == SEAT_HANDED_TO_BOT]
    assert handed == {"seat": 0, "bot": "heuristic", "reason": "2 timeouts in a row"}
    assert services.repository.load(table_id).table.result is not None
    audit = services.queries.audit(table_id)
    assert audit["ok"], audit["problems"]


def play_until_the_person_is_waited_for_again(services: Services, table_id: str) -> None:
    """The person in seat 0 moves, then the bot plays until the table waits for seat 0."""
    tables = services.repository.tables
    table = services.repository.load(table_id).table
    move = tables.legal_moves(table, 0)[0]
    services.commands.move(table_id, Caller(0), move, table.version, None)
    drain(services)


def test_a_person_has_one_timeout_job_however_many_turns_they_play(
    any_redis: redis.Redis,
) -> None:
    """Each decision schedules the seat's one job again, for its version and deadline: with a
    day's default deadline, a job per move would pile up for a day."""
    services, _, table_id, _ = timed_table(any_redis, {})
    tables = services.repository.tables
    for _ in range(4):
        table = services.repository.load(table_id).table
        if table.result is not None:
            break
        assert tables.to_act(table) == [0]
        jobs = scheduled(services)
        timeouts = [name for name in jobs if name.startswith("timeout-")]
        assert timeouts == [timeout_job_id(table_id, 0)], "one job, the seat's"
        assert jobs[timeout_job_id(table_id, 0)] == not_before(tables.deadlines(table)[0])
        job = Job.fetch(timeout_job_id(table_id, 0), services.redis, JSONSerializer)
        assert job.args == [table_id, table.version, 0], "for the decision waited for now"
        play_until_the_person_is_waited_for_again(services, table_id)


def half_minute_table(any_redis: redis.Redis) -> tuple[Services, Now, str]:
    """Pig 10 between two people with 30 s a decision, seat 0 to move."""
    now = Now()
    services = build(any_redis, FULL_SPEED, clock=now)
    return services, now, two_people(services, 30)


def two_people(services: Services, turn_seconds: float) -> str:
    """The id of a new Pig 10 table between two people, `turn_seconds` a decision, seat 0 to
    move."""
    created = services.commands.create(
        "pig10", 2, {"first_seat": 0}, None, [], clock={"turn_seconds": turn_seconds}
    )
    table_id = str(created.body["id"])
    for _ in range(2):
        seat_human(services, table_id)
    return table_id


def test_a_timeout_left_unscheduled_after_an_append_is_scheduled_by_the_sweep(
    any_redis: redis.Redis,
) -> None:
    """The move is stored, then the web process loses Redis before it schedules the next
    person's timeout: the table's mark, set before the append, brings the sweep to it."""
    services, now, table_id = half_minute_table(any_redis)
    tables = services.repository.tables
    table = services.repository.load(table_id).table
    assert tables.to_act(table) == [0]
    turns = services.turns
    services.commands.turns = GoneAfterAppend(turns)
    move = tables.legal_moves(table, 0)[0]
    services.commands.move(table_id, Caller(0), move, table.version, None)
    table = services.repository.load(table_id).table
    assert tables.to_act(table) == [1]
    assert timeout_job_id(table_id, 1) not in scheduled(services), "lost with Redis"
    assert turns.sweep(services.queries) == [], "not due before a claim's time"
    later = time.time() + turns.claim_ms / 1000 + 1
    sweep_then_time_out(services, now, table_id, 1, at=later)


class SlowToSchedule:
    """The turn queue of a process that appends, then schedules only when `catch_up` is
    called: another process's move may land in between."""

    def __init__(self, turns: TurnQueue) -> None:
        self.turns = turns
        self.late: list[Table] = []

    def expect(self, table: Table, *, marked: bool = False) -> Mark | None:
        return self.turns.expect(table, marked=marked)

    def schedule(
        self, table: Table, *, keep: bool = False, claimed: Sequence[bool] | None = None
    ) -> Scheduled:
        self.late.append(table)
        return Scheduled([])

    def recheck(self, table: Table) -> None:
        self.turns.recheck(table)

    def refused(self, table: Table, actual: int) -> None:
        self.turns.refused(table, actual)

    def catch_up(self) -> None:
        for table in self.late:
            self.turns.schedule(table)


def test_a_late_schedule_of_an_older_move_leaves_the_newer_moves_mark(
    any_redis: redis.Redis,
) -> None:
    """Seat 0's move is appended and, before its process schedules the next timeout, seat 1
    answers from another process, which loses Redis after its append. The first process's late
    `schedule`, for the older version, must not take away the mark of seat 1's move: it is
    what brings the sweep to seat 0's timeout."""
    services, now, table_id = half_minute_table(any_redis)
    tables, turns = services.repository.tables, services.turns
    slow = SlowToSchedule(turns)
    for seat, process in ((0, slow), (1, GoneAfterAppend(turns))):
        services.commands.turns = process
        table = services.repository.load(table_id).table
        assert tables.to_act(table) == [seat]
        services.commands.move(
            table_id, Caller(seat), tables.legal_moves(table, seat)[0], table.version, None
        )
    slow.catch_up()
    assert tables.to_act(services.repository.load(table_id).table) == [0]
    later = time.time() + turns.claim_ms / 1000 + 1
    sweep_then_time_out(services, now, table_id, 0, at=later)


def test_a_timeout_scheduled_late_for_an_older_version_still_times_the_seat_out(
    any_redis: redis.Redis,
) -> None:
    """Seat 1 leaves while seat 0 is to move, so seat 0 is waited for at two versions, each
    with its own deadline. The process that schedules the older version's timeout is slow and
    writes it after the newer version's, over the seat's one job. When that job runs it finds
    the newer version with the seat still waited for, and has the sweep schedule the table
    again: the seat times out all the same."""
    services, now, table_id = half_minute_table(any_redis)
    tables = services.repository.tables
    older = services.repository.load(table_id).table
    assert tables.to_act(older) == [0]
    now.at += timedelta(seconds=10)
    services.commands.leave(table_id, Caller(1))
    newer = services.repository.load(table_id).table
    assert tables.to_act(newer) == [0]
    assert tables.deadlines(newer)[0] > tables.deadlines(older)[0]
    services.turns.schedule(older)
    job = Job.fetch(timeout_job_id(table_id, 0), services.redis, JSONSerializer)
    assert job.args == [table_id, older.version, 0], "the late schedule took the seat's job"

    def types() -> list[str]:
        return [record.type for record in services.repository.store.read(table_id, START)]

    now.at = tables.deadlines(older)[0]
    release(services)
    drain(services)
    assert MOVE_SUBSTITUTED not in types(), "not due at the newer version"
    assert timeout_job_id(table_id, 0) not in scheduled(services)
    assert services.turns.sweep(services.queries) == [timeout_job_id(table_id, 0)]
    assert scheduled(services)[timeout_job_id(table_id, 0)] == not_before(
        tables.deadlines(newer)[0]
    ), "scheduled again by the sweep, for the newer version"
    now.at = tables.deadlines(newer)[0]
    release(services)
    drain(services)
    assert MOVE_SUBSTITUTED in types(), "the timeout came"


def test_a_refused_append_takes_back_its_stamp_where_the_queue_has_a_redis_of_its_own(
    real_redis: redis.Redis,
) -> None:
    """With the queue on a Redis of its own, the mark and its stamp are written before the
    append. Process A decides seat 0's move (two events) on the table it has cached, while
    process B hands seat 1 to a bot (one event) and lands first. A's append is refused; its
    stamp, ahead of the version that landed, is set back to it, so the sweep's next look at the
    table is its last."""
    queue = redis.Redis.from_url(TEST_REDIS_URL)
    now = Now()
    first = build(real_redis, FULL_SPEED, clock=now, queue_client=queue)
    assert not first.turns.marks_with_appends
    table_id = two_people(first, 30)
    cached = first.repository.load(table_id).table
    second = build(real_redis, FULL_SPEED, clock=now, queue_client=queue)
    second.commands.leave(table_id, Caller(1))
    landed = second.repository.load(table_id).table.version
    assert landed == cached.version + 1
    move = first.repository.tables.legal_moves(cached, 0)[0]
    with pytest.raises(ConcurrencyConflict):
        first.commands.move(table_id, Caller(0), move, cached.version, None)
    assert cast(bytes | None, queue.hget(MARKED_AT, table_id)) == str(landed).encode(), "set back"
    first.turns.clock = lambda: time.time() + first.turns.claim_ms / 1000 + 1
    first.turns.sweep(first.queries)
    assert queue.zscore(WAITING, table_id) is None, "looked at once, then forgotten"
    queue.close()


class MovesWhileRead:
    """The tables as the sweep reads them, with seat `seat`'s move landing a minute later (from
    a process that then loses Redis) just after the sweep has read the table."""

    def __init__(self, services: Services, now: Now, seat: int) -> None:
        self.services, self.now, self.seat = services, now, seat

    def current(self, table_id: str) -> Table | None:
        read = self.services.queries.current(table_id)
        assert read is not None
        turns = self.services.commands.turns
        self.services.commands.turns = GoneAfterAppend(self.services.turns)
        move = self.services.repository.tables.legal_moves(read, self.seat)[0]
        self.now.at += timedelta(minutes=1)
        self.services.commands.move(table_id, Caller(self.seat), move, read.version, None)
        self.services.commands.turns = turns
        return read


def test_a_sweep_working_from_an_older_version_leaves_the_newer_mark(
    any_redis: redis.Redis,
) -> None:
    """The sweep finds a parked table due whose deadlines moved on; as it marks the table for
    their new handover, a move lands whose process loses Redis. The sweep, which read the table
    before that move, leaves the move's mark as it is, due: the next sweep looks again."""
    services, now, table_id = people_only_table(any_redis)
    tables, turns = services.repository.tables, services.turns
    first_deadline = tables.deadlines(services.repository.load(table_id).table)[0]
    table = services.repository.load(table_id).table
    now.at += timedelta(minutes=1)
    services.commands.move(
        table_id, Caller(0), tables.legal_moves(table, 0)[0], table.version, None
    )
    due = any_redis.zscore(WAITING, table_id)
    assert due == pytest.approx(handover_ms(services, first_deadline)), "the earliest stays"
    turns.clock = lambda: first_deadline.timestamp() - turns.handover_seconds + 1
    assert turns.sweep(MovesWhileRead(services, now, 1)) == []
    assert any_redis.zscore(WAITING, table_id) == due, "left for the next sweep"
    assert turns.sweep(services.queries) == [], "which marks it for the newest deadline"
    newest = tables.deadlines(services.repository.load(table_id).table)[0]
    assert any_redis.zscore(WAITING, table_id) == pytest.approx(handover_ms(services, newest))


def sweep_then_time_out(services: Services, now: Now, table_id: str, seat: int, at: float) -> None:
    """The sweep at `at` schedules `seat`'s timeout for its deadline and forgets the table;
    the timeout then comes at the deadline."""
    turns = services.turns
    deadline = services.repository.tables.deadlines(services.repository.load(table_id).table)[seat]
    turns.clock = lambda: at
    assert turns.sweep(services.queries) == [timeout_job_id(table_id, seat)]
    assert scheduled(services)[timeout_job_id(table_id, seat)] == not_before(deadline)
    assert services.redis.zscore(WAITING, table_id) is None, "swept once, then forgotten"
    now.at = deadline
    release(services)
    drain(services)
    types = [r.type for r in services.repository.store.read(table_id, START)]
    assert MOVE_SUBSTITUTED in types, "the timeout came"


def test_a_stale_run_of_a_timeout_job_keeps_the_job_scheduled_again_meanwhile(
    any_redis: redis.Redis,
) -> None:
    """The run at an old deadline can end after the seat's job was scheduled anew, and sets the
    job's hash to expire: the hash must outlive the new deadline."""
    services, now, table_id, _ = timed_table(any_redis, {"turn_seconds": 7 * 24 * 3600})
    play_until_the_person_is_waited_for_again(services, table_id)
    name = timeout_job_id(table_id, 0)
    job = Job.fetch(name, services.redis, JSONSerializer)
    bot_queue(services.redis).enqueue_job(job)  # as the scheduler did at the old deadline
    drain(services)  # the run finds the decision not yet due: stale, and finished
    assert Job.fetch(name, services.redis, JSONSerializer).get_status() == "finished"
    table = services.repository.load(table_id).table
    deadline = services.repository.tables.deadlines(table)[0]
    assert name in scheduled(services), "still scheduled for the new deadline"
    lasts = cast(int, services.redis.ttl(Job.key_for(name)))
    assert lasts > (deadline - now.at).total_seconds(), "its hash outlives the new deadline"
    now.at = deadline
    release(services)
    drain(services)
    types = [r.type for r in services.repository.store.read(table_id, START)]
    assert MOVE_SUBSTITUTED in types, "the timeout came"


def test_a_person_who_moves_again_starts_counting_afresh(any_redis: redis.Redis) -> None:
    services, now, table_id, _ = timed_table(any_redis, {"turn_seconds": 30, "timeouts": 2})
    tables = services.repository.tables
    table = services.repository.load(table_id).table
    now.at = tables.deadlines(table)[0]
    assert services.player.time_out(table_id, table.version, 0) is Outcome.SUBSTITUTED
    drain(services)
    table = services.repository.load(table_id).table
    move = tables.legal_moves(table, 0)[0]
    services.commands.move(table_id, Caller(0), move, table.version, None)
    drain(services)
    table = services.repository.load(table_id).table
    now.at = tables.deadlines(table)[0]
    assert services.player.time_out(table_id, table.version, 0) is Outcome.SUBSTITUTED
    types = [r.type for r in services.repository.store.read(table_id, START)]
    assert PLAYER_RETURNED in types
    assert SEAT_HANDED_TO_BOT not in types, "the timeouts were not in a row"
    assert services.repository.load(table_id).table.seats[0].player is None  # type: ignore[union-attr]


# -- bots at a human pace ---------------------------------------------------------------------


def test_bots_beside_a_person_wait_for_the_bot_delay(any_redis: redis.Redis) -> None:
    services = build(any_redis, Config(bot_delay_seconds=1, reaction_seconds=2))
    created = services.commands.create("pig10", 2, {"first_seat": 1}, None, [BotSeat(1, "random")])
    table_id = str(created.body["id"])
    seat_human(services, table_id)
    table = services.repository.load(table_id).table
    assert bot_queue(services.redis).job_ids == [], "not at once"
    assert table.changed_at is not None
    due = scheduled(services)[job_id(table_id, table.version, 1)]
    assert due == not_before(table.changed_at + timedelta(seconds=1))


def test_an_all_bot_table_plays_at_full_speed(any_redis: redis.Redis) -> None:
    services = build(any_redis, Config(bot_delay_seconds=1, reaction_seconds=2))
    bots = [BotSeat(0, "random"), BotSeat(1, "random")]
    table_id = str(services.commands.create("pig10", 2, {}, None, bots).body["id"])
    assert scheduled(services) == {}
    drain(services)
    assert services.repository.load(table_id).table.result is not None


def test_no_bot_reacts_at_a_wobble_table_before_the_reaction_time(any_redis: redis.Redis) -> None:
    """While a toss-in or Jerk window is open every bot waits the reaction time, whether or not
    anyone holds a card to race with: the pace is a function of the table's public state."""
    services = build(any_redis, Config(bot_delay_seconds=0.5, reaction_seconds=2))
    tables = services.repository.tables
    bots = [BotSeat(seat, "random") for seat in (1, 2, 3)]
    table_id = str(services.commands.create("wobble", 4, {}, None, bots).body["id"])
    token = seat_human(services, table_id)
    assert token
    rng = Random(7)
    windows = 0
    for _ in range(400):
        table = services.repository.load(table_id).table
        if table.result is not None:
            break
        jobs = scheduled(services)
        window = tables.race_open(table)
        assert table.changed_at is not None
        for seat in table.bots_among(tables.may_act(table)):
            name = job_id(table_id, table.version, seat)
            pause = (jobs[name] - table.changed_at).total_seconds()
            least = 2 if window else 0.5
            assert least <= pause < least + 1, (window, pause)
        windows += window
        if 0 in tables.may_act(table) and (rng.random() < 0.5 or not jobs):
            move = rng.choice(tables.legal_moves(table, 0))
            services.commands.move(table_id, Caller(0), move, table.version, None)
        else:
            release(services)
            drain(services)
    assert windows, "the game opened reaction windows"


# -- the whole service ------------------------------------------------------------------------

STALLED = {"game": "pig10", "seats": 2, "options": {"first_seat": 0}}
"""A person in seat 0, who moves first and never moves, and a bot in seat 1."""


def test_embedded_mode_moves_for_a_person_who_walked_away(
    embedded: Callable[[Config], Flask],
) -> None:
    """No Redis at all: the process's own scheduler times the absent person out, hands the
    seat to a bot, and the game ends with an audit that passes."""
    client = embedded(Config(bot_delay_seconds=0.2)).test_client()
    body = {
        **STALLED,
        "bots": [{"seat": 1, "bot": "random"}],
        "clock": {"turn_seconds": 1, "timeouts": 2},
    }
    table = payload(client.post("/v1/tables", json=body))
    url = f"/v1/tables/{table['id']}"
    assert client.post(f"{url}/seats", json={"name": "gone"}).status_code == 201
    ends = time.monotonic() + 120
    while (view := payload(client.get(url)))["status"] != "finished":
        assert time.monotonic() < ends, f"the table stalled at version {view['version']}"
        time.sleep(0.1)
    events = payload(client.get(f"{url}/events"))["events"]
    reasons = [e["data"]["reason"] for e in events if e["type"] == MOVE_SUBSTITUTED]
    assert reasons == ["timeout", "timeout"]
    assert [e["data"]["seat"] for e in events if e["type"] == SEAT_HANDED_TO_BOT] == [0]
    assert payload(client.get(f"{url}/audit"))["ok"]


@pytest.mark.redis
def test_the_served_stack_moves_for_a_person_who_walked_away(stack: Stack) -> None:
    """As the Procfile runs it: gunicorn, and a worker with RQ's scheduler, on a real Redis."""
    body = {
        **STALLED,
        "bots": [{"seat": 1, "bot": "random"}],
        "clock": {"turn_seconds": 1, "timeouts": 2, "bot_delay_seconds": 0.2},
    }
    status, table = call(stack.base, "POST", "/v1/tables", body)
    assert status == 201, table
    url = f"/v1/tables/{table['id']}"
    assert call(stack.base, "POST", f"{url}/seats", {"name": "gone"})[0] == 201
    ends = time.monotonic() + 120
    while (view := call(stack.base, "GET", url)[1])["status"] != "finished":
        stack.check_alive()
        assert time.monotonic() < ends, f"stalled at {view['version']}:\n{stack.worker_logs()}"
        time.sleep(0.2)
    events = call(stack.base, "GET", f"{url}/events")[1]["events"]
    assert [e["data"]["seat"] for e in events if e["type"] == SEAT_HANDED_TO_BOT] == [0]
    assert call(stack.base, "GET", f"{url}/audit")[1]["ok"]


# -- deadlines an hour away or more -----------------------------------------------------------


def people_only_table(
    any_redis: redis.Redis, wake: Callable[[], None] = lambda: None
) -> tuple[Services, Now, str]:
    """Pig 10 between two people on the default clock (a day per decision), seat 0 to move;
    the table's clock starts at the real time, which the turn queue reads."""
    now = Now(datetime.now(UTC))
    services = build(any_redis, FULL_SPEED, clock=now, wake=wake)
    table_id = str(services.commands.create("pig10", 2, {"first_seat": 0}, None).body["id"])
    for _ in range(2):
        seat_human(services, table_id)
    return services, now, table_id


def handover_ms(services: Services, deadline: datetime) -> float:
    return (deadline.timestamp() - services.turns.handover_seconds) * 1000


def test_a_far_deadline_waits_in_the_sweeps_set_until_the_hour_before_it(
    any_redis: redis.Redis,
) -> None:
    """At a table of people a move schedules no job while the next deadline is more than an
    hour away: the append marks the table for the hour before it, and then the sweep gives the
    timeout to RQ's scheduler, which runs it at the deadline."""
    services, now, table_id = people_only_table(any_redis)
    tables = services.repository.tables
    table = services.repository.load(table_id).table
    move = tables.legal_moves(table, 0)[0]
    services.commands.move(table_id, Caller(0), move, table.version, None)
    parked_until_the_hour_before(services, now, table_id, 1)


def parked_until_the_hour_before(services: Services, now: Now, table_id: str, seat: int) -> None:
    """No timeout is given to RQ: the table's mark waits for the hour before `seat`'s deadline,
    and the sweep then hands the timeout over, which comes at the deadline."""
    turns = services.turns
    deadline = services.repository.tables.deadlines(services.repository.load(table_id).table)[seat]
    assert not [name for name in scheduled(services) if name.startswith("timeout-")]
    assert services.redis.zscore(WAITING, table_id) == pytest.approx(
        handover_ms(services, deadline)
    )
    assert turns.sweep(services.queries) == [], "not before the handover"
    sweep_then_time_out(
        services, now, table_id, seat, at=deadline.timestamp() - turns.handover_seconds + 1
    )


def test_a_far_deadline_at_a_table_with_a_bot_waits_in_the_sweeps_set_too(
    any_redis: redis.Redis,
) -> None:
    """Once the bot has moved and the person is to act, nothing is given to RQ: the bot's
    append replaces the mark of the turn it played with the hour before the person's
    deadline, and the sweep hands the timeout over then."""
    now = Now(datetime.now(UTC))
    services = build(any_redis, FULL_SPEED, clock=now)
    created = services.commands.create("pig10", 2, {"first_seat": 1}, None, [BotSeat(1, "random")])
    table_id = str(created.body["id"])
    seat_human(services, table_id)
    drain(services)  # the bot plays its turn
    table = services.repository.load(table_id).table
    assert services.repository.tables.to_act(table) == [0]
    parked_until_the_hour_before(services, now, table_id, 0)


def test_a_parked_deadline_wakes_the_worker_whose_sweep_will_find_it(
    any_redis: redis.Redis,
) -> None:
    """Embedded, the bot worker (and its sweep) starts when first woken: a game of people on a
    day's clock, which queues no job, must wake it too, or its timeouts would never come."""
    woken: list[str] = []
    services, _, table_id = people_only_table(any_redis, wake=lambda: woken.append("woken"))
    woken.clear()
    table = services.repository.load(table_id).table
    move = services.repository.tables.legal_moves(table, 0)[0]
    services.commands.move(table_id, Caller(0), move, table.version, None)
    assert not scheduled(services), "nothing queued"
    assert woken, "but the worker woken"


def test_moves_push_a_parked_deadline_back_and_the_sweep_marks_it_again(
    any_redis: redis.Redis,
) -> None:
    services, now, table_id = people_only_table(any_redis)
    tables, turns = services.repository.tables, services.turns
    first = services.repository.load(table_id).table
    first_deadline = tables.deadlines(first)[0]
    for seat in (0, 1):
        now.at += timedelta(minutes=1)
        table = services.repository.load(table_id).table
        move = tables.legal_moves(table, seat)[0]
        services.commands.move(table_id, Caller(seat), move, table.version, None)
    table = services.repository.load(table_id).table
    deadline = tables.deadlines(table)[0]
    assert deadline > first_deadline
    marked = any_redis.zscore(WAITING, table_id)
    assert marked == pytest.approx(handover_ms(services, first_deadline)), "the earliest stays"
    at_first_handover = first_deadline.timestamp() - turns.handover_seconds + 1
    turns.clock = lambda: at_first_handover
    assert turns.sweep(services.queries) == [], "the seat moved since: nothing due yet"
    assert any_redis.zscore(WAITING, table_id) == pytest.approx(handover_ms(services, deadline))
    assert not [name for name in scheduled(services) if name.startswith("timeout-")]


def test_a_deadline_within_the_hour_is_scheduled_at_once(any_redis: redis.Redis) -> None:
    services = build(any_redis, FULL_SPEED)
    table_id = two_people(services, 1800)
    table = services.repository.load(table_id).table
    deadline = services.repository.tables.deadlines(table)[0]
    assert scheduled(services)[timeout_job_id(table_id, 0)] == not_before(deadline)
    assert any_redis.zscore(WAITING, table_id) is None


def test_an_open_tables_expiry_a_day_away_waits_for_the_sweep(any_redis: redis.Redis) -> None:
    services = build(any_redis, FULL_SPEED)
    table_id = str(services.commands.create("pig10", 3, {}, None).body["id"])
    seat_human(services, table_id)
    table = services.repository.load(table_id).table
    assert table.changed_at is not None
    expiry = table.changed_at + timedelta(seconds=services.turns.open_table.total_seconds())
    assert f"expire-{table_id}" not in scheduled(services)
    assert any_redis.zscore(WAITING, table_id) == pytest.approx(handover_ms(services, expiry))
    seat_human(services, table_id)
    seat_human(services, table_id)  # the table starts: nothing is left to expire
    at_handover = expiry.timestamp() - services.turns.handover_seconds + 1
    services.turns.clock = lambda: at_handover
    services.turns.sweep(services.queries)
    assert f"expire-{table_id}" not in scheduled(services), "no expiry job left behind"


# -- leaving ----------------------------------------------------------------------------------


def test_a_person_who_leaves_is_replaced_by_a_bot_for_good(any_redis: redis.Redis) -> None:
    services, _, table_id, _ = timed_table(any_redis, {})
    table = services.commands.leave(table_id, Caller(0)).body
    assert table["seats"][0]["bot"] == "heuristic"
    left = services.queries.legal_moves(table_id, Caller(0)).body
    assert (left["to_act"], left["moves"]) == (False, []), "the bot plays them, not the token"
    drain(services)  # both seats are bots now: the game plays itself to the end
    records = services.repository.store.read(table_id, START)
    handed = [(r.data, r.meta["seat"]) for r in records if r.type == SEAT_HANDED_TO_BOT]
    assert handed == [({"seat": 0, "bot": "heuristic", "reason": "left"}, 0)]
    assert services.repository.load(table_id).table.result is not None
    audit = services.queries.audit(table_id)
    assert audit["ok"], audit["problems"]


def test_a_table_nobody_sits_down_at_expires(any_redis: redis.Redis) -> None:
    services = build(any_redis, replace(FULL_SPEED, open_table_seconds=600))
    table_id = str(services.commands.create("pig10", 3, {}, None).body["id"])
    created = services.repository.load(table_id).table
    seat_human(services, table_id)  # each seat taken gives the table its time again
    table = services.repository.load(table_id).table
    assert table.changed_at is not None
    due = scheduled(services)[f"expire-{table_id}"]
    assert due == not_before(table.changed_at + timedelta(seconds=600))
    assert services.player.expire(table_id, created.version) is Outcome.STALE
    assert services.player.expire(table_id, table.version) is Outcome.PLAYED
    assert services.repository.load(table_id).table.status.value == "expired"
    with pytest.raises(SeatUnavailable, match="expired"):
        seat_human(services, table_id)
    assert services.player.expire(table_id, table.version + 1) is Outcome.STALE, "once"
    assert services.queries.list_tables("expired", None, 10).body[0]["id"] == table_id


def test_an_expiry_job_of_an_older_version_has_the_sweep_schedule_the_open_table_again(
    any_redis: redis.Redis,
) -> None:
    """An expiry job runs for a version the open table has left behind: each seat taken
    schedules the table's one expiry job again, so this run's job was overwritten, and the sweep
    schedules the expiry anew."""
    services = build(any_redis, replace(FULL_SPEED, open_table_seconds=600))
    table_id = str(services.commands.create("pig10", 3, {}, None).body["id"])
    created = services.repository.load(table_id).table
    seat_human(services, table_id)
    assert any_redis.zscore(WAITING, table_id) is None, "scheduled: nothing for the sweep"
    any_redis.delete(Job.key_for(f"expire-{table_id}"))
    assert services.player.expire(table_id, created.version) is Outcome.STALE
    assert services.turns.sweep(services.queries) == [f"expire-{table_id}"]
    job = Job.fetch(f"expire-{table_id}", services.redis, JSONSerializer)
    assert job.args == [table_id, services.repository.load(table_id).table.version]


def test_a_time_bank_is_spent_by_each_decision_and_topped_up(any_redis: redis.Redis) -> None:
    services, now, table_id, _ = timed_table(
        any_redis, {"bank_seconds": 100, "increment_seconds": 5, "timeouts": 5}
    )
    tables = services.repository.tables

    def deadline() -> datetime:
        table = services.repository.load(table_id).table
        assert table.changed_at is not None
        return tables.deadlines(table)[0]

    def banks() -> list[Any]:
        records = services.repository.store.read(table_id, START)
        return [r.data["bank"] for r in records if r.type == CLOCK_CHARGED and r.data["seat"] == 0]

    table = services.repository.load(table_id).table
    assert table.changed_at is not None
    assert deadline() == table.changed_at + timedelta(seconds=100)
    now.at = table.changed_at + timedelta(seconds=30)
    move = tables.legal_moves(table, 0)[0]
    services.commands.move(table_id, Caller(0), move, table.version, None)
    assert banks() == [75.0], "100 s, less 30 spent, plus 5"
    drain(services)
    table = services.repository.load(table_id).table
    assert table.changed_at is not None
    assert deadline() == table.changed_at + timedelta(seconds=75)
    now.at = deadline()
    assert services.player.time_out(table_id, table.version, 0) is Outcome.SUBSTITUTED
    assert banks() == [75.0, 5.0], "a timeout spends the whole bank; the increment is added"
    services.commands.leave(table_id, Caller(0))
    drain(services)
    assert services.repository.load(table_id).table.result is not None
    audit = services.queries.audit(table_id)
    assert audit["ok"], audit["problems"]


# -- a table under a rules version no longer decided ------------------------------------------


def released_without_pig10_version_1(any_redis: redis.Redis, now: Now) -> Services:
    """The services of a release that raised Pig 10's rules version to 2 and dropped 1."""
    pig10 = default_registry()["pig10"]
    raised = copy.copy(pig10)
    raised.info = replace(pig10.info, rules_version=2)
    return build(any_redis, FULL_SPEED, clock=now, registry=GameRegistry([Game(raised)]))


def test_a_table_whose_rules_version_was_dropped_is_left_alone_by_bots_clocks_and_sweep(
    any_redis: redis.Redis,
) -> None:
    """A bot's turn queued before the release, and the person's timeout, end stale rather than
    fail (and be queued again by the sweep for ever); the sweep drops the table's mark and
    schedules nothing; its log stays as it was."""
    services, now, table_id, _ = timed_table(any_redis, {"turn_seconds": 30})
    table = services.repository.load(table_id).table
    tables = services.repository.tables
    if tables.to_act(table) == [0]:  # the person first: move so that the bot's turn is queued
        move = tables.legal_moves(table, 0)[0]
        services.commands.move(table_id, Caller(0), move, table.version, None)
        table = services.repository.load(table_id).table
    assert tables.to_act(table) == [1]
    assert bot_queue(any_redis).job_ids == [job_id(table_id, table.version, 1)]
    released = released_without_pig10_version_1(any_redis, now)
    assert not released.repository.tables.decides(table)
    assert released.player.play(table_id, table.version, 1) is Outcome.STALE
    drain(released)
    assert FailedJobRegistry(queue=bot_queue(any_redis)).get_job_ids() == []
    assert released.repository.load(table_id).table.version == table.version, "nothing appended"
    assert any_redis.zscore(WAITING, table_id) is not None, "the bot's turn marked it"
    released.turns.clock = lambda: time.time() + released.turns.claim_ms / 1000 + 1
    assert released.turns.sweep(released.queries) == []
    assert any_redis.zscore(WAITING, table_id) is None, "swept once, then forgotten"
    now.at = datetime.now(UTC) + timedelta(days=2)
    assert released.player.time_out(table_id, table.version, 0) is Outcome.STALE


def test_people_at_a_table_whose_rules_version_was_dropped_get_no_timeouts(
    any_redis: redis.Redis,
) -> None:
    services, now, table_id = half_minute_table(any_redis)
    table = services.repository.load(table_id).table
    assert timeout_job_id(table_id, 0) in scheduled(services)
    released = released_without_pig10_version_1(any_redis, now)
    any_redis.delete(ScheduledJobRegistry(queue=bot_queue(any_redis)).key)  # type: ignore[no-untyped-call]
    any_redis.zadd(WAITING, {table_id: 0})
    assert released.turns.sweep(released.queries) == []
    assert scheduled(released) == {}, "no timeout scheduled"
    assert any_redis.zscore(WAITING, table_id) is None
    assert released.player.time_out(table_id, table.version, 0) is Outcome.STALE
