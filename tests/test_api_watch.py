"""The reads a spectator's browser watches tables with: the list of tables, newest first, and
each table's score timeline.

Each test runs on fakeredis and on the real Redis server (`any_redis`).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any, cast

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from bootstrap import web_app
from events.store import created_index_key, stream_key
from service.tables import LIST_SCAN
from tests.conftest import IN_PROCESS
from tests.test_api import hands_in, new_game, payload

OUTLINE = {"id", "game", "status", "version", "seats", "to_act", "created"}


@pytest.fixture
def app(any_redis: redis.Redis) -> Flask:
    return web_app(IN_PROCESS, redis_client=any_redis)


def listed(client: FlaskClient, **query: str) -> list[Any]:
    response = client.get("/v1/tables", query_string=query)
    assert response.status_code == 200, payload(response)
    tables: list[Any] = payload(response)
    return tables


def open_table(client: FlaskClient, game: str = "pig10", seats: int = 2) -> str:
    created = client.post("/v1/tables", json={"game": game, "seats": seats})
    assert created.status_code == 201, payload(created)
    table_id: str = payload(created)["id"]
    return table_id


def test_tables_are_listed_newest_first_and_filtered(client: FlaskClient) -> None:
    oldest = open_table(client, "krumme10", 3)
    game = new_game(client, 2)
    newest = open_table(client)
    assert [t["id"] for t in listed(client)] == [newest, game.id, oldest]
    assert [t["id"] for t in listed(client, limit="2")] == [newest, game.id]
    assert [t["id"] for t in listed(client, status="open")] == [newest, oldest]
    assert [t["id"] for t in listed(client, game="krumme10")] == [oldest]
    assert [t["id"] for t in listed(client, status="open", game="pig10")] == [newest]
    assert listed(client, status="finished") == []
    game.play_to_end()
    (finished,) = listed(client, status="finished")
    assert finished["id"] == game.id
    assert finished["version"] == game.get("")["version"], "the outline is read from the log"
    assert [seat["name"] for seat in finished["seats"]] == ["player 0", "player 1"]


def test_a_listed_table_shows_only_what_everyone_may_see(client: FlaskClient) -> None:
    game = new_game(client, 3)
    (outline,) = listed(client)
    assert set(outline) == OUTLINE
    spectator = game.get("")
    assert {key: spectator[key] for key in OUTLINE - {"created"}} == {
        key: value for key, value in outline.items() if key != "created"
    }
    keys = {key for key, _ in hands_in(outline)}
    assert not keys & {"state", "hand", "token", "token_sha256", "seed", "commitment"}
    first_event = game.get("/events")["events"][0]
    assert outline["created"] == first_event["meta"]["time"], "the time GameCreated records"


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"status": "waiting"}, "status"),
        ({"status": "OPEN"}, "status"),
        ({"limit": "0"}, "limit"),
        ({"limit": "101"}, "limit"),
        ({"limit": "-1"}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"game": ""}, "game"),
        ({"sort": "oldest"}, "sort"),
    ],
)
def test_a_bad_query_is_a_problem_naming_the_field_and_writes_nothing(
    client: FlaskClient, any_redis: redis.Redis, query: dict[str, str], field: str
) -> None:
    open_table(client)
    keys = sorted(cast(list[bytes], any_redis.keys()))
    response = client.get("/v1/tables", query_string=query)
    assert (response.status_code, response.mimetype) == (422, "application/problem+json")
    assert payload(response)["type"] == "/problems/invalid-query"
    assert list(payload(response)["errors"]) == [field]
    assert sorted(cast(list[bytes], any_redis.keys())) == keys


def test_a_game_not_hosted_has_no_tables(client: FlaskClient) -> None:
    open_table(client)
    response = client.get("/v1/tables", query_string={"game": "chess"})
    assert (response.status_code, response.get_json()) == (200, [])


def test_tables_whose_log_is_gone_are_skipped(client: FlaskClient, any_redis: redis.Redis) -> None:
    kept, gone = open_table(client), open_table(client)
    any_redis.delete(stream_key(gone))
    # Neither a process that has the table cached nor one that has not lists it.
    elsewhere = web_app(IN_PROCESS, redis_client=any_redis).test_client()
    assert [t["id"] for t in listed(elsewhere)] == [kept]
    assert [t["id"] for t in listed(client)] == [kept]


def test_a_table_missing_from_the_index_plays_on_unlisted(
    client: FlaskClient, any_redis: redis.Redis
) -> None:
    """What an index that lost an entry (say, with the tail of Redis's writes) leaves behind."""
    game = new_game(client, 2)
    any_redis.zrem(created_index_key(game.id), game.id)
    assert listed(client) == []
    assert game.get("")["status"] == "running"


def test_a_listing_looks_at_no_more_than_its_bound(client: FlaskClient) -> None:
    running = new_game(client, 2).id
    for _ in range(LIST_SCAN - 1):
        open_table(client)
    assert [t["id"] for t in listed(client, status="running", limit="1")] == [running]
    open_table(client)
    assert listed(client, status="running", limit="1") == [], "the 11th newest is not looked at"
    assert [t["id"] for t in listed(client, status="running", limit="2")] == [running]


def test_the_score_timeline_charts_a_whole_game_in_steps(client: FlaskClient) -> None:
    game = new_game(client, 3)
    final = game.play_to_end()
    timeline = game.get("/scores")
    assert timeline["version"] == final["version"]
    pairs = timeline["scores"]
    versions = [version for version, _ in pairs]
    assert versions == sorted(set(versions))
    assert versions[0] == 4, "the game starts with the last of 3 seats taken (version 4)"
    assert pairs[0][1] == [0, 0, 0]
    assert pairs[-1] == [final["version"], final["result"]["scores"]]
    for version, scores in pairs:
        assert game.get(f"/versions/{version}")["state"]["won"] == scores
    for (_, before), (_, after) in itertools.pairwise(pairs[:-1]):
        assert before != after, "a pair only where a score changed"
    assert game.get("/scores", seat=0) == timeline, "the same for every caller"


def test_an_open_table_has_no_scores_yet(client: FlaskClient) -> None:
    table_id = open_table(client)
    response = client.get(f"/v1/tables/{table_id}/scores")
    assert (response.status_code, payload(response)) == (200, {"version": 1, "scores": []})


@pytest.mark.parametrize("table_id", ["nope", "x" * 65, "no.such.table"])
def test_the_scores_of_an_unknown_table_are_a_404(
    client: FlaskClient, any_redis: redis.Redis, table_id: str
) -> None:
    response = client.get(f"/v1/tables/{table_id}/scores")
    assert (response.status_code, response.mimetype) == (404, "application/problem+json")
    assert payload(response)["type"] == "/problems/unknown-table"
    assert any_redis.keys() == []


@pytest.mark.parametrize(
    ("resume", "frames"),
    [
        ("", [("1", "table.GameCreated")]),
        ("  ", [("1", "table.GameCreated")]),
        ("1", []),
        (str(2**64 + 1), [("1", "stream.Rewound")]),
    ],
)
def test_last_event_id_resumes_a_stream_after_it(
    fake_redis: redis.Redis, resume: str, frames: list[tuple[str, str]]
) -> None:
    """An empty `Last-Event-ID` is as if none was sent; one beyond every version is told where
    the log stands (`stream.Rewound`), and the stream goes on from there."""
    short = replace(IN_PROCESS, stream_max_seconds=0.2, stream_keepalive_seconds=0.05)
    client = web_app(short, redis_client=fake_redis).test_client()
    table_id = open_table(client)
    streamed = client.get(f"/v1/tables/{table_id}/stream", headers={"Last-Event-ID": resume})
    assert streamed.status_code == 200
    assert streamed.headers["Stream-Keepalive"] == "0.05", "how often a keep-alive comes"
    lines = streamed.text.splitlines()
    ids = [line.removeprefix("id: ") for line in lines if line[:4] == "id: "]
    types = [line.removeprefix("event: ") for line in lines if line[:7] == "event: "]
    assert list(zip(ids, types, strict=True)) == frames
