"""Idempotency keys: one write however many requests race with one key, every other answer the
replay; receipts that are small and expire once the game has ended, while its log never does."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any, cast

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from bootstrap import Services, web_app
from events.store import idempotency_key, stream_key
from tests.conftest import IN_PROCESS
from tests.test_api import Game, new_game, payload

RACERS = 32
SEAT_KEY = "5e2c0b6e9f1d4a7c"
"""16 characters: the shortest key a seat takes (it stands for the token until answered)."""


@pytest.fixture
def app(any_redis: redis.Redis) -> Flask:
    return web_app(replace(IN_PROCESS, receipts_ttl_seconds=600), redis_client=any_redis)


def race(
    apps: list[Flask], post: Callable[[FlaskClient], TestResponse]
) -> list[tuple[int, str | None, Any]]:
    """`post` sent by `RACERS` threads at once, the web processes `apps` taking them in turn:
    each answer's status, `Idempotent-Replayed` header and body."""
    answers: list[tuple[int, str | None, Any]] = []
    barrier = threading.Barrier(RACERS)

    def attempt(number: int) -> None:
        client = apps[number % len(apps)].test_client()
        barrier.wait()
        response = post(client)
        answers.append(
            (response.status_code, response.headers.get("Idempotent-Replayed"), response.get_json())
        )

    threads = [threading.Thread(target=attempt, args=(n,)) for n in range(RACERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def played(game: Game) -> int:
    return sum(e["type"] == "pig10.CardPlayed" for e in game.get("/events")["events"])


@pytest.mark.redis
def test_concurrent_requests_with_one_key_write_once_and_all_get_the_answer(
    real_redis: redis.Redis,
) -> None:
    # Two web processes (each its own table cache) take the racing requests in turn.
    apps = [web_app(IN_PROCESS, redis_client=real_redis) for _ in range(2)]
    game = new_game(apps[0].test_client(), 2, first_seat=0)
    legal = game.get("/moves", 0)
    answers = race(
        apps,
        lambda client: client.post(
            f"/v1/tables/{game.id}/moves",
            json={"move": legal["moves"][0], "expected_version": legal["version"]},
            headers={**game.auth(0), "Idempotency-Key": "once"},
        ),
    )
    assert played(game) == 1, "one write"
    assert sorted(status for status, _, _ in answers) == [200] * RACERS, answers
    assert sorted(str(replayed) for _, replayed, _ in answers) == ["None"] + ["true"] * (RACERS - 1)
    bodies = [body for _, _, body in answers]
    assert all(body == bodies[0] for body in bodies), "every replay is the first answer"


def test_a_receipt_is_compact_and_replays_the_answer_from_the_log(
    app: Flask, any_redis: redis.Redis
) -> None:
    game = new_game(app.test_client(), 2, first_seat=0)
    legal = game.get("/moves", 0)
    status, first, _ = game.post_move(0, legal["moves"][0], legal["version"], key="k1")
    assert status == 200
    (receipt,) = cast(list[bytes], any_redis.hvals(idempotency_key(game.id)))
    assert len(receipt) < 100, receipt
    elsewhere = Game(
        web_app(IN_PROCESS, redis_client=any_redis).test_client(), game.id, game.tokens
    )
    for here in (game, elsewhere):
        status, again, headers = here.post_move(0, legal["moves"][0], legal["version"], key="k1")
        assert (status, again, headers["Idempotent-Replayed"]) == (200, first, "true")


def test_a_receipt_written_before_receipts_were_compact_still_replays(
    app: Flask, any_redis: redis.Redis
) -> None:
    game = new_game(app.test_client(), 2, first_seat=0)
    legal = game.get("/moves", 0)
    status, first, _ = game.post_move(0, legal["moves"][0], legal["version"], key="old")
    assert status == 200
    stored: dict[bytes, bytes] = any_redis.hgetall(idempotency_key(game.id))  # type: ignore[assignment]
    [(field, compact)] = stored.items()
    fingerprint = compact.split()[0].decode()
    legacy = json.dumps({"fingerprint": fingerprint, "body": first})
    any_redis.hset(idempotency_key(game.id), mapping={field: legacy})
    status, again, _ = game.post_move(0, legal["moves"][0], legal["version"], key="old")
    assert (status, again) == (200, first)
    status, reused, _ = game.post_move(0, legal["moves"][1], legal["version"], key="old")
    assert (status, reused["type"]) == (422, "/problems/idempotency-key-reused")


def test_receipts_expire_once_the_game_ends_and_the_log_never(
    app: Flask, any_redis: redis.Redis
) -> None:
    game = new_game(app.test_client(), 2, first_seat=0)
    turn = 0
    while (table := game.get("")).get("status") == "running":
        seat = table["to_act"][0]
        legal = game.get("/moves", seat)
        assert any_redis.ttl(idempotency_key(game.id)) in (-1, -2), "no expiry while it runs"
        status, body, _ = game.post_move(seat, legal["moves"][-1], legal["version"], f"t{turn}")
        assert status == 200, payload(body)
        turn += 1
    assert 0 < cast(int, any_redis.ttl(idempotency_key(game.id))) <= 600
    assert any_redis.ttl(stream_key(game.id)) == -1


def seated_events(client: FlaskClient, table_id: str) -> list[dict[str, object]]:
    log = client.get(f"/v1/tables/{table_id}/events").get_json()["events"]
    return [event for event in log if event["type"] == "table.SeatTaken"]


@pytest.mark.redis
def test_a_seat_taken_again_with_its_key_is_the_same_seat_and_token(
    real_redis: redis.Redis,
) -> None:
    """A client whose seat's answer was lost sends it again with the same key, from any web
    process, even racing: one seat is taken, and every answer holds it and its token, the
    replays marked so. Redis holds the token only masked, not as it was given."""
    apps = [web_app(IN_PROCESS, redis_client=real_redis) for _ in range(2)]
    opened = apps[0].test_client().post("/v1/tables", json={"game": "pig10", "seats": 3})
    table_id = opened.get_json()["id"]
    answers = race(
        apps,
        lambda client: client.post(
            f"/v1/tables/{table_id}/seats",
            json={"name": "Ada"},
            headers={"Idempotency-Key": SEAT_KEY},
        ),
    )
    client = apps[0].test_client()
    assert len(seated_events(client, table_id)) == 1, "one seat taken"
    assert {status for status, _, _ in answers} == {201}
    assert sorted(replayed or "" for _, replayed, _ in answers) == [""] + ["true"] * (RACERS - 1)
    assert len({(body["seat"], body["token"]) for _, _, body in answers}) == 1
    token = str(answers[0][2]["token"])
    mine = client.get(f"/v1/tables/{table_id}", headers={"Authorization": f"Bearer {token}"})
    assert mine.get_json()["you"] == answers[0][2]["seat"]
    receipts = cast(dict[bytes, bytes], real_redis.hgetall(idempotency_key(table_id)))
    assert receipts, "the key's receipt is kept"
    assert not any(token.encode() in value for value in receipts.values())

    other = client.post(
        f"/v1/tables/{table_id}/seats", json={"name": "Bo"}, headers={"Idempotency-Key": SEAT_KEY}
    )
    assert other.status_code == 422
    assert other.get_json()["type"] == "/problems/idempotency-key-reused"
    assert "seat" in other.get_json()["detail"]
    assert len(seated_events(client, table_id)) == 1, "nothing written"


def test_a_bot_seat_taken_again_with_its_key_is_the_same_seat(app: Flask) -> None:
    client = app.test_client()
    table_id = client.post("/v1/tables", json={"game": "pig10", "seats": 3}).get_json()["id"]
    bot = {"bot": "random"}
    first, again = (
        client.post(f"/v1/tables/{table_id}/seats", json=bot, headers={"Idempotency-Key": SEAT_KEY})
        for _ in range(2)
    )
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert first.get_json()["seat"] == again.get_json()["seat"]
    assert first.get_json()["token"] is again.get_json()["token"] is None
    assert len(seated_events(client, table_id)) == 1


def test_a_seats_receipt_expires_with_a_table_nobody_filled(
    app: Flask, any_redis: redis.Redis
) -> None:
    """A table that expires open (its seats never all taken) keeps its seats' receipts only a
    while, as a finished game keeps its moves'."""
    client = app.test_client()
    table_id = client.post("/v1/tables", json={"game": "pig10", "seats": 2}).get_json()["id"]
    taken = client.post(
        f"/v1/tables/{table_id}/seats", json={"name": "Ada"}, headers={"Idempotency-Key": SEAT_KEY}
    )
    assert taken.status_code == 201
    assert any_redis.ttl(idempotency_key(table_id)) == -1, "kept while the table is open"
    services = Services.of(app)
    assert services.commands.expire(services.repository.load(table_id))
    assert 0 < cast(int, any_redis.ttl(idempotency_key(table_id))) <= 600


def test_a_seat_refuses_a_key_anyone_could_guess(app: Flask) -> None:
    """A seat's key is answered with the seat's token: one shorter than 16 characters is
    refused, and nothing is written."""
    client = app.test_client()
    table_id = client.post("/v1/tables", json={"game": "pig10", "seats": 2}).get_json()["id"]
    short = client.post(
        f"/v1/tables/{table_id}/seats", json={"name": "Ada"}, headers={"Idempotency-Key": "1"}
    )
    assert short.status_code == 400
    assert short.get_json()["type"] == "/problems/invalid-idempotency-key"
    assert "16 to 200" in short.get_json()["detail"]
    assert seated_events(client, table_id) == []


def test_a_seat_sent_again_after_the_table_filled_is_its_first_answer(app: Flask) -> None:
    """Ada's answer is lost and Bo takes the last seat before she sends it again: her retry
    would be refused (every seat taken), and is answered with the seat she took instead."""
    client = app.test_client()
    table_id = client.post("/v1/tables", json={"game": "pig10", "seats": 2}).get_json()["id"]
    ada = {"seat": 0, "name": "Ada"}
    first = client.post(
        f"/v1/tables/{table_id}/seats", json=ada, headers={"Idempotency-Key": SEAT_KEY}
    )
    assert client.post(f"/v1/tables/{table_id}/seats", json={"name": "Bo"}).status_code == 201
    again = client.post(
        f"/v1/tables/{table_id}/seats", json=ada, headers={"Idempotency-Key": SEAT_KEY}
    )
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json()["token"] == first.get_json()["token"]
    assert again.get_json()["table"]["status"] == "running"
    unkeyed = client.post(f"/v1/tables/{table_id}/seats", json=ada)
    assert unkeyed.status_code == 409, "without its key, the same request is refused"
