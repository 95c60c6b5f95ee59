"""Optimistic appends against a real Redis: a write at the version a process has cached appends
on that head without reading the stream first; the append script checks the head, and only a
refused append makes the process read the stream and decide again. No phantom version is ever
answered (tests/test_lost_writes.py meets lost tails on this path too)."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from bootstrap import Services, build, web_app
from events.store import stream_key
from service.config import Config
from service.tables import BotSeat
from tests.conftest import IN_PROCESS
from tests.test_api import Game, new_game
from workers.player import Outcome

pytestmark = pytest.mark.redis


class Counting(redis.Redis):
    """A client on the same connections that notes the name of every command it sends."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sent: list[str] = []

    def execute_command(self, *args: Any, **options: Any) -> Any:
        self.sent.append(str(args[0]).upper())
        return super().execute_command(*args, **options)  # type: ignore[no-untyped-call]


def next_move(game: Game) -> tuple[int, Any, int]:
    """The seat to act, its first legal move and the version it was listed at."""
    seat = game.get("")["to_act"][0]
    legal = game.get("/moves", seat)
    return seat, legal["moves"][0], legal["version"]


def test_a_move_on_the_cached_head_is_appended_without_reading_the_stream(
    real_redis: redis.Redis,
) -> None:
    counting = Counting(connection_pool=real_redis.connection_pool)
    game = new_game(web_app(IN_PROCESS, redis_client=counting).test_client(), 2, first_seat=0)
    seat, move, version = next_move(game)
    counting.sent.clear()
    status, answer, _ = game.post_move(seat, move, version)
    assert status == 200, answer
    assert "EVALSHA" in counting.sent
    assert "XRANGE" not in counting.sent, counting.sent
    assert real_redis.xlen(stream_key(game.id)) == answer["version"]


def test_a_cached_head_another_process_moved_past_is_read_again_and_answered_stale(
    real_redis: redis.Redis,
) -> None:
    counting = Counting(connection_pool=real_redis.connection_pool)
    one = new_game(web_app(IN_PROCESS, redis_client=counting).test_client(), 2, first_seat=0)
    two = Game(web_app(IN_PROCESS, redis_client=real_redis).test_client(), one.id, one.tokens)
    seat, move, version = next_move(one)
    assert two.get("")["version"] == version, "both processes have the table cached"
    status, moved, _ = two.post_move(seat, move, version)
    assert status == 200, moved

    counting.sent.clear()
    status, stale, _ = one.post_move(seat, move, version)
    assert (status, stale["type"], stale["current_version"]) == (
        409,
        "/problems/stale-version",
        moved["version"],
    )
    assert counting.sent.count("EVALSHA") == 1, "refused on the cached head"
    assert "XRANGE" in counting.sent, "then the stream was read"
    assert real_redis.xlen(stream_key(one.id)) == moved["version"], "nothing more was written"
    assert one.get("") == two.get(""), "the process shows the stream's table"
    seat, move, version = next_move(one)
    status, answer, _ = one.post_move(seat, move, version)
    assert status == 200, answer


def test_a_repeated_key_raced_past_on_the_cached_head_is_answered_with_its_replay(
    real_redis: redis.Redis,
) -> None:
    """Two processes got the same key for one move: the second appends on its cached head,
    the script finds the receipt, and the answer is the first one's, not a conflict."""
    one = new_game(web_app(IN_PROCESS, redis_client=real_redis).test_client(), 2, first_seat=0)
    two = Game(web_app(IN_PROCESS, redis_client=real_redis).test_client(), one.id, one.tokens)
    seat, move, version = next_move(one)
    assert two.get("")["version"] == version
    status, first, _ = one.post_move(seat, move, version, key="k-1")
    assert status == 200, first
    status, again, headers = two.post_move(seat, move, version, key="k-1")
    assert (status, headers.get("Idempotent-Replayed")) == (200, "true"), again
    assert again["version"] == first["version"]
    assert real_redis.xlen(stream_key(one.id)) == first["version"]


def test_a_bot_turn_on_a_cached_head_another_process_moved_past_is_stale(
    real_redis: redis.Redis,
) -> None:
    worker: Services = build(real_redis, Config())
    web: Services = build(real_redis, Config())
    bots = [BotSeat(0, "random"), BotSeat(1, "random")]
    table_id = str(web.commands.create("pig10", 2, {"first_seat": 0}, None, bots).body["id"])
    loaded = worker.repository.load(table_id)
    assert web.repository.tables.to_act(loaded.table) == [0]
    move = web.repository.tables.legal_moves(loaded.table, 0)[0]
    assert web.commands.play_for(web.repository.load(table_id), 0, move)
    moved = web.repository.cached(table_id)
    assert moved is not None
    assert moved.version > loaded.version
    assert worker.player.play(table_id, loaded.version, 0) is Outcome.STALE
    assert real_redis.xlen(stream_key(table_id)) == moved.version, "the bot wrote nothing"
    assert worker.repository.load(table_id).position == moved.position
