"""`python -m arena pig10 search heuristic`: seeded games between bots, and who is stronger.

Each entrant is a bot of the catalogue, `name` or `name:level`, one per seat. The entrants
rotate through the seats from game to game, so each sits in every seat equally often, and seat 0
starts every game, so each entrant starts equally often too.

`--untimed` lets search play its whole budget of playouts on every choice, however slow or busy
the machine: the same seeds then give the same games anywhere. By default search stops at its
level's time limit, as the service's bots do, so a slow machine plays a weaker hard.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path

from arena.journal import Journal
from arena.match import Entrant, GameRecord, Pairing, play_locally, play_through_service, rotated
from arena.report import chart, table, write_games
from arena.stats import standings
from domain.catalogue import BotCatalogue, default_catalogue
from domain.registry import default_registry
from domain.rules import FIRST_SEAT, JSON
from domain.table import Tables


def stopped_clock() -> float:
    """A clock that never moves: search never reaches its time limit."""
    return 0.0


@functools.cache
def local(untimed: bool = False) -> tuple[Tables, BotCatalogue]:
    """The rules and bots of this process, built once per worker process; `untimed`: search
    plays its whole budget of playouts, its time limits not applied."""
    registry = default_registry()
    return Tables(registry), default_catalogue(
        registry, stopped_clock if untimed else time.perf_counter
    )


def play_here(pairing: Pairing, untimed: bool = False) -> GameRecord:
    return replace(play_locally(pairing, *local(untimed)), untimed=untimed)


def pairings(
    game: str, lineup: Sequence[Entrant], games: int, options: Mapping[str, JSON], seed: str
) -> list[Pairing]:
    """The games to play. Seat 0 starts each of them where the game lets a table name who
    starts (`first_seat`) and `options` do not: with the seats rotated, every entrant then
    starts equally often. A start drawn from each game's seed made it a coin toss per game,
    which in Roll'n Bump, where starting is worth some 7 points of win rate, blurred a row."""
    if FIRST_SEAT in local()[0].registry[game].info.options:
        options = {FIRST_SEAT.name: 0, **options}
    return [
        Pairing(game, index, seats, options, seed)
        for index, seats in enumerate(rotated(lineup, games))
    ]


def run(
    game: str,
    lineup: Sequence[Entrant],
    games: int,
    *,
    options: Mapping[str, JSON] | None = None,
    parallel: int = 1,
    seed: str = "arena",
    service: str | None = None,
    progress: Callable[[int, int], None] = lambda done, total: None,
    journal: Journal | None = None,
    untimed: bool = False,
) -> list[GameRecord]:
    """Play `games` games of `game` between `lineup` (one entrant per seat), in order of index.

    Local games run in `parallel` processes; through a `service`, `parallel` tables at once.
    With a `journal`, the games it holds are not played again and each game played is added
    to it as it ends. `untimed` (local games only): search plays its whole budget of playouts
    on every choice, whatever the machine's speed."""
    if untimed and service is not None:
        raise ValueError("untimed games are local: the service's bots keep their time limits")
    todo = pairings(game, lineup, games, options or {}, seed)
    kept = {} if journal is None else journal.played(todo)
    records = list(kept.values())
    for record in played([p for p in todo if p.index not in kept], parallel, service, untimed):
        if journal is not None:
            journal.add(todo[record.index], record)
        records.append(record)
        progress(len(records), len(todo))
    return sorted(records, key=lambda record: record.index)


def played(
    todo: list[Pairing], parallel: int, service: str | None, untimed: bool
) -> Iterator[GameRecord]:
    if parallel <= 1 and service is None:
        yield from (play_here(pairing, untimed) for pairing in todo)
        return
    executor: Executor
    if service is None:
        executor = ProcessPoolExecutor(parallel)
        futures = [executor.submit(play_here, pairing, untimed) for pairing in todo]
    else:
        executor = ThreadPoolExecutor(parallel)
        futures = [executor.submit(play_through_service, pairing, service) for pairing in todo]
    with executor:
        for future in as_completed(futures):
            yield future.result()


def progress_bar(description: str) -> Callable[[int, int], None]:
    """A progress line on stderr, through tqdm when it is installed."""
    try:
        from tqdm import tqdm  # noqa: PLC0415 - optional, the arena extra
    except ImportError:

        def line(done: int, total: int) -> None:
            print(f"\r{description}: {done}/{total} games", end="", file=sys.stderr)
            if done == total:
                print(file=sys.stderr)

        return line
    bar = None

    def advance(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            # A resumed run starts at the games it kept, so the bar's rate counts only new ones;
            # a game takes long enough to redraw the bar at each one.
            bar = tqdm(total=total, initial=done - 1, desc=description, unit="game", mininterval=0)
        bar.update(done - bar.n)
        if done == total:
            bar.close()

    return advance


def arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    catalogue = default_catalogue(default_registry(), time.perf_counter)
    known = ", ".join(
        f"{info.name}" + (f" ({'/'.join(info.levels)})" if info.levels else "")
        for info in catalogue
    )
    parser = argparse.ArgumentParser(
        prog="python -m arena", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("game", choices=default_registry().ids())
    parser.add_argument(
        "entrants", nargs="+", type=Entrant.parse, help=f"one per seat: name or name:level; {known}"
    )
    parser.add_argument("-n", "--games", type=int, default=100, help="games to play (default 100)")
    parser.add_argument("--options", type=json.loads, default={}, help="the game's options, JSON")
    parser.add_argument(
        "-j", "--parallel", type=int, default=os.cpu_count() or 1, help="processes (or tables)"
    )
    parser.add_argument("--seed", default="arena", help="the games' seeds derive from it")
    parser.add_argument(
        "--service", help="play through the service at this URL, e.g. http://127.0.0.1:8000"
    )
    parser.add_argument("--games-out", type=Path, help="write every game's result (.csv or .json)")
    parser.add_argument(
        "--keep",
        type=Path,
        help="a file (JSON lines) each game is added to as it ends: run again with it to go on "
        "where a stopped run stopped",
    )
    parser.add_argument("--chart", type=Path, help="write a PNG chart of the ratings")
    parser.add_argument(
        "--untimed",
        action="store_true",
        help="search plays its whole budget of playouts, its time limits not applied: the same "
        "games on any machine, busy or idle (local games only)",
    )
    args = parser.parse_args(argv)
    if args.untimed and args.service:
        parser.error("--untimed plays local games: the service's bots keep their time limits")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = arguments(argv)
    records = run(
        args.game,
        args.entrants,
        args.games,
        options=args.options,
        parallel=args.parallel,
        seed=args.seed,
        service=args.service,
        progress=progress_bar(args.game),
        journal=None if args.keep is None else Journal(args.keep),
        untimed=args.untimed,
    )
    results = standings(records)
    print(table(results))
    if args.games_out:
        write_games(records, args.games_out)
    if args.chart:
        chart(results, f"{args.game}: {len(records)} games", args.chart)


if __name__ == "__main__":
    main()
