"""Wobble through the HTTP API (embedded fakeredis): several seats may act at once, the log decides.

A toss-in or a Jerk card races the seat to move. Both are decided on the same `expected_version`;
the first command to land appends, the second gets 409 `stale-version`, and a reaction sent
after the window closed is refused (409 or 422) without writing anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from random import Random
from typing import Any

import redis
from flask.testing import FlaskClient

from events.store import stream_key
from tests.test_openapi import assert_valid, component

MAX_MOVES = 5_000


@dataclass
class Table:
    client: FlaskClient
    id: str
    tokens: list[str] = field(default_factory=list)

    def auth(self, seat: int | None) -> dict[str, str]:
        return {} if seat is None else {"Authorization": f"Bearer {self.tokens[seat]}"}

    def get(self, path: str = "", seat: int | None = None) -> Any:
        response = self.client.get(f"/v1/tables/{self.id}{path}", headers=self.auth(seat))
        assert response.status_code == 200, response.get_json()
        return response.get_json()

    def post(self, seat: int, move: Any, version: int) -> tuple[int, Any]:
        response = self.client.post(
            f"/v1/tables/{self.id}/moves",
            json={"move": move, "expected_version": version},
            headers=self.auth(seat),
        )
        return response.status_code, response.get_json()


def new_table(client: FlaskClient, seats: int) -> Table:
    created = client.post("/v1/tables", json={"game": "wobble", "seats": seats})
    assert created.status_code == 201, created.get_json()
    table = Table(client, created.get_json()["id"])
    for seat in range(seats):
        taken = client.post(f"/v1/tables/{table.id}/seats", json={"name": f"p{seat}"})
        assert taken.status_code == 201
        table.tokens.append(taken.get_json()["token"])
    return table


TABLES = 5
"""Tables opened at most until one offers a toss-in: a deal is the server's secret, and now and
then a random game ends before any seat holds the identical card."""


def play_until_a_toss_in(
    client: FlaskClient, seats: int, rng: Random
) -> tuple[Table, int, int, int, Any, Any]:
    """Random moves (never a toss-in) until a seat may toss in beside the seat to move.

    Returns the table, the version, the mover, the tosser and one legal move of each.
    """
    for _ in range(TABLES):
        table = new_table(client, seats)
        for _ in range(MAX_MOVES):
            view = table.get()
            if view["status"] != "running":
                break
            state, version = view["state"], view["version"]
            (moving,) = view["to_act"]  # the table waits for one seat, publicly: never the tossers
            for seat in range(seats):
                moves = table.get("/moves", seat)["moves"]
                tosses = [m for m in moves if m["type"] == "toss"]
                if seat != moving and tosses and state["phase"] == "turn":
                    mine = table.get("/moves", moving)["moves"]
                    return table, version, moving, seat, rng.choice(mine), tosses[0]
            moves = [m for m in table.get("/moves", moving)["moves"] if m["type"] != "toss"]
            status, body = table.post(moving, rng.choice(moves), version)
            assert status == 200, body
    raise AssertionError(f"no toss-in chance at {TABLES} tables")


def test_a_toss_in_race_is_decided_by_the_log(client: FlaskClient, fake_redis: redis.Redis) -> None:
    rng = Random(3)
    for tosser_first in (True, False):
        table, version, moving, tosser, move, toss = play_until_a_toss_in(client, 4, rng)
        assert table.get()["to_act"] == [moving]
        assert table.get("/moves", tosser)["to_act"] is False
        first, second = (
            ((tosser, toss), (moving, move))
            if tosser_first
            else (
                (moving, move),
                (tosser, toss),
            )
        )
        status, won = table.post(*first, version)
        assert status == 200, won
        length = fake_redis.xlen(stream_key(table.id))
        status, lost = table.post(*second, version)
        assert (status, lost["type"]) == (409, "/problems/stale-version")
        assert fake_redis.xlen(stream_key(table.id)) == length
        log = table.get(f"/events?after={version}")["events"]
        assert log[0]["data"]["seat"] == first[0]
        assert log[0]["meta"]["seat"] == first[0]
        if tosser_first:
            assert log[0]["type"] == "wobble.CardsPlayed"
            assert log[0]["data"]["how"] == "toss"


def test_a_toss_in_after_the_window_closed_is_refused(
    client: FlaskClient, fake_redis: redis.Redis
) -> None:
    table, version, moving, tosser, move, toss = play_until_a_toss_in(client, 3, Random(11))
    status, body = table.post(moving, move, version)
    assert status == 200, body
    now = table.get()
    length = fake_redis.xlen(stream_key(table.id))
    status, late = table.post(tosser, toss, now["version"])
    assert status in (409, 422), late
    assert late["type"] in ("/problems/not-your-turn", "/problems/illegal-move")
    if status == 422:  # the tosser is the seat to move now: the window is what is closed
        # unless the move took the card away (Card Exchange, Half Hand, ...): then that is said
        held = table.get("", tosser)["state"]["hand"]
        expected = (
            ("toss-in-window", "toss-in-identical")
            if toss["cards"][0] in held
            else ("card-in-hand",)
        )
        assert late["rule"] in expected, (late, move)
    assert fake_redis.xlen(stream_key(table.id)) == length
    assert table.get()["version"] == now["version"]


def test_views_and_the_log_hide_other_hands_and_match_the_contract(client: FlaskClient) -> None:
    table = new_table(client, 3)
    rng = Random(5)
    for _ in range(60):
        view = table.get()
        if view["status"] != "running":
            break
        for seat in (0, 1, 2, None):
            state = table.get("", seat)["state"]
            assert ("hand" in state) == (seat is not None)
            assert_valid(component("WobbleState"), state, "wobble state")
            for event in table.get("/events", seat)["events"]:
                data = event["data"]
                if event["type"] == "wobble.CardsDealt" and data["seat"] != seat:
                    assert data["cards"] is None
        acting = {seat: table.get("/moves", seat)["moves"] for seat in range(3)}
        seat = rng.choice([seat for seat, moves in acting.items() if moves])
        move = rng.choice(acting[seat])
        assert table.post(seat, move, view["version"])[0] == 200
