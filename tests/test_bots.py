"""Bot seats: turns queued as RQ jobs, played from the seat's view only, webhooks with a stand-in.

The worker runs in burst mode (it drains the queue, then returns), so each test sees every job
its commands queued played to the end, on fakeredis and on a real Redis server.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import itertools
import json
import runpy
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from random import Random
from typing import Any, cast

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient
from rq.job import Job
from rq.suspension import is_suspended, resume, suspend
from rq.utils import now as rq_now
from rq.worker import base as rq_worker_base

from bootstrap import EMBEDDED_WORKER, Services, build
from domain.bots import RandomBot, Turn
from domain.catalogue import BotCatalogue, BotInfo, UnknownBot
from domain.rules import JSON, Event
from domain.table import MOVE_SUBSTITUTED, SEAT_TAKEN, Status, Table, Tables
from events.envelope import START
from events.snapshots import kept_key, snapshots_key
from events.store import Mark
from service.config import Config
from service.tables import BotSeat, token_hash
from service.verifier import verify
from service.views import SPECTATOR
from tests.bounds import bounded
from tests.conftest import IN_PROCESS
from workers import worker as worker_module
from workers.player import IN_A_ROW, TURNS_PER_JOB, Outcome
from workers.turns import (
    RESULT_TTL_SECONDS,
    WAITING,
    Scheduled,
    TurnQueue,
    bot_queue,
    claim_key,
    job_id,
)
from workers.webhook import SIGNATURE_HEADER
from workers.worker import SWEEP_SECONDS, BotWorker


@dataclass
class Clock:
    now: float = 1_000_000.0

    def __call__(self) -> float:
        return self.now


FULL_SPEED = Config(bot_delay_seconds=0, reaction_seconds=0)
"""Bots act at once even beside people, so a burst worker plays every turn queued."""


@pytest.fixture
def runtime(any_redis: redis.Redis) -> Services:
    return build(any_redis, replace(FULL_SPEED, webhook_timeout_seconds=0.5))


def drain(runtime: Services) -> None:
    """Run every queued bot job, and the jobs they queue, until the queue is empty."""
    redis_client = runtime.turns.redis
    burst(BurstWorker([bot_queue(redis_client)], connection=redis_client, play=runtime.play))


class BurstWorker(BotWorker):
    """The bot worker as the tests run it, in a burst in their own process: it takes no commands
    (RQ's kill and shutdown) over pub/sub, which a burst has no use for. RQ listens for them in a
    thread of each worker's, and at the end of every burst waits up to a second for it: over the
    hundreds of bursts a test can run, that thread and its wait made up most of the test's time."""

    def subscribe(self) -> None:
        return None


RQ_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals RQ's worker takes for its warm shutdown, in the thread it works in."""


def burst(worker: BurstWorker) -> None:
    """Run `worker` in this thread until its queues are empty. RQ keeps the `RQ_SIGNALS` it
    took: they are given back, or stopping the test process later would raise RQ's
    `StopRequested` in it rather than stop it."""
    handlers = [signal.getsignal(number) for number in RQ_SIGNALS]
    try:
        worker.work(burst=True, with_scheduler=False, logging_level="WARNING")
    finally:
        for number, handler in zip(RQ_SIGNALS, handlers, strict=True):
            signal.signal(number, handler)


def test_a_burst_worker_in_the_test_process_gives_back_the_signals_rq_took(
    runtime: Services,
) -> None:
    before = [signal.getsignal(number) for number in RQ_SIGNALS]
    drain(runtime)
    assert [signal.getsignal(number) for number in RQ_SIGNALS] == before


def seat_human(service: Services, table_id: str) -> str:
    token: str = service.commands.take_seat(table_id, SPECTATOR, None, "Ada", None).shown.body[
        "token"
    ]
    return token


def log_types(service: Services, table_id: str) -> list[str]:
    return [record.type for record in service.repository.store.read(table_id, START)]


# -- queueing -------------------------------------------------------------------------------------


def test_a_bot_to_act_gets_one_job_however_often_it_is_scheduled(runtime: Services) -> None:
    service = runtime
    created = service.commands.create("pig10", 2, {"first_seat": 1}, None, [BotSeat(1, "random")])
    table_id = str(created.body["id"])
    seat_human(service, table_id)  # the last seat deals: the bot in seat 1 is to act
    table = service.repository.load(table_id).table
    assert service.repository.tables.to_act(table) == [1]
    expected = job_id(table_id, table.version, 1)
    assert bot_queue(runtime.turns.redis).job_ids == [expected]
    for _ in range(3):
        assert runtime.turns.schedule(table).jobs == []
        assert runtime.turns.sweep(service.queries) == []
    assert bot_queue(runtime.turns.redis).job_ids == [expected]


def test_tables_without_bots_queue_nothing(runtime: Services) -> None:
    service = runtime
    table_id = str(service.commands.create("pig10", 2, {}, None).body["id"])
    seat_human(service, table_id)
    seat_human(service, table_id)
    assert bot_queue(runtime.turns.redis).count == 0
    table = service.repository.load(table_id).table
    handover = runtime.turns.parked(table)
    assert handover is not None, "a day's deadline waits for the sweep"
    marked = cast(float | None, runtime.turns.redis.zscore(WAITING, table_id))
    assert marked is not None
    # The open table's expiry, a day after its first seat was taken, is a little earlier.
    assert handover - 60_000 < marked <= handover


def test_a_lost_turn_is_queued_again_once_its_claim_runs_out(any_redis: redis.Redis) -> None:
    clock = Clock()
    runtime = build(any_redis, FULL_SPEED)
    runtime.turns.clock = clock
    service = runtime
    created = service.commands.create("pig10", 2, {"first_seat": 1}, None, [BotSeat(1, "random")])
    table_id = str(created.body["id"])
    seat_human(service, table_id)
    version = service.repository.load(table_id).table.version
    queue = bot_queue(any_redis)
    queue.empty()  # type: ignore[no-untyped-call]  # the job is lost, say with the worker that held it
    assert runtime.turns.sweep(service.queries) == [], "not due yet: the claim still holds"
    any_redis.delete(claim_key(table_id, version, 1))  # the claim runs out ...
    clock.now += runtime.turns.claim_ms / 1000 + 1  # ... and the table is due for a look
    assert runtime.turns.sweep(service.queries) == [job_id(table_id, version, 1)]
    drain(runtime)
    assert service.repository.load(table_id).table.version > version, "the bot played its turn"


def commands_after(service: Services, table_id: str, version: int) -> int:
    """How many commands (moves, here) were appended to `table_id` after `version`."""
    records = service.repository.store.read(table_id, START)
    return sum(record.opens_command for record in records if record.seq > version)


def test_a_job_plays_the_bot_turns_due_after_its_own_in_a_row(runtime: Services) -> None:
    """An all-bot table: each job plays up to `TURNS_PER_JOB` turns, then queues the next."""
    service = runtime
    bots = [BotSeat(seat, "random") for seat in range(3)]
    table_id = str(service.commands.create("krumme10", 3, {}, None, bots).body["id"])
    queue = bot_queue(runtime.turns.redis)
    [first] = queue.jobs
    queue.remove(first)  # taken by a worker, which plays it:
    version = first.args[1]
    assert runtime.play.player.play(*first.args) is Outcome.PLAYED
    table = service.repository.load(table_id).table
    assert table.status is Status.RUNNING, "a game of Krumme10 outlasts one job's turns"
    assert commands_after(service, table_id, version) == TURNS_PER_JOB
    [seat] = service.repository.tables.may_act(table)
    assert queue.job_ids == [job_id(table_id, table.version, seat)], "the next turn is queued"


def test_a_job_of_slow_thinkers_stops_its_row_in_time_and_queues_the_next_turn(
    runtime: Services,
) -> None:
    """Each look at the clock finds a second gone, as if every bot thought that long: the job
    stops taking turns once `IN_A_ROW` has passed, well before `TURNS_PER_JOB`, so that its
    timeout never cuts a row short, and queues the next turn for any worker."""
    service = runtime
    bots = [BotSeat(seat, "random") for seat in range(3)]
    table_id = str(service.commands.create("krumme10", 3, {}, None, bots).body["id"])
    queue = bot_queue(runtime.turns.redis)
    [first] = queue.jobs
    queue.remove(first)
    version = first.args[1]
    player = runtime.play.player
    started = player.clock()
    looks = itertools.count(1)
    player.clock = lambda: started + timedelta(seconds=next(looks))
    assert player.play(*first.args) is Outcome.PLAYED
    played = commands_after(service, table_id, version)
    assert 1 < played <= IN_A_ROW.total_seconds() + 1 < TURNS_PER_JOB, played
    table = service.repository.load(table_id).table
    [seat] = service.repository.tables.may_act(table)
    assert queue.job_ids == [job_id(table_id, table.version, seat)], "the next turn is queued"


def test_a_turn_left_to_a_worker_that_died_is_queued_by_the_sweep(any_redis: redis.Redis) -> None:
    """The worker that keeps a turn to play it itself holds its claim, like a queued job."""
    clock = Clock()
    runtime = build(any_redis, FULL_SPEED)
    runtime.turns.clock = clock
    service = runtime
    bots = [BotSeat(seat, "random") for seat in range(2)]
    table_id = str(service.commands.create("pig10", 2, {}, None, bots).body["id"])
    table = service.repository.load(table_id).table
    [seat] = service.repository.tables.may_act(table)
    # As if the first turn had come due after a worker's move rather than at the deal:
    bot_queue(any_redis).empty()  # type: ignore[no-untyped-call]
    any_redis.delete(claim_key(table_id, table.version, seat))
    scheduled = runtime.turns.schedule(table, keep=True)
    assert (scheduled.jobs, scheduled.kept) == ([], seat), "kept, not queued"
    assert any_redis.exists(claim_key(table_id, table.version, seat)), "claimed"
    # The worker dies before it moves: once the claim runs out, the sweep queues the turn.
    assert runtime.turns.sweep(service.queries) == []
    any_redis.delete(claim_key(table_id, table.version, seat))
    clock.now += runtime.turns.claim_ms / 1000 + 1
    assert runtime.turns.sweep(service.queries) == [job_id(table_id, table.version, seat)]


def test_a_turn_paced_for_people_is_queued_even_for_a_worker_that_asks_to_keep_it(
    any_redis: redis.Redis,
) -> None:
    runtime = build(any_redis, replace(FULL_SPEED, bot_delay_seconds=2))
    service = runtime
    created = service.commands.create("pig10", 2, {"first_seat": 1}, None, [BotSeat(1, "random")])
    table_id = str(created.body["id"])
    seat_human(service, table_id)
    table = service.repository.load(table_id).table
    any_redis.delete(claim_key(table_id, table.version, 1))
    scheduled = runtime.turns.schedule(table, keep=True)
    assert scheduled.kept is None
    assert scheduled.jobs[-1] == job_id(table_id, table.version, 1), "scheduled for later"


class GoneAfterAppend:
    """The turn queue of a process whose Redis goes away right after an append."""

    def __init__(self, turns: TurnQueue) -> None:
        self.turns = turns

    def expect(self, table: Table, *, marked: bool = False) -> Mark | None:
        return self.turns.expect(table, marked=marked)

    def schedule(
        self, table: Table, *, keep: bool = False, claimed: Sequence[bool] | None = None
    ) -> Scheduled:
        raise redis.ConnectionError("Redis went away after the append")

    def recheck(self, table: Table) -> None:
        raise redis.ConnectionError("Redis went away")

    def refused(self, table: Table, actual: int) -> None:
        self.turns.refused(table, actual)


def test_a_committed_move_whose_turns_cannot_be_queued_is_answered_and_swept(
    any_redis: redis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    runtime = build(any_redis, FULL_SPEED)
    runtime.turns.clock = clock
    service = runtime
    created = service.commands.create("pig10", 2, {"first_seat": 0}, None, [BotSeat(1, "random")])
    table_id = str(created.body["id"])
    token = seat_human(service, table_id)
    drain(runtime)
    any_redis.delete(WAITING)  # the human is to act: no bot turn is outstanding
    caller = service.queries.caller(table_id, token)
    moves = service.queries.legal_moves(table_id, caller).body
    service.commands.turns = GoneAfterAppend(runtime.turns)
    answer = service.commands.move(table_id, caller, moves["moves"][0], moves["version"], None)
    assert not answer.replayed, "the move is answered as made, not as a failure"
    version = answer.shown.body["version"]
    assert service.repository.load(table_id).table.version == version
    assert f"table {table_id} is stored at version {version}" in caplog.text
    assert bot_queue(any_redis).count == 0, "no job was queued"
    claim = claim_key(table_id, version, 1)
    assert any_redis.exists(claim), "the append claimed the turn, as a queued job holds it"
    assert runtime.turns.sweep(service.queries) == [], "not due before a claim's time"
    any_redis.delete(claim)  # the claim runs out ...
    clock.now += runtime.turns.claim_ms / 1000 + 1  # ... and the table is due for a look
    assert runtime.turns.sweep(service.queries) == [job_id(table_id, version, 1)]
    drain(runtime)
    assert service.repository.load(table_id).table.version > version, "the bot played its turn"


def test_on_the_games_own_redis_the_append_writes_the_sweeps_mark(runtime: Services) -> None:
    """One round trip for both: `expect` leaves the mark to the append, which writes it only
    if it lands (the sweep test above shows the mark found after an append)."""
    bots = [BotSeat(seat, "random") for seat in range(2)]
    table_id = str(runtime.commands.create("pig10", 2, {}, None, bots).body["id"])
    table = runtime.repository.load(table_id).table
    runtime.turns.redis.delete(WAITING)
    mark = runtime.turns.expect(table)
    assert mark is not None
    assert (mark.key, mark.member) == (WAITING, table_id)
    assert runtime.turns.redis.zscore(WAITING, table_id) is None, "nothing written before it"
    apart = TurnQueue(
        runtime.turns.redis, runtime.turns.queue, runtime.repository.tables, job_timeout_seconds=5
    )
    assert apart.expect(table) is None, "on a queue Redis of its own, it marks the table itself"
    assert runtime.turns.redis.zscore(WAITING, table_id) is not None


def test_on_the_games_own_redis_the_append_claims_the_bots_turns(runtime: Services) -> None:
    """The claims ride in the append too: a move that leaves bots to act needs no round trip
    of its own to claim their turns, only the one that queues them (or none, for the turn a
    worker keeps)."""
    redis_client = runtime.turns.redis
    bots = [BotSeat(seat, "random") for seat in range(2)]
    table_id = str(runtime.commands.create("pig10", 2, {}, None, bots).body["id"])
    table = runtime.repository.load(table_id).table
    [seat] = runtime.repository.tables.may_act(table)
    claim = claim_key(table_id, table.version, seat)
    assert redis_client.exists(claim), "the append that dealt claimed the first turn"
    mark = runtime.turns.expect(table)
    assert mark is not None
    assert (mark.claims, mark.replace) == ((claim,), True)
    assert mark.claim_ms == runtime.turns.claim_ms, "no bot delay at this table"
    bot_queue(redis_client).empty()  # type: ignore[no-untyped-call]
    redis_client.delete(claim)
    scheduled = runtime.turns.schedule(table, claimed=(True,))
    assert scheduled.jobs == [job_id(table_id, table.version, seat)]
    assert not redis_client.exists(claim), "it took the append's word for the claim"
    assert runtime.turns.schedule(table, claimed=(False,)).jobs == [], "its winner queued it"
    kept = runtime.turns.schedule(table, keep=True, claimed=(True,))
    assert (kept.jobs, kept.kept) == ([], seat)


# -- playing a turn -------------------------------------------------------------------------------


def test_an_all_bot_game_plays_itself_to_the_end(runtime: Services) -> None:
    service = runtime
    bots = [BotSeat(seat, "random") for seat in range(4)]
    table_id = str(service.commands.create("pig10", 4, {}, "bots only", bots).body["id"])
    drain(runtime)
    table = service.repository.load(table_id).table
    assert table.result is not None
    audit = service.queries.audit(table_id)
    assert audit["ok"], audit["problems"]
    assert runtime.turns.redis.zcard(WAITING) == 0


def test_a_job_for_a_version_that_has_passed_does_nothing(runtime: Services) -> None:
    service = runtime
    created = service.commands.create("pig10", 2, {"first_seat": 1}, None, [BotSeat(1, "random")])
    table_id = str(created.body["id"])
    seat_human(service, table_id)
    version = service.repository.load(table_id).table.version
    assert runtime.player.play(table_id, version, 1) is Outcome.PLAYED
    after = service.repository.load(table_id).table.version
    assert runtime.player.play(table_id, version, 1) is Outcome.STALE
    assert runtime.player.play(table_id, after, 0) is Outcome.STALE, "seat 0 is a human"
    assert service.repository.load(table_id).table.version == after


@dataclass
class RecordingBot:
    """A bot that remembers every turn it was given, and plays the first legal move."""

    shown: list[Turn] = field(default_factory=list)

    def choose(self, turn: Turn, rng: Random) -> JSON:
        self.shown.append(turn)
        return turn.moves[0]


def test_a_bot_is_shown_its_seats_view_and_legal_moves_only(runtime: Services) -> None:
    recording = RecordingBot()
    everyone = ("pig10",)
    catalogue = BotCatalogue(
        [
            (BotInfo("recording", "remembers its turns", everyone), {None: recording}),
            (BotInfo("random", "random", everyone), {None: RandomBot()}),
        ]
    )
    service = runtime
    runtime.player.bots = service.commands.bots = catalogue
    bots = [BotSeat(0, "recording"), BotSeat(1, "random"), BotSeat(2, "random")]
    table_id = str(service.commands.create("pig10", 3, {}, None, bots).body["id"])
    drain(runtime)
    records = service.repository.store.read(table_id, START)
    tables: Tables = service.repository.tables
    # The table as it stood after each command: a bot is asked only between commands.
    ends = [n for n in range(1, len(records)) if records[n].meta != records[n - 1].meta]
    pasts = [tables.fold([r.event for r in records[:version]]) for version in ends]
    seat_turns = [past for past in pasts if past and 0 in tables.to_act(past)]
    assert len(recording.shown) == len(seat_turns) > 0, "the recording bot had every turn"
    for turn, past in zip(recording.shown, seat_turns, strict=True):
        assert (turn.seat, turn.players, turn.options) == (0, 3, past.options)
        assert turn.view == tables.rules(past).view(past.state, 0)
        assert turn.moves == tables.legal_moves(past, 0)
        assert "hands" not in json.dumps(turn.view), "no other seat's hand"


# -- webhooks -------------------------------------------------------------------------------------


@dataclass
class WebhookBot:
    """A real HTTP server standing in for an external bot; `behave` picks its answer."""

    behave: str = "first"
    received: list[tuple[dict[str, Any], str | None, bytes]] = field(default_factory=list)
    redirect_to: str = "/turn"
    """Where "redirect" sends the call: a good answer, had it been followed."""

    def answer(self, turn: dict[str, Any]) -> tuple[int, bytes]:
        moves = turn["legal_moves"]
        if self.behave == "sleep":
            time.sleep(1.5)
        if self.behave == "error":
            return 500, b"{}"
        if self.behave == "redirect":
            return 307, b"{}"
        if self.behave == "garbage":
            return 200, b"not json"
        if self.behave == "illegal":
            return 200, json.dumps({"move": {"card": 99, "mode": "add"}}).encode()
        return 200, json.dumps({"move": moves[-1]}).encode()


@contextlib.contextmanager
def serving(bot: WebhookBot) -> Iterator[str]:
    """`bot` answering on a loopback port; yields its URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            turn = json.loads(body)
            bot.received.append((turn, self.headers.get(SIGNATURE_HEADER), body))
            status, answer = bot.answer(turn)
            try:
                self.send_response(status)
                if 300 <= status < 400:
                    self.send_header("Location", bot.redirect_to)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                if bot.behave == "trickle":
                    for byte in answer:  # a byte a second: each read is quick, the answer is not
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(1)
                self.wfile.write(answer)
            except OSError:
                pass  # the caller gave up waiting

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/turn"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def webhook_bot() -> Iterator[tuple[WebhookBot, str]]:
    bot = WebhookBot()
    with serving(bot) as url:
        yield bot, url


def webhook_table(runtime: Services, url: str) -> tuple[str, str]:
    """A two-seat table: a human in seat 0, the webhook in seat 1, which moves first."""
    service = runtime
    table_id = str(service.commands.create("pig10", 2, {"first_seat": 1}, None).body["id"])
    token = str(
        service.commands.take_seat(table_id, SPECTATOR, 1, None, None, webhook=url).shown.body[
            "token"
        ]
    )
    seat_human(service, table_id)
    return table_id, token


def test_a_webhook_plays_its_seat_and_can_verify_the_request(
    runtime: Services, webhook_bot: tuple[WebhookBot, str]
) -> None:
    bot, url = webhook_bot
    table_id, token = webhook_table(runtime, url)
    drain(runtime)
    [(turn, signature, body)] = bot.received
    service = runtime
    assert (turn["table"], turn["seat"]) == (table_id, 1)
    played = service.repository.store.read(table_id, START)[turn["version"]]
    assert played.type == "pig10.CardPlayed"
    assert played.seq == turn["version"] + 1, "the move was decided on the version it was asked"
    assert {"card": played.data["card"], "mode": played.data["mode"]} == turn["legal_moves"][-1]
    assert turn["view"]["you"] == 1
    assert "hand" in turn["view"]["state"]
    assert set(turn) == {"table", "game", "seat", "version", "deadline", "view", "legal_moves"}
    key = hashlib.sha256(token.encode()).hexdigest().encode()
    assert signature == "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()
    assert MOVE_SUBSTITUTED not in log_types(service, table_id)


@pytest.mark.parametrize(
    ("behave", "reason"),
    [
        ("sleep", "unanswered"),
        ("error", "unanswered"),
        ("garbage", "unanswered"),
        ("redirect", "unanswered"),
        ("illegal", "illegal"),
    ],
)
def test_a_webhook_that_fails_is_replaced_for_the_turn_and_the_log_says_so(
    runtime: Services, webhook_bot: tuple[WebhookBot, str], behave: str, reason: str
) -> None:
    bot, url = webhook_bot
    bot.behave = behave
    table_id, _ = webhook_table(runtime, url)
    before = runtime.repository.load(table_id).table.version
    drain(runtime)
    records = runtime.repository.store.read(table_id, START)[before:]
    assert [r.type for r in records][:2] == [MOVE_SUBSTITUTED, "pig10.CardPlayed"]
    assert records[0].data == {"seat": 1, "reason": reason}
    table = runtime.repository.load(table_id).table
    assert runtime.repository.tables.to_act(table) == [0], "the game went on to the human"


def test_a_webhook_trickling_its_answer_gets_a_stand_in_at_its_deadline(
    runtime: Services, webhook_bot: tuple[WebhookBot, str]
) -> None:
    bot, url = webhook_bot
    bot.behave = "trickle"
    table_id, _ = webhook_table(runtime, url)
    started = time.monotonic()
    drain(runtime)
    took = time.monotonic() - started
    substituted = [
        r for r in runtime.repository.store.read(table_id, START) if r.type == MOVE_SUBSTITUTED
    ]
    assert [r.data["reason"] for r in substituted] == ["unanswered"]
    # The answer takes some 30 s to trickle in; the call ends at its deadline (0.5 s) instead.
    assert took < 10, f"the stand-in came after {took:.1f} s"


def test_a_slow_webhook_holds_up_no_other_table(
    any_redis: redis.Redis, webhook_bot: tuple[WebhookBot, str]
) -> None:
    bot, url = webhook_bot
    bot.behave = "trickle"
    with ThreadPoolExecutor(2) as calls:
        # Long enough for the all-bot game to end meanwhile on a slow machine.
        runtime = build(
            any_redis, replace(FULL_SPEED, webhook_timeout_seconds=5), webhook_calls=calls
        )
        hooked, _ = webhook_table(runtime, url)
        asked = runtime.repository.load(hooked).table.version
        bots = [BotSeat(0, "random"), BotSeat(1, "random")]
        all_bots = str(runtime.commands.create("pig10", 2, {}, None, bots).body["id"])
        drain(runtime)
        assert runtime.repository.load(all_bots).table.result is not None
        assert runtime.repository.load(hooked).table.version == asked, "still asking the webhook"
        calls.shutdown(wait=True)
    first = runtime.repository.store.read(hooked, START)[asked]
    assert (first.type, first.data["reason"]) == (MOVE_SUBSTITUTED, "unanswered"), "a stand-in"


def test_a_webhook_that_cannot_be_reached_is_replaced(runtime: Services) -> None:
    with ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler) as closed:
        url = f"http://127.0.0.1:{closed.server_address[1]}/"
    table_id, _ = webhook_table(runtime, url)
    drain(runtime)
    substituted = [
        r for r in runtime.repository.store.read(table_id, START) if r.type == MOVE_SUBSTITUTED
    ]
    assert [r.data["reason"] for r in substituted] == ["unanswered"]


def test_a_finished_games_export_commits_to_tokens_and_webhooks_without_showing_them(
    runtime: Services, webhook_bot: tuple[WebhookBot, str]
) -> None:
    """The bundle is public, and the webhook's signing key is its seat's token hash: neither
    that nor a webhook URL is in it, yet it verifies; the service still reads both."""
    bot, url = webhook_bot
    secret_url = url + "?key=never-shown"
    service = runtime
    table_id = str(service.commands.create("pig10", 2, {"first_seat": 1}, None).body["id"])
    taken = service.commands.take_seat(table_id, SPECTATOR, 1, None, None, webhook=secret_url)
    person = seat_human(service, table_id)
    service.commands.leave(table_id, service.queries.caller(table_id, person))
    drain(runtime)
    assert service.repository.load(table_id).table.status is Status.FINISHED
    assert bot.received, "the service called the webhook at its URL"
    bundle = service.queries.export(table_id)
    text = json.dumps(bundle)
    for secret in (secret_url, token_hash(person), token_hash(str(taken.shown.body["token"]))):
        assert secret not in text
    report = verify(bundle)
    assert report.ok, report.text()
    seats = [r.event.data for r in service.repository.store.read(table_id) if r.type == SEAT_TAKEN]
    assert [seat["webhook"] for seat in seats] == [secret_url, None]
    assert seats[1]["token_sha256"] == token_hash(person)


# -- over HTTP ------------------------------------------------------------------------------------


def test_bot_seats_over_http(client: FlaskClient) -> None:
    created = client.post(
        "/v1/tables", json={"game": "pig10", "seats": 3, "bots": [{"seat": 2, "bot": "random"}]}
    )
    assert created.status_code == 201
    table = created.get_json()
    assert [seat["bot"] for seat in table["seats"]] == [None, None, "random"]
    assert table["seats"][2]["name"] == "random bot"
    url = f"/v1/tables/{table['id']}/seats"
    webhook = "http://bots.example/spieltisch?secret=s3cret"
    taken = client.post(url, json={"seat": 1, "webhook": webhook, "name": "Hook"}).get_json()
    assert taken["token"]
    assert taken["table"]["seats"][1]["bot"] == "webhook"
    human = client.post(url, json={"name": "Ada"}).get_json()
    assert human["table"]["status"] == "running"
    for token in (None, human["token"]):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        log = client.get(f"/v1/tables/{table['id']}/events", headers=headers).get_json()
        assert "s3cret" not in json.dumps(log), "a webhook URL is never shown"
        assert "token_sha256" not in json.dumps(log)
        seats = [e["data"] for e in log["events"] if e["type"] == SEAT_TAKEN]
        assert [s["bot"] for s in seats] == ["random", None, None]


def test_the_catalogue_lists_every_bot_with_its_games_and_levels(client: FlaskClient) -> None:
    games = [game["id"] for game in client.get("/v1/games").get_json()]
    bots = {bot["name"]: bot for bot in client.get("/v1/bots").get_json()}
    assert set(bots) == {"random", "heuristic", "search"}
    for bot in bots.values():
        assert bot["games"] == games, f"{bot['name']} plays every game"
    assert bots["search"]["levels"] == ["easy", "medium", "hard"]
    assert bots["search"]["default_level"] == "medium"
    assert (bots["random"]["levels"], bots["random"]["default_level"]) == ([], None)


def test_a_bot_plays_at_the_level_asked_for_or_its_default(client: FlaskClient) -> None:
    bots = [{"seat": 1, "bot": "search", "level": "easy"}, {"seat": 2, "bot": "search"}]
    table = client.post("/v1/tables", json={"game": "pig10", "seats": 4, "bots": bots}).get_json()
    url = f"/v1/tables/{table['id']}/seats"
    client.post(url, json={"seat": 3, "bot": "heuristic"})
    taken = client.post(url, json={"seat": 0, "name": "Ada"}).get_json()
    seats = [(seat["bot"], seat["level"]) for seat in taken["table"]["seats"]]
    assert seats == [(None, None), ("search", "easy"), ("search", "medium"), ("heuristic", None)]
    log = client.get(f"/v1/tables/{table['id']}/events").get_json()["events"]
    recorded = [(e["data"]["bot"], e["data"]["level"]) for e in log if e["type"] == SEAT_TAKEN]
    assert sorted(recorded, key=str) == sorted(seats, key=str)


def test_a_bot_that_does_not_play_the_game_is_refused(runtime: Services) -> None:
    service = runtime
    service.commands.bots = BotCatalogue(
        [(BotInfo("pig", "only pig10", ("pig10",)), {None: RandomBot()})]
    )
    with pytest.raises(UnknownBot, match="does not play wobble"):
        service.commands.create("wobble", 2, {}, None, [BotSeat(0, "pig")])


@pytest.mark.parametrize(
    ("body", "status", "problem"),
    [
        ({"bot": "grandmaster"}, 422, "unknown-bot"),
        ({"bot": "search", "level": "grandmaster"}, 422, "unknown-bot"),
        ({"bot": "random", "level": "hard"}, 422, "unknown-bot"),
        ({"name": "Ada", "level": "hard"}, 422, "invalid-body"),
        ({"bot": "random", "webhook": "http://bots.example/"}, 422, "invalid-body"),
        ({"webhook": "ftp://bots.example/"}, 422, "invalid-body"),
        ({"webhook": "not a url"}, 422, "invalid-body"),
        ({}, 422, "invalid-body"),
    ],
)
def test_bad_seat_requests_write_nothing(
    client: FlaskClient, body: dict[str, Any], status: int, problem: str
) -> None:
    table_id = client.post("/v1/tables", json={"game": "pig10", "seats": 2}).get_json()["id"]
    answer = client.post(f"/v1/tables/{table_id}/seats", json=body)
    assert (answer.status_code, answer.get_json()["type"]) == (status, f"/problems/{problem}")
    assert client.get(f"/v1/tables/{table_id}").get_json()["version"] == 1


@pytest.mark.parametrize(
    ("bots", "problem"),
    [
        ([{"seat": 0, "bot": "grandmaster"}], "unknown-bot"),
        ([{"seat": 0, "bot": "search", "level": "expert"}], "unknown-bot"),
        ([{"seat": 0, "bot": "search", "level": 3}], "invalid-body"),
        ([{"seat": 0, "bot": "random"}, {"seat": 0, "bot": "random"}], "invalid-body"),
        ([{"seat": 2, "bot": "random"}], "invalid-body"),
        ([{"seat": 0}], "invalid-body"),
    ],
)
def test_bad_bots_at_creation_create_nothing(
    client: FlaskClient, fake_redis: redis.Redis, bots: list[Any], problem: str
) -> None:
    answer = client.post("/v1/tables", json={"game": "pig10", "seats": 2, "bots": bots})
    assert (answer.status_code, answer.get_json()["type"]) == (422, f"/problems/{problem}")
    assert fake_redis.keys("game:*") == []


EMBEDDED_THREADS = ("spieltisch-bots", "spieltisch-scheduler")


def test_an_embedded_worker_and_its_scheduler_stop_when_asked(
    embedded: Callable[[Config], Flask],
) -> None:
    worker = embedded(IN_PROCESS).extensions[EMBEDDED_WORKER]
    before = set(threading.enumerate())
    worker.start()
    started = [t for t in set(threading.enumerate()) - before if t.name in EMBEDDED_THREADS]
    assert sorted(t.name for t in started) == sorted(EMBEDDED_THREADS)
    assert worker.stop()
    assert not any(thread.is_alive() for thread in started)


def test_embedded_mode_plays_bots_in_a_thread_of_its_own(
    embedded: Callable[[Config], Flask],
) -> None:
    """No Redis at all: the one process runs the bot jobs, so a bots-only game finishes."""
    client = embedded(IN_PROCESS).test_client()
    bots = [{"seat": seat, "bot": "random"} for seat in range(3)]
    table = client.post("/v1/tables", json={"game": "pig10", "seats": 3, "bots": bots}).get_json()
    deadline = time.monotonic() + 60
    for _ in bounded("the game did not end"):
        if (view := client.get(f"/v1/tables/{table['id']}").get_json())["status"] == "finished":
            break
        assert time.monotonic() < deadline, f"the bots stopped at version {view['version']}"
        time.sleep(0.02)
    assert client.get(f"/v1/tables/{table['id']}/audit").get_json()["ok"]


# -- the log of older versions --------------------------------------------------------------------


def test_a_seat_taken_before_bots_existed_reads_as_a_human_seat(runtime: Services) -> None:
    """SeatTaken v1 (no `bot`, no `webhook`) is stored as it was and upcast on read."""
    service = runtime
    table_id = str(service.commands.create("pig10", 3, {}, None).body["id"])
    seat_human(service, table_id)
    loaded = service.repository.load(table_id)
    v1 = Event(SEAT_TAKEN, {"seat": 1, "name": "Old", "token_sha256": "ab" * 32, "entropy": None})
    meta = {
        "command_id": "old-seat",
        "command": {
            "type": "TakeSeat",
            "args": {"seat": 1, "name": "Old", "token_sha256": "ab" * 32, "entropy": None},
        },
        "seat": None,
        "time": "2020-01-01T00:00:00+00:00",
    }
    service.repository.store.append(table_id, loaded.position, [v1], meta)
    stored = service.repository.store.read(table_id, START, upcast=False)[-1]
    assert (stored.v, "bot" in stored.data) == (1, False)
    fresh = build(runtime.turns.redis, Config())
    table = fresh.repository.load(table_id).table
    assert table.seats[1] is not None
    assert (table.seats[1].name, table.seats[1].player) == ("Old", None)
    assert fresh.repository.store.read(table_id, START)[-1].data["bot"] is None


def test_a_bot_seat_taken_before_levels_existed_plays_at_no_level(runtime: Services) -> None:
    """SeatTaken v2 (a bot, no `level`) reads as v3 with `level: null`; its bot still plays."""
    service = runtime
    table_id = str(service.commands.create("pig10", 3, {}, None).body["id"])
    seat_human(service, table_id)
    data = {"seat": 1, "name": "Old bot", "token_sha256": None, "entropy": None}
    v2 = Event(SEAT_TAKEN, {**data, "bot": "random", "webhook": None}, v=2)
    meta = {
        "command_id": "old-bot-seat",
        "command": {"type": "TakeSeat", "args": {**data, "bot": "random"}},
        "seat": None,
        "time": "2020-01-01T00:00:00+00:00",
    }
    loaded = service.repository.load(table_id)
    service.repository.store.append(table_id, loaded.position, [v2], meta)
    fresh = build(runtime.turns.redis, Config())
    upcast = fresh.repository.store.read(table_id, START)[-1]
    assert (upcast.v, upcast.data["level"], upcast.data["bot"]) == (3, None, "random")
    seat = fresh.repository.load(table_id).table.seats[1]
    assert seat is not None
    assert (seat.bot, seat.level) == ("random", None)


def test_the_worker_sweeps_every_few_seconds_whatever_rq_worker_passes(runtime: Services) -> None:
    """`rq worker` passes its own defaults (a 420 s TTL, maintenance every 600 s): lost turns
    would wait ten minutes. The bot worker caps both."""
    redis_client = runtime.turns.redis
    queues = [bot_queue(redis_client)]
    given = {"worker_ttl": 420, "maintenance_interval": 600}
    worker = BotWorker(queues, connection=redis_client, play=runtime.play, **given)
    assert (worker.worker_ttl, worker.maintenance_interval) == (20, SWEEP_SECONDS)
    assert worker.dequeue_timeout == SWEEP_SECONDS, "it wakes for its housekeeping in time"
    quicker = BotWorker(queues, connection=redis_client, play=runtime.play, maintenance_interval=1)
    assert quicker.maintenance_interval == 1


def test_reads_never_write(runtime: Services) -> None:
    """A read queues no turn and touches no key but the caches of answers it derives from the
    log (snapshots, kept score timelines): lost turns are the sweep's to find."""
    service = runtime
    created = service.commands.create("pig10", 2, {"first_seat": 1}, None, [BotSeat(1, "random")])
    table_id = str(created.body["id"])
    seat_human(service, table_id)
    redis_client = runtime.turns.redis
    bot_queue(redis_client).empty()  # type: ignore[no-untyped-call]
    redis_client.delete(claim_key(table_id, service.repository.load(table_id).table.version, 1))
    keys = sorted(cast(list[bytes], redis_client.keys()))
    stream = redis_client.xlen(f"game:{{{table_id}}}:events")
    queries = service.queries
    queries.view(table_id, SPECTATOR)
    queries.seats(table_id)
    queries.events(table_id, SPECTATOR, 0)
    queries.score_timeline(table_id)
    queries.list_tables(None, None, 5)
    caches = (snapshots_key(table_id).encode(), kept_key(table_id, "scores").encode())
    assert sorted(key for key in redis_client.scan_iter() if key not in caches) == keys
    assert redis_client.xlen(f"game:{{{table_id}}}:events") == stream
    assert bot_queue(redis_client).count == 0


# -- what a bot turn costs in Redis ----------------------------------------------------------------


def test_a_turns_job_expires_soon_after_and_its_failure_after_a_day(runtime: Services) -> None:
    """A finished turn leaves its job only for seconds; a failed one is kept a day to look at."""
    service = runtime
    created = service.commands.create("pig10", 2, {"first_seat": 1}, None, [BotSeat(1, "random")])
    table_id = str(created.body["id"])
    seat_human(service, table_id)
    version = service.repository.load(table_id).version
    job = bot_queue(runtime.turns.redis).fetch_job(job_id(table_id, version, 1))
    assert job is not None
    assert (job.result_ttl, job.failure_ttl, job.timeout) == (
        RESULT_TTL_SECONDS,
        24 * 3600,
        runtime.turns.job_timeout,
    )
    drain(runtime)
    assert 0 < cast(int, runtime.turns.redis.ttl(job.key)) <= RESULT_TTL_SECONDS, (
        "the job expires soon"
    )
    assert service.repository.load(table_id).version > version, "the bot moved"


def test_a_worker_sends_its_heartbeat_and_idle_state_once_over_many_jobs(
    runtime: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With its clock stopped, a worker playing a whole all-bot game sends a standalone
    heartbeat once, not before every job, writes 'idle' once after each job, not twice, and
    no job's heartbeat after it ran (what RQ sends in its own pipelines is left as it is)."""
    stopped = rq_now()
    monkeypatch.setattr(worker_module, "now", lambda: stopped)
    bots = [BotSeat(0, "random"), BotSeat(1, "random")]
    table_id = str(runtime.commands.create("pig10", 2, {}, None, bots).body["id"])
    redis_client = runtime.turns.redis
    worker = BurstWorker([bot_queue(redis_client)], connection=redis_client, play=runtime.play)
    writes: list[str] = []
    original = type(redis_client).hset

    def noted(self: redis.Redis, name: str, key: str | None = None, *args: Any, **kw: Any) -> Any:
        standalone = not isinstance(self, redis.client.Pipeline)
        if standalone and name == worker.key and key in ("last_heartbeat", "state"):
            writes.append(key)
        if standalone and name.startswith(Job.redis_job_namespace_prefix):
            writes.append(f"job {key}")
        return original(self, name, key, *args, **kw)

    monkeypatch.setattr(type(redis_client), "hset", noted)
    burst(worker)
    table = runtime.repository.load(table_id).table
    assert table.result is not None, "the bots played the game to its end"
    turns = sum(1 for r in runtime.repository.store.read(table_id) if r.type == "pig10.CardPlayed")
    assert turns > 10
    assert writes.count("last_heartbeat") <= 1, writes
    assert writes.count("state") <= turns + 4, "one idle a job, and a few at start and end"
    assert not [write for write in writes if write.startswith("job ")], writes


def test_a_suspended_worker_plays_no_turn_and_asks_about_it_once_a_second(
    runtime: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`rq suspend` keeps a worker from the bots' turns; resumed, it plays them, asking Redis
    whether it is suspended once while its clock stands still, not before every job."""
    bots = [BotSeat(0, "random"), BotSeat(1, "random")]
    table_id = str(runtime.commands.create("pig10", 2, {}, None, bots).body["id"])
    redis_client = runtime.turns.redis
    version = runtime.repository.load(table_id).version
    suspend(redis_client)
    drain(runtime)
    assert runtime.repository.load(table_id).version == version, "suspended: no bot moved"
    assert bot_queue(redis_client).count == 1, "the turn is still queued"

    resume(redis_client)
    stopped = rq_now()
    monkeypatch.setattr(worker_module, "now", lambda: stopped)
    asked: list[bool] = []

    def counted(connection: redis.Redis, worker: Any = None) -> bool:
        answer = bool(is_suspended(connection, worker))
        # Only this test's worker: an embedded service's worker thread, left running by an
        # earlier test of this process, asks on its own connection (it once did, mid-drain).
        if connection is redis_client:
            asked.append(answer)
        return answer

    monkeypatch.setattr(rq_worker_base, "is_suspended", counted)
    drain(runtime)
    assert runtime.repository.load(table_id).table.result is not None, "resumed, bots played on"
    assert asked == [False], asked


def test_a_bots_queued_turn_marks_its_table_only_along_with_its_append(
    runtime: Services,
) -> None:
    """The schedule that queued the turn marked the table waiting: the bot's move writes no
    mark of its own round trip; on the games' own Redis its append carries the new one."""
    bots = [BotSeat(0, "random"), BotSeat(1, "random")]
    table_id = str(runtime.commands.create("pig10", 2, {}, None, bots).body["id"])
    redis_client = runtime.turns.redis
    loaded = runtime.repository.load(table_id)
    (seat,) = runtime.repository.tables.to_act(loaded.table)
    asked: list[bool] = []
    expect = runtime.turns.expect

    def spy(table: Table, *, marked: bool = False) -> Mark | None:
        asked.append(marked)
        return expect(table, marked=marked)

    runtime.turns.expect = spy  # type: ignore[method-assign]
    assert runtime.player.play(table_id, loaded.version, seat) is Outcome.PLAYED
    assert asked, "its moves asked for a mark"
    assert all(asked), "every move of the job knew its table marked"
    assert redis_client.zscore(WAITING, table_id) is not None
    after = runtime.repository.load(table_id).table
    apart = TurnQueue(
        redis_client, runtime.turns.queue, runtime.repository.tables, job_timeout_seconds=5
    )
    redis_client.delete(WAITING)
    assert apart.expect(after, marked=True) is None
    assert redis_client.zscore(WAITING, table_id) is None, "apart from the games, no mark"


def test_the_webhook_example_refuses_any_signature_but_the_seats() -> None:
    """`examples/webhook_bot.py`'s check: the server's signature holds; a wrong one, none, or
    one with characters beyond ASCII (which `hmac.compare_digest` raises on as text) does not."""
    example = Path(__file__).resolve().parents[1] / "examples" / "webhook_bot.py"
    signature_ok = runpy.run_path(str(example))["signature_ok"]  # a script, not a module
    key = hashlib.sha256(b"the-token").hexdigest().encode()
    signed = "sha256=" + hmac.new(key, b"{}", hashlib.sha256).hexdigest()
    assert signature_ok("the-token", b"{}", signed)
    for header in (None, signed.replace("sha256=", "sha256=0"), "sha256=\u00e9", signed + "\u00e9"):
        assert not signature_ok("the-token", b"{}", header)
