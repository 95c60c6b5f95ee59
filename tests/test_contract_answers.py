"""Every answer of every reading endpoint, at every version of whole games of the five games, is
inside openapi.yaml.

A client holding every seat plays each game to its end with seeded random legal moves. At each
version a move leaves, it reads the table, the legal moves and the event log as every seat and as
a spectator; once the game is over, every past version as every caller, the seats, the scores,
the listing, the live stream, the audit and the export. `ContractClient` checks each answer
against the spec's schema for its status (the `Table` schema pairs each game with its state);
on top of that every legal move must fit its own game's move schema, not only the open
`OtherGameMove` a deployment's extra games use.
"""

from __future__ import annotations

from random import Random
from typing import Any

import fakeredis
import pytest
import redis

from bootstrap import web_app
from tests.bounds import bounded
from tests.conftest import IN_PROCESS
from tests.test_openapi import (
    AUDIT,
    EVENTS,
    EXPORT,
    MOVES,
    SCORES,
    SEATS,
    STREAM,
    TABLE,
    TABLES,
    VERSION,
    ContractClient,
    assert_valid,
    component,
)

GAMES: dict[str, tuple[str, dict[str, Any]]] = {
    "pig10": ("Pig10", {}),
    "krumme10": ("Krumme10", {"variant": "showdown"}),
    "krasskariert": ("KrassKariert", {}),
    # Tasks on the table, so that accepted attacks leave their steps; a shorter game than 500.
    "wobble": ("Wobble", {"tasks": "table", "score_limit": 150}),
    "rollnbump": ("RollnBump", {}),
}
"""Each game's schema prefix in the spec (`<prefix>State`, `<prefix>Move`), and the options its
game is played with."""
MAX_MOVES = 5000
LOG_EVERY = 8
"""Moves between reads of the whole event log: each read is as long as the game so far, so reading
it at every version would make the test quadratic. Every event is also checked as its mover sees
it (the move's answer) and, at the end, as everyone sees it."""


class Players:
    """Every seat of one table, held by one client that reads everything as everyone."""

    def __init__(self, api: ContractClient, game: str) -> None:
        self.api = api
        self.game = game
        self.prefix, options = GAMES[game]
        info = api.call("get", "/v1/games/{game_id}", path={"game_id": game}, expect=200).body
        self.players = info["min_players"]
        body = {"game": game, "seats": self.players, "options": options}
        table = api.call("post", TABLES, body=body, expect=201).body
        self.path = {"table_id": table["id"]}
        self.tokens = [
            self.api.call(
                "post", SEATS, path=self.path, body={"name": f"p{seat}"}, expect=201
            ).body["token"]
            for seat in range(self.players)
        ]

    @property
    def callers(self) -> list[tuple[int | None, str | None]]:
        """Each seat with its token, and the spectator."""
        return [*enumerate(self.tokens), (None, None)]

    def get(self, route: str, token: str | None = None, **path: Any) -> Any:
        return self.api.call("get", route, path={**self.path, **path}, token=token, expect=200).body

    def read_as_everyone(self, log: bool) -> dict[str, Any]:
        """The table, the legal moves (and the log) as every caller; the spectator's table."""
        table: dict[str, Any] = {}
        for seat, token in self.callers:
            table = self.get(TABLE, token)
            assert table["you"] == seat
            if log:
                self.get(EVENTS, token)
            if token is not None:
                for move in self.get(MOVES, token)["moves"]:
                    assert_valid(component(f"{self.prefix}Move"), move, f"a {self.game} move")
        return table

    def play(self, rng: Random) -> int:
        """Play to the end, reading everything at each version; the final version."""
        for moves in bounded(f"{self.game} to end", MAX_MOVES):
            table = self.read_as_everyone(log=moves % LOG_EVERY == 0)
            if table["status"] == "finished":
                return int(table["version"])
            seat = rng.choice(table["to_act"])
            legal = self.get(MOVES, self.tokens[seat])
            body = {"move": rng.choice(legal["moves"]), "expected_version": legal["version"]}
            self.api.call("post", MOVES, path=self.path, token=self.tokens[seat], body=body)
        raise AssertionError("unreachable: bounded() fails first")

    def read_the_finished_game(self, version: int) -> None:
        for _, token in self.callers:
            self.get(EVENTS, token)
            self.api.call("get", STREAM, path=self.path, token=token, expect=200)
        # Each past version is folded from the log's start: as the spectator, and as one seat in
        # turn (reading each as every seat too would only repeat the fold).
        for past in range(1, version + 1):
            assert self.get(VERSION, version=past)["you"] is None
            seat = past % self.players
            assert self.get(VERSION, self.tokens[seat], version=past)["you"] == seat
        self.get(SEATS)
        self.get(SCORES)
        assert self.get(AUDIT)["ok"]
        self.get(EXPORT)
        for status in ("open", "running", "finished"):
            self.api.call("get", TABLES, query={"game": self.game, "status": status}, expect=200)


def play_and_read(api: ContractClient, game: str) -> ContractClient:
    players = Players(api, game)
    version = players.play(Random(game))
    players.read_the_finished_game(version)
    return api


@pytest.mark.parametrize("game", list(GAMES))
def test_every_answer_of_a_whole_game_is_inside_the_spec(game: str) -> None:
    app = web_app(IN_PROCESS, redis_client=fakeredis.FakeRedis())
    api = play_and_read(ContractClient(app.test_client()), game)
    reading = {TABLE, MOVES, EVENTS, VERSION, STREAM, SEATS, SCORES, AUDIT, EXPORT, TABLES}
    assert reading <= {template for template, method, status in api.seen if status == "200"}


@pytest.mark.parametrize("game", ["pig10", "krumme10"])
def test_every_answer_is_inside_the_spec_on_a_real_redis(
    game: str, real_redis: redis.Redis
) -> None:
    app = web_app(IN_PROCESS, redis_client=real_redis)
    play_and_read(ContractClient(app.test_client()), game)
