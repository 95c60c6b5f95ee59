"""Playing one arena game: in this process through the table aggregate, or through a service.

Either way it is an ordinary game: the same commands, seed commitment and events as a table the
service hosts, so a game played through the service can be replayed and audited there.
"""

from __future__ import annotations

import hashlib
import json
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from random import Random
from typing import Any

from domain.catalogue import BotCatalogue
from domain.dice import SEED_BYTES, commitment
from domain.rules import JSON, Result
from domain.table import Command, CreateGame, MakeMove, Table, Tables, TakeSeat


@dataclass(frozen=True)
class Entrant:
    """A bot at a level, as written on the command line: `search:hard`, `random`."""

    bot: str
    level: str | None = None

    @classmethod
    def parse(cls, text: str) -> Entrant:
        bot, _, level = text.partition(":")
        return cls(bot, level or None)

    def __str__(self) -> str:
        return f"{self.bot}:{self.level}" if self.level else self.bot


@dataclass(frozen=True)
class Pairing:
    """One arena game to play: who sits where, and the seed that makes it reproducible."""

    game: str
    index: int
    seats: tuple[Entrant, ...]
    options: Mapping[str, JSON]
    seed: str

    def table_seed(self) -> bytes:
        return hashlib.sha256(f"arena:{self.seed}:{self.index}".encode()).digest()[:SEED_BYTES]


@dataclass
class GameRecord:
    """How one arena game ended, and how long each seat thought."""

    game: str
    index: int
    seats: list[str]
    winners: list[int]
    scores: list[int]
    shares: list[float]
    version: int
    """The table's version at the end: how many events the game took."""
    table: str | None = None
    thinking: list[list[float]] = field(default_factory=list)
    """Per seat, the seconds each choice among two or more moves took (local games only)."""
    untimed: bool = False
    """Search played its whole budget of playouts on every choice, its time limits not applied
    (the arena's `--untimed`)."""


def rotated(lineup: Sequence[Entrant], games: int) -> list[tuple[Entrant, ...]]:
    """`games` seatings of `lineup`, each entrant sitting in every seat equally often."""
    return [
        tuple(lineup[(seat - index) % len(lineup)] for seat in range(len(lineup)))
        for index in range(games)
    ]


def play_locally(
    pairing: Pairing,
    tables: Tables,
    bots: BotCatalogue,
    clock: Callable[[], float] = time.perf_counter,
) -> GameRecord:
    """Play `pairing` in this process, deciding commands as the service would."""
    seed = pairing.table_seed()
    table_id = f"arena-{pairing.seed}-{pairing.index}"
    players = len(pairing.seats)
    create = CreateGame(table_id, pairing.game, players, dict(pairing.options), commitment(seed))
    table = execute(tables, None, create, seed)
    levels = []
    for number, entrant in enumerate(pairing.seats):
        level = bots.level(entrant.bot, entrant.level, pairing.game)
        levels.append(level)
        sit = TakeSeat(number, str(entrant), None, bot=entrant.bot, level=level)
        table = execute(tables, table, sit, seed)
    # Who acts first when several may (a reaction racing the next turn) is the arena's call:
    # seeded, so that no seat number is favoured and a game replays the same.
    racing = Random(f"{table_id}:race")
    thinking: list[list[float]] = [[] for _ in pairing.seats]
    while table.result is None:
        seat = racing.choice(tables.may_act(table))
        turn = tables.turn(table, seat)
        bot = bots.bot(pairing.seats[seat].bot, levels[seat])
        started = clock()
        move = bot.choose(turn, Random(f"{table_id}:{table.version}:{seat}"))
        if len(turn.moves) > 1:
            thinking[seat].append(clock() - started)
        table = execute(tables, table, MakeMove(seat, move), seed)
    return record(pairing, table.result, table.version, thinking=thinking)


def execute(tables: Tables, table: Table | None, command: Command, seed: bytes) -> Table:
    """The table after `command`, decided and folded as the service would."""
    after = tables.fold(tables.decide(table, command, seed), table)
    assert after is not None
    return after


def play_through_service(pairing: Pairing, url: str, poll_seconds: float = 0.2) -> GameRecord:
    """Open a table of bots on the service at `url` and wait until its workers have played it."""
    bots = [
        {"seat": number, "bot": entrant.bot, "level": entrant.level, "name": str(entrant)}
        for number, entrant in enumerate(pairing.seats)
    ]
    body = {
        "game": pairing.game,
        "seats": len(pairing.seats),
        "options": dict(pairing.options),
        "entropy": f"arena:{pairing.seed}:{pairing.index}",
        "bots": bots,
    }
    table = call(url, "POST", "/v1/tables", body)
    while table["status"] != "finished":
        time.sleep(poll_seconds)
        table = call(url, "GET", f"/v1/tables/{table['id']}")
    return record(pairing, table["result"], table["version"], table=table["id"])


def call(url: str, method: str, path: str, body: JSON = None) -> dict[str, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url.rstrip("/") + path, data, {"Content-Type": "application/json"}, method=method
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        answer: dict[str, Any] = json.load(response)
        return answer


def record(
    pairing: Pairing,
    result: Mapping[str, JSON] | None,
    version: int,
    *,
    table: str | None = None,
    thinking: list[list[float]] | None = None,
) -> GameRecord:
    assert result is not None
    outcome = Result(tuple(result["winners"]), tuple(result["scores"]))
    return GameRecord(
        pairing.game,
        pairing.index,
        [str(entrant) for entrant in pairing.seats],
        list(outcome.winners),
        list(outcome.scores),
        list(outcome.shares()),
        version,
        table,
        thinking or [],
    )
