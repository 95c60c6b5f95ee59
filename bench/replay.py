"""Replay cost flat in game length: reading a table of ~10,000 events vs one of ~50.

Pig 10 ends within 300 events, so the long table plays the bench-only game of `bench/marathon.py`
(one event per move). Both tables are written through the table service itself (`create`,
`take_seat`, `move`) on a real Redis, then read many times by a seat: in-process through
`Services.view` and over HTTP through the Flask test client. Steady-state reads should cost
the same for both (target: long / short <= 2.0). Cold reads, each by a fresh service (empty
cache) right after a move by another one, start from the newest snapshot in Redis: the seat's
view, a past version (`/versions/{v}`) and the score timeline (`/scores`, kept in Redis and
extended by the new events) should cost at most 3x at the long table what they do at the short
one (moonshot 1.2x). The very first `/scores` of each table, which folds its whole log once,
is shown without a target.

    .venv/bin/python bench/replay.py [--long 10000] [--short 50] [--reads 2000] [--smoke]
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis
from flask import Flask

from bench.common import parser, print_table, ratio, scratch_redis, verdict
from bench.marathon import MARATHON_GAME, MAX_LENGTH
from bootstrap import Services, web_app
from domain.heuristics import pig10
from domain.registry import GameRegistry
from service.config import Config
from service.views import SPECTATOR, Caller

TARGET = 2.0
"""Steady-state reads of the long table may cost at most this many times the short one's."""
COLD_TARGET = 3.0
COLD_MOONSHOT = 1.2
"""Cold reads of the long table: at most this many times the short one's (issue 19)."""
OPENING_EVENTS = 6
"""GameCreated, two SeatTaken, two CounterDealt, FirstSeatChosen."""
COLD_REPEATS = 15


def new_app(client: redis.Redis) -> Flask:
    """A fresh service (empty cache) on `client`, built as `bootstrap.web_app` builds it."""
    return web_app(
        Config(), redis_client=client, registry=GameRegistry([pig10.GAME, MARATHON_GAME])
    )


def services(app: Flask) -> Services:
    """The services behind `app`, as `bootstrap.web_app` handed them to it."""
    return Services.of(app)


@dataclass
class Game:
    """A running Marathon table, written through `writer`'s service."""

    writer: Services
    id: str
    tokens: dict[int, str]
    version: int
    turn: int

    @classmethod
    def create(cls, writer: Services, events: int) -> Game:
        table = writer.commands.create("marathon", 2, {"length": MAX_LENGTH}, None).body
        tokens: dict[int, str] = {}
        for name in ("ann", "bob"):
            taken = writer.commands.take_seat(table["id"], SPECTATOR, None, name, None).shown.body
            tokens[taken["seat"]] = taken["token"]
            view = taken["table"]
        game = cls(writer, table["id"], tokens, view["version"], view["to_act"][0])
        for _ in range(events - game.version):
            game.move()
        assert game.version == events, (game.version, events)
        return game

    def move(self) -> None:
        """One move by the seat to act: exactly one new event."""
        answer = self.writer.commands.move(
            self.id, Caller(self.turn), {"step": 1}, self.version, None
        )
        table = answer.shown.body["table"]
        self.version = answer.shown.body["version"]
        self.turn = table["to_act"][0]

    @property
    def token(self) -> str:
        return self.tokens[0]


Pair = tuple[float, float]
"""A figure for the short table and the same figure for the long one."""
Read = Callable[[Game], int]
"""Reads `game` as seat 0 and returns the version it saw."""


def view_read(app: Flask) -> Read:
    service = services(app)

    def read(game: Game) -> int:
        version: int = service.queries.view(
            game.id, service.queries.caller(game.id, game.token)
        ).body["version"]
        return version

    return read


def http_read(app: Flask) -> Read:
    client = app.test_client()

    def read(game: Game) -> int:
        response = client.get(
            f"/v1/tables/{game.id}", headers={"Authorization": f"Bearer {game.token}"}
        )
        if response.status_code != 200:
            raise RuntimeError(f"GET table: HTTP {response.status_code}: {response.text[:200]}")
        body = response.get_json()
        assert isinstance(body, dict)
        version: int = body["version"]
        return version

    return read


