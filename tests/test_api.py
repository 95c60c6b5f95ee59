"""The API against a real Redis server: whole games, what each caller sees, audit and replay."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from bootstrap import build, web_app
from events.packing import unpack
from events.store import stream_key
from service.config import Config
from tests.bounds import bounded
from tests.conftest import IN_PROCESS

pytestmark = pytest.mark.redis


@pytest.fixture
def app(real_redis: redis.Redis) -> Flask:
    return web_app(IN_PROCESS, redis_client=real_redis)


@dataclass
class Game:
    """A Pig 10 table driven through the API, with every response kept for inspection."""

    client: FlaskClient
    id: str
    tokens: list[str] = field(default_factory=list)
    responses: list[tuple[int | None, Any]] = field(default_factory=list)

    def auth(self, seat: int | None) -> dict[str, str]:
        return {} if seat is None else {"Authorization": f"Bearer {self.tokens[seat]}"}

    def get(self, path: str, seat: int | None = None) -> Any:
        response = self.client.get(f"/v1/tables/{self.id}{path}", headers=self.auth(seat))
        assert response.status_code == 200, payload(response)
        self.responses.append((seat, payload(response)))
        return payload(response)

    def post_move(
        self, seat: int, move: Any, version: int, key: str | None = None
    ) -> tuple[int, Any, dict[str, str]]:
        headers = self.auth(seat) | ({"Idempotency-Key": key} if key else {})
        response = self.client.post(
            f"/v1/tables/{self.id}/moves",
            json={"move": move, "expected_version": version},
            headers=headers,
        )
        self.responses.append((seat, payload(response)))
        return response.status_code, payload(response), dict(response.headers)

    def play_to_end(self) -> Any:
        for _ in bounded("the game did not end"):
            if (table := self.get("")).get("status") != "running":
                break
            seat = table["to_act"][0]
            legal = self.get("/moves", seat)
            status, body, _ = self.post_move(seat, legal["moves"][-1], legal["version"])
            assert status == 200, body
        return table


def new_game(client: FlaskClient, seats: int, **options: Any) -> Game:
    created = client.post("/v1/tables", json={"game": "pig10", "seats": seats, "options": options})
    assert created.status_code == 201, payload(created)
    game = Game(client, payload(created)["id"])
    for seat in range(seats):
        taken = client.post(f"/v1/tables/{game.id}/seats", json={"name": f"player {seat}"})
        assert taken.status_code == 201, payload(taken)
        assert payload(taken)["seat"] == seat
        game.tokens.append(payload(taken)["token"])
    return game


def payload(response: TestResponse) -> Any:
    """The JSON body of a test response (typed as Any, unlike Werkzeug's `Any | None`)."""
    return response.get_json()


def hands_in(value: Any) -> Iterator[tuple[str, Any]]:
    """Every (key, value) pair anywhere in a JSON document."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key, item
            yield from hands_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from hands_in(item)


def test_a_three_seat_game_is_played_to_the_end_and_audits(client: FlaskClient) -> None:
    game = new_game(client, 3)
    final = game.play_to_end()
    assert final["status"] == "finished"
    assert final["result"]["winners"]
    assert sum(final["result"]["scores"]) <= 80
    audit = payload(client.get(f"/v1/tables/{game.id}/audit"))
    assert audit["ok"], audit["problems"]
    assert audit["chain_ok"]
    assert audit["seed_ok"]
    assert audit["replay_ok"]
    assert audit["commands"] == 4 + len([r for r in game.responses if "events" in (r[1] or {})])


def test_a_moves_answer_carries_everything_its_mover_needs_next(client: FlaskClient) -> None:
    """One request per move: the answer holds the new version, the mover's table, who the table
    waits for and the mover's legal moves there, each as its own GET would answer it."""
    game = new_game(client, 2, first_seat=0)
    legal = game.get("/moves", 0)
    status, answer, _ = game.post_move(0, legal["moves"][0], legal["version"])
    assert status == 200, answer
    assert set(answer) == {"version", "events", "table", "to_act", "moves"}
    assert answer["version"] == legal["version"] + len(answer["events"])
    assert answer["table"] == game.get("", 0)
    assert answer["to_act"] == answer["table"]["to_act"] == [1]
    assert answer["moves"] == game.get("/moves", 0)
    waiting = {"version": answer["version"], "seat": 0, "to_act": False, "moves": []}
    assert answer["moves"] == waiting
    following = game.get("/moves", 1)
    status, answer, _ = game.post_move(1, following["moves"][0], following["version"])
    assert status == 200, answer
    assert answer["moves"]["seat"] == 1
    assert answer["to_act"] == [0]


def test_nobody_sees_another_seats_hand_while_the_game_runs(client: FlaskClient) -> None:
    game = new_game(client, 3)
    for _ in bounded("the game did not end"):
        if (table := game.get("")).get("status") != "running":
            break
        for seat in (0, 1, 2, None):
            view = game.get("", seat)["state"]
            assert ("hand" in view) == (seat is not None)
            log = game.get("/events", seat)["events"]
            for event in log:
                owner = event["data"].get("seat")
                if event["type"] in ("pig10.CardsDealt", "pig10.CardDrawn") and owner != seat:
                    assert "cards" not in event["data"]
                    assert "card" not in event["data"]
                if event["meta"].get("seat") != seat:
                    assert "command" not in event["meta"]
            assert not any(key == "token_sha256" for key, _ in hands_in(log))
            assert table["seed"] is None
        seat = table["to_act"][0]
        legal = game.get("/moves", seat)
        game.post_move(seat, legal["moves"][0], legal["version"])
    finished_log = game.get("/events")["events"]
    assert any("card" in e["data"] for e in finished_log if e["type"] == "pig10.CardDrawn")
    assert game.get("")["seed"] is not None


def test_replay_answers_every_version(client: FlaskClient) -> None:
    game = new_game(client, 2, first_seat=1)
    final = game.play_to_end()
    previous = None
    for version in range(1, final["version"] + 1):
        past = client.get(f"/v1/tables/{game.id}/versions/{version}", headers=game.auth(0))
        assert past.status_code == 200
        assert payload(past)["version"] == version
        assert payload(past) != previous
        previous = payload(past)
    assert previous is not None
    assert previous["result"] == final["result"]
    beyond = client.get(f"/v1/tables/{game.id}/versions/{final['version'] + 1}")
    assert beyond.status_code == 404
    assert payload(beyond)["type"] == "/problems/unknown-version"


def test_replayed_idempotency_key_returns_the_first_answer_and_writes_nothing(
    client: FlaskClient, real_redis: redis.Redis
) -> None:
    game = new_game(client, 2, first_seat=0)
    legal = game.get("/moves", 0)
    status, first, headers = game.post_move(0, legal["moves"][0], legal["version"], key="k-1")
    assert status == 200
    assert "Idempotent-Replayed" not in headers
    length = real_redis.xlen(stream_key(game.id))
    status, again, headers = game.post_move(0, legal["moves"][0], legal["version"], key="k-1")
    assert (status, again, headers["Idempotent-Replayed"]) == (200, first, "true")
    assert real_redis.xlen(stream_key(game.id)) == length
    other = legal["moves"][-1] if len(legal["moves"]) > 1 else {"card": 99, "mode": "add"}
    status, reused, _ = game.post_move(0, other, legal["version"], key="k-1")
    assert status == 422
    assert reused["type"] == "/problems/idempotency-key-reused"
    assert real_redis.xlen(stream_key(game.id)) == length


def test_stale_version_and_wrong_turn_are_conflicts_that_write_nothing(
    client: FlaskClient, real_redis: redis.Redis
) -> None:
    game = new_game(client, 2, first_seat=0)
    legal = game.get("/moves", 0)
    length = real_redis.xlen(stream_key(game.id))
    status, stale, _ = game.post_move(0, legal["moves"][0], legal["version"] - 1)
    assert (status, stale["type"], stale["current_version"]) == (
        409,
        "/problems/stale-version",
        legal["version"],
    )
    status, not_yours, _ = game.post_move(1, legal["moves"][0], legal["version"])
    assert (status, not_yours["type"]) == (409, "/problems/not-your-turn")
    status, illegal, _ = game.post_move(0, {"card": 0, "mode": "add"}, legal["version"])
    assert status == 422
    assert illegal["type"] == "/problems/illegal-move"
    assert illegal["rule"] in ("frog", "card-in-hand")
    assert real_redis.xlen(stream_key(game.id)) == length


def test_concurrent_moves_at_one_version_land_once(app: Flask, real_redis: redis.Redis) -> None:
    game = new_game(app.test_client(), 2, first_seat=0)
    legal = game.get("/moves", 0)
    statuses: list[int] = []
    barrier = threading.Barrier(8)

    def attempt() -> None:
        client = app.test_client()
        barrier.wait()
        response = client.post(
            f"/v1/tables/{game.id}/moves",
            json={"move": legal["moves"][0], "expected_version": legal["version"]},
            headers=game.auth(0),
        )
        statuses.append(response.status_code)

    threads = [threading.Thread(target=attempt) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [200] + [409] * 7
    played = [e for e in game.get("/events")["events"] if e["type"] == "pig10.CardPlayed"]
    assert len(played) == 1


def test_two_processes_sharing_redis_stay_consistent(real_redis: redis.Redis) -> None:
    """Each web process caches folded tables; a move made elsewhere must not be missed."""
    one = web_app(IN_PROCESS, redis_client=real_redis).test_client()
    two = web_app(IN_PROCESS, redis_client=real_redis).test_client()
    game = new_game(one, 2, first_seat=0)
    elsewhere = Game(two, game.id, game.tokens)
    for turn in range(12):
        here = game if turn % 2 else elsewhere
        table = here.get("")
        seat = table["to_act"][0]
        status, body, _ = here.post_move(
            seat, here.get("/moves", seat)["moves"][0], table["version"]
        )
        assert status == 200, body
    assert game.get("") == elsewhere.get("")


def test_audit_detects_a_tampered_log(client: FlaskClient, real_redis: redis.Redis) -> None:
    game = new_game(client, 2)
    game.play_to_end()
    key = stream_key(game.id)
    entries: list[tuple[bytes, dict[Any, Any]]] = real_redis.xrange(key)  # type: ignore[assignment]
    entry_id, fields = entries[5]
    record = json.loads(unpack(fields[b"e"]))
    record["d"]["cards"] = [10, 10, 10]
    real_redis.delete(key)
    for other_id, other_fields in entries:
        tampered = {**other_fields, b"e": json.dumps(record).encode()}
        real_redis.xadd(key, tampered if other_id == entry_id else other_fields, id=other_id)
    audit = payload(client.get(f"/v1/tables/{game.id}/audit"))
    assert not audit["ok"]
    assert not audit["chain_ok"]
    assert any(problem.startswith("event 6") for problem in audit["problems"])


def test_audit_refuses_a_running_game(client: FlaskClient) -> None:
    game = new_game(client, 2)
    response = client.get(f"/v1/tables/{game.id}/audit")
    assert response.status_code == 409
    assert payload(response)["type"] == "/problems/game-not-finished"
    assert response.mimetype == "application/problem+json"


def test_seat_entropy_is_mixed_into_the_deal(client: FlaskClient) -> None:
    created = payload(
        client.post("/v1/tables", json={"game": "pig10", "seats": 2, "entropy": "creator dice"})
    )
    client.post(f"/v1/tables/{created['id']}/seats", json={"name": "a", "entropy": "a's coin"})
    client.post(f"/v1/tables/{created['id']}/seats", json={"name": "b"})
    log = payload(client.get(f"/v1/tables/{created['id']}/events"))["events"]
    assert log[0]["data"]["entropy"] == "creator dice"
    assert log[1]["data"]["entropy"] == "a's coin"
    assert "seed" not in json.dumps(log[0]["data"]).replace("seeds", "")
    assert len(log[0]["data"]["commitment"]) == 64


def test_seats_fill_in_order_and_refuse_when_full(client: FlaskClient) -> None:
    created = payload(client.post("/v1/tables", json={"game": "pig10", "seats": 2}))
    seats = f"/v1/tables/{created['id']}/seats"
    assert payload(client.post(seats, json={"name": "b", "seat": 1}))["seat"] == 1
    taken_twice = client.post(seats, json={"name": "c", "seat": 1})
    assert (taken_twice.status_code, payload(taken_twice)["type"]) == (
        409,
        "/problems/seat-unavailable",
    )
    assert payload(client.post(seats, json={"name": "a"}))["seat"] == 0
    full = client.post(seats, json={"name": "d"})
    assert full.status_code == 409
    assert [s["name"] for s in payload(client.get(seats))] == ["a", "b"]


def test_table_ids_and_seat_tokens_never_start_with_a_dash(fake_redis: redis.Redis) -> None:
    """One in 64 did, and a command line (the examples' `--join <table>`) took such an id for an
    option."""
    commands = build(fake_redis, Config()).commands
    ids = {commands.new_id() for _ in range(3000)}
    tokens = {commands.new_token() for _ in range(3000)}
    assert len(ids) == len(tokens) == 3000, "random"
    assert {len(name) for name in ids} == {12}
    assert {len(name) for name in tokens} == {43}
    assert not [name for name in ids | tokens if name.startswith("-")]
