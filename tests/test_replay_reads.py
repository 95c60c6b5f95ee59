"""Replay reads that cost the events new since the last one: paged and streamed logs, the score
timeline and a finished game's audit kept in Redis. Each answer is checked against the same
answer made from the whole log. Run on fakeredis and a real Redis."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import redis
from redis._parsers.hiredis import _HiredisParser

import service.tables
from bootstrap import Services, build
from domain.table import Tables
from events.envelope import canonical_json
from events.snapshots import kept_key
from events.store import EventStore
from service.audit import audit, default_upcasters
from tests.conftest import IN_PROCESS
from tests.test_api import Game, new_game
from tests.test_lost_writes import client_on, lose_tail, play
from tests.test_snapshots import TABLE_ID, stored

GOLDEN = Path(__file__).resolve().parent / "golden"


def paged(game: Game, seat: int | None, after: int, limit: int) -> list[Any]:
    """Every event after `after`, read page by page following `through`."""
    events: list[Any] = []
    while True:
        page = game.get(f"/events?after={after}&limit={limit}", seat)
        events += page["events"]
        assert all(after < event["seq"] <= page["through"] for event in page["events"])
        if page["through"] == page["version"]:
            return events
        assert page["through"] == after + limit
        after = page["through"]


@pytest.mark.parametrize("seat", [None, 0, 1])
def test_pages_and_the_streamed_log_hold_the_whole_log(
    any_redis: redis.Redis, seat: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service.tables, "EXPORT_PAGE", 4)  # the stream spans several pages
    game = new_game(client_on(any_redis), 2, first_seat=0)
    version = play(game, 8)
    whole = game.get("/events", seat)
    assert (whole["version"], whole["through"]) == (version, version)
    assert [event["seq"] for event in whole["events"]] == list(range(1, version + 1))
    for limit in (1, 3, version, version + 5):
        assert paged(game, seat, 0, limit) == whole["events"]
    assert paged(game, seat, 5, 2) == whole["events"][5:]
    assert game.get(f"/events?after={version}", seat)["events"] == []
    past_the_end = game.get(f"/events?after={version + 3}&limit=2", seat)
    assert (past_the_end["through"], past_the_end["events"]) == (version, [])


def scores_from_scratch(client: redis.Redis, table_id: str) -> list[Any]:
    """The score timeline as the whole log makes it, with nothing kept."""
    client.delete(kept_key(table_id, "scores"))
    timeline: list[Any] = (
        client_on(client).get(f"/v1/tables/{table_id}/scores").get_json()["scores"]
    )
    return timeline


def test_the_kept_score_timeline_is_extended_by_new_events_only(any_redis: redis.Redis) -> None:
    game = new_game(client_on(any_redis), 2, first_seat=0)
    seen = []
    for _ in range(6):
        play(game, 2)
        answer = game.get("/scores")
        kept = json.loads(any_redis.get(kept_key(game.id, "scores")))  # type: ignore[arg-type]
        assert kept["version"] == answer["version"], "the kept timeline covers the answer"
        seen.append(answer["scores"])
    assert seen[-1] == scores_from_scratch(any_redis, game.id)
    assert len(seen[-1]) > 1, "the scores changed on the way"


def test_a_kept_score_timeline_the_stream_no_longer_holds_is_made_again(
    any_redis: redis.Redis,
) -> None:
    game = new_game(client_on(any_redis), 2, first_seat=0)
    play(game, 10)
    game.get("/scores")
    lose_tail(any_redis, game.id, 3)
    play(game, 2)  # another history from the surviving version on
    assert client_on(any_redis).get(f"/v1/tables/{game.id}/scores").get_json()[
        "scores"
    ] == scores_from_scratch(any_redis, game.id)


def finished(client: redis.Redis) -> Services:
    """Services on `client` whose store holds the golden Pig 10 game as `TABLE_ID`."""
    stored("pig10", client)
    return build(client, IN_PROCESS)


def test_a_finished_games_audit_is_computed_once_and_kept(any_redis: redis.Redis) -> None:
    services = finished(any_redis)
    records = EventStore(any_redis).read(TABLE_ID, upcast=False)
    expected = audit(Tables(services.queries.tables.registry), records, default_upcasters().upcast)
    first = services.queries.audit(TABLE_ID)
    assert first == expected.to_json()
    assert first["ok"] is True
    kept = json.loads(any_redis.get(kept_key(TABLE_ID, "audit")))  # type: ignore[arg-type]
    assert (kept["version"], kept["value"]) == (len(records), first)
    # A kept finding is what is served: mark it, and the mark comes back.
    marked = {**kept, "value": {**first, "commands": -1}}
    any_redis.set(kept_key(TABLE_ID, "audit"), canonical_json(marked))
    assert build(any_redis, IN_PROCESS).queries.audit(TABLE_ID)["commands"] == -1


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(lambda kept: {**kept, "head": "f" * 64}, id="another head"),
        pytest.param(
            lambda kept: {**kept, "stamp": {**kept["stamp"], "rules_version": 0}},
            id="older rules",
        ),
    ],
)
def test_a_kept_audit_of_another_log_or_code_is_not_served(
    any_redis: redis.Redis, spoil: Any
) -> None:
    services = finished(any_redis)
    first = services.queries.audit(TABLE_ID)
    kept = json.loads(any_redis.get(kept_key(TABLE_ID, "audit")))  # type: ignore[arg-type]
    spoiled = spoil({**kept, "value": {**first, "commands": -1}})
    any_redis.set(kept_key(TABLE_ID, "audit"), canonical_json(spoiled))
    assert build(any_redis, IN_PROCESS).queries.audit(TABLE_ID) == first


def test_redis_py_parses_replies_with_hiredis(real_redis: redis.Redis) -> None:
    """hiredis is installed with redis-py (pyproject) and is the parser its connections use."""
    connection = real_redis.connection_pool.get_connection()
    try:
        connection.connect()  # type: ignore[no-untyped-call]
        assert type(connection._parser) is _HiredisParser
    finally:
        real_redis.connection_pool.release(connection)