def http_get(
    app: Flask, path: Callable[[Game], str], version: Callable[[dict[str, Any]], int]
) -> Read:
    """A read of `path(game)` over HTTP as seat 0; `version` finds the version in the answer."""
    client = app.test_client()

    def read(game: Game) -> int:
        response = client.get(
            f"/v1/tables/{game.id}{path(game)}", headers={"Authorization": f"Bearer {game.token}"}
        )
        if response.status_code != 200:
            raise RuntimeError(
                f"GET {path(game)}: HTTP {response.status_code}: {response.text[:200]}"
            )
        return version(response.get_json())

    return read


def past_version(game: Game) -> int:
    """The past version `/versions/{v}` is asked for: a few moves back from the latest."""
    return game.version - 7


def versions_read(app: Flask) -> Read:
    def version(body: dict[str, Any]) -> int:
        return int(body["version"]) + 7  # checked against the table's: it was asked for that

    return http_get(app, lambda game: f"/versions/{past_version(game)}", version)


def scores_read(app: Flask) -> Read:
    return http_get(app, lambda game: "/scores", lambda body: int(body["version"]))


READS: dict[str, Callable[[Flask], Read]] = {
    "view": view_read,
    "http": http_read,
    "versions": versions_read,
    "scores": scores_read,
}


def timed(read: Read, game: Game) -> float:
    began = time.perf_counter()
    seen = read(game)
    elapsed = time.perf_counter() - began
    if seen != game.version:
        raise RuntimeError(f"read version {seen}, the table is at {game.version}")
    return elapsed


def cold(client: redis.Redis, kind: str, games: tuple[Game, Game], repeats: int) -> Pair:
    """The first read of each table in a fresh service, each right after a move made by the
    writer's service, median over `repeats` fresh services."""
    samples: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeats):
        for game, taken in zip(games, samples, strict=True):
            game.move()
            app = new_app(client)
            read = READS[kind](app)
            app.test_client().get("/health")  # Flask's own first-request work is not the cache's
            taken.append(timed(read, game))
    return statistics.median(samples[0]), statistics.median(samples[1])


def first_scores(client: redis.Redis, games: tuple[Game, Game]) -> Pair:
    """The first `/scores` ever of each table: it folds the whole log, once."""
    read = scores_read(new_app(client))
    first = tuple(timed(read, game) for game in games)
    return first[0], first[1]


def warm(client: redis.Redis, kind: str, games: tuple[Game, Game], reads: int) -> Pair:
    """Mean cost of a read when nothing changed since the last one, short and long.

    The two tables are read in alternating blocks, each by its own reader service, so that a
    drift in the machine's speed hits both figures alike.
    """
    readers = [READS[kind](new_app(client)) for _ in games]
    samples: tuple[list[float], list[float]] = ([], [])
    for read, game in zip(readers, games, strict=True):
        read(game)
    for block in blocks(reads):
        for read, game, taken in zip(readers, games, samples, strict=True):
            taken.extend(timed(read, game) for _ in range(block))
    return statistics.fmean(samples[0]), statistics.fmean(samples[1])


def one_new(
    client: redis.Redis, kind: str, games: tuple[Game, Game], reads: int
) -> tuple[Pair, Pair]:
    """Mean cost of a read when one event is new, and of the move that made it, short and long.

    The move is made by the writer's service, the read by a reader service of its own (as if in
    another gunicorn worker), so the read finds exactly one event it has not folded yet.
    """
    readers = [READS[kind](new_app(client)) for _ in games]
    reading: tuple[list[float], list[float]] = ([], [])
    moving: tuple[list[float], list[float]] = ([], [])
    for read, game in zip(readers, games, strict=True):
        read(game)
    for block in blocks(reads):
        for read, game, read_taken, move_taken in zip(readers, games, reading, moving, strict=True):
            for _ in range(block):
                began = time.perf_counter()
                game.move()
                move_taken.append(time.perf_counter() - began)
                read_taken.append(timed(read, game))
    return (
        (statistics.fmean(reading[0]), statistics.fmean(reading[1])),
        (statistics.fmean(moving[0]), statistics.fmean(moving[1])),
    )


def blocks(total: int, size: int = 50) -> list[int]:
    """`total` split into blocks of `size` (the last one smaller)."""
    return [min(size, total - start) for start in range(0, total, size)]


def main() -> None:
    options = parser(__doc__.splitlines()[0] if __doc__ else "")
    options.add_argument("--long", type=int, default=10_000, help="events of the long table")
    options.add_argument("--short", type=int, default=50, help="events of the short table")
    options.add_argument("--reads", type=int, default=2000, help="timed reads per figure")
    options.add_argument(
        "--new-reads", type=int, default=500, help="timed reads with one new event each"
    )
    options.add_argument("--cold", type=int, default=COLD_REPEATS, help="cold reads per figure")
    args = options.parse_args()
    if args.smoke:
        args.long, args.short, args.reads, args.new_reads, args.cold = 300, 50, 50, 20, 3
    if min(args.long, args.short) <= OPENING_EVENTS:
        options.error(f"a table has at least {OPENING_EVENTS + 1} events")

    with scratch_redis(args.redis_url) as client:
        writer = services(new_app(client))
        began = time.perf_counter()
        short = Game.create(writer, args.short)
        long = Game.create(writer, args.long)
        written = time.perf_counter() - began
        sizes = {"short": short.version, "long": long.version}

        rows: list[list[str]] = []

        def row(
            label: str, unit: float, figures: Pair, target: bool, limit: float = TARGET
        ) -> None:
            a, b = figures
            share = ratio(b, a)
            rows.append(
                [
                    label,
                    f"{a * unit:.1f}",
                    f"{b * unit:.1f}",
                    f"{share:.2f}",
                    f"<= {limit:.1f}" if target else "(info)",
                    verdict(share <= limit) if target else "",
                ]
            )

        games = (short, long)
        firsts = first_scores(client, games)
        colds = {kind: cold(client, kind, games, args.cold) for kind in READS}
        for kind, label in (("view", "view in-process"), ("http", "GET over HTTP")):
            row(f"{label}, warm (µs/read)", 1e6, warm(client, kind, games, args.reads), True)
        moves: list[Pair] = []
        for kind, label in (("view", "view in-process"), ("http", "GET over HTTP")):
            reading, moving = one_new(client, kind, games, args.new_reads)
            moves.append(moving)
            row(f"{label}, 1 new event (µs/read)", 1e6, reading, target=True)
        row(
            "move via service.move (µs/move)",
            1e6,
            (statistics.fmean(m[0] for m in moves), statistics.fmean(m[1] for m in moves)),
            target=False,
        )
        for kind, label in (
            ("view", "COLD seat view in-process"),
            ("http", "COLD GET table over HTTP"),
            ("versions", "COLD GET /versions/{v}"),
            ("scores", "COLD GET /scores"),
        ):
            row(f"{label} (ms)", 1e3, colds[kind], target=True, limit=COLD_TARGET)
        row("first /scores ever, whole log (ms)", 1e3, firsts, target=False)

    print(
        f"Replay cost vs game length: Marathon tables of {sizes['short']} and {sizes['long']} "
        f"events (written in {written:.1f} s), Redis {args.redis_url}"
    )
    print(
        f"warm: mean of {args.reads} reads with nothing new; 1 new event: mean of "
        f"{args.new_reads} reads, each after one move by another service instance (the tables "
        f"grow by those moves); "
        f"COLD: first read in a fresh service (empty cache) after a move by another, from the "
        f"newest snapshot (every {Config().snapshot_every} events), median of {args.cold}; "
        f"moonshot for COLD: <= {COLD_MOONSHOT}"
    )
    print()
    print_table(
        [
            "figure",
            f"short ({sizes['short']} ev)",
            f"long ({sizes['long']} ev)",
            "long/short",
            "target",
            "",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
