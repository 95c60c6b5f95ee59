"""How strong the bots are, and how fast search thinks: issue 25's targets, measured with the arena.

Strength: for every game, seeded arena games (seats rotated) of search (medium) against random
and heuristic against random (`--random-games` each), search (medium) against heuristic and
search (hard) against search (medium) (`--games` each; unless given, 400, and 1,000 in the hard
rows of the games where hard's edge is small, `SMALL_EDGES`): one of each where the game allows two
players, else one bot against the other kind in every other seat. The reference is the fair
share (1 / players) measured in the same games. Targets: both bots beat random, medium beats
heuristic and hard beats medium, each at p < 0.01 in every game. The games run in `--parallel`
processes (default: one per CPU); the header names the date and the machine, the footer the
wall time of the whole table.

Speed: search (medium)'s time per choice (turns with two or more legal moves) in this single
process, over `--speed-games` games against heuristic per game. Target: median <= 100 ms,
p99 <= 500 ms. Search (hard)'s time the same way when the hard rows are played; it has no
bound of its own but the table's wall time.

`--untimed` plays the strength rows with search's time limits not applied (the arena's
`--untimed`): each level plays its whole budget of playouts, so a row gives the same games on
any machine, busy or idle. Without it the rows play the bots as the service runs them on this
machine, where hard may stop at its time limit. The speed rows are always timed.

    .venv/bin/python bench/strength.py [--games N] [--random-games 100] [--parallel N]
        [--only pig10 ...] [--rows random heuristic hard] [--keep DIR] [--seed PREFIX]
        [--untimed] [--smoke]
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.__main__ import progress_bar, run
from arena.journal import Journal
from arena.match import Entrant
from arena.report import format_p
from arena.stats import Standing, standings
from bench.common import machine, median, p99, parser, print_table, verdict
from domain.registry import default_registry

SEARCH, HARD = Entrant("search", "medium"), Entrant("search", "hard")
HEURISTIC, RANDOM = Entrant("heuristic"), Entrant("random")
MATCHUPS = ((SEARCH, RANDOM), (HEURISTIC, RANDOM), (SEARCH, HEURISTIC), (HARD, SEARCH))
ROWS = {"random": MATCHUPS[:2], "heuristic": MATCHUPS[2:3], "hard": MATCHUPS[3:]}
SIGNIFICANT = 0.01
GAMES = 400
"""Games a row against anything but random, unless `--games` or `SMALL_EDGES` says otherwise."""
SMALL_EDGES = {"wobble": 1000, "rollnbump": 1000}
"""Games in the hard row of the games where hard wins about 55% against medium: 400 games show
such an edge at p < 0.01 only about half the time (224 wins are needed, some 222 expected),
1,000 about nine times in ten. The README's rows for these two are 1,000 games each."""
MEDIAN_MS, P99_MS = 100.0, 500.0


def lineup(bot: Entrant, others: Entrant, players: int) -> list[Entrant]:
    return [bot, *[others] * (players - 1)]


def journal(folder: Path, game: str, bot: Entrant, other: Entrant) -> Journal:
    folder.mkdir(parents=True, exist_ok=True)
    return Journal(folder / f"{game}-{bot}-vs-{other}.jsonl".replace(":", "-"))


def standing_of(results: list[Standing], entrant: Entrant) -> Standing:
    return next(standing for standing in results if standing.entrant == str(entrant))


def main() -> None:
    arguments = parser(__doc__.splitlines()[0])
    arguments.add_argument(
        "--games",
        type=int,
        help=f"games a row against anything but random (default {GAMES}; the hard rows of "
        f"{', '.join(SMALL_EDGES)}: {', '.join(map(str, SMALL_EDGES.values()))})",
    )
    arguments.add_argument(
        "--random-games",
        type=int,
        default=100,
        help="games per row against random (100 already show both bots far above it)",
    )
    arguments.add_argument("--speed-games", type=int, default=6)
    arguments.add_argument("--parallel", type=int, default=os.cpu_count() or 1)
    arguments.add_argument("--only", nargs="*", help="game ids, in the order to play them")
    arguments.add_argument(
        "--rows", nargs="*", choices=ROWS, default=list(ROWS), help="which matchups to play"
    )
    arguments.add_argument(
        "--keep",
        type=Path,
        help="a folder where each row's games are kept (a file a row) as they end: the same "
        "command with it goes on where a stopped run stopped",
    )
    arguments.add_argument(
        "--seed",
        default="strength",
        help="the prefix of the games' seeds (a row's are PREFIX-GAME): another prefix plays "
        "other games, as a replication of a row needs (keep it in a folder of its own)",
    )
    arguments.add_argument(
        "--untimed",
        action="store_true",
        help="play the strength rows with search's time limits not applied: the same games on "
        "any machine (the speed rows stay timed)",
    )
    args = arguments.parse_args()
    games, random_games, speed_games = (
        (2, 2, 1) if args.smoke else (args.games, args.random_games, args.speed_games)
    )

    def games_of(game: str, bot: Entrant, other: Entrant) -> int:
        if other == RANDOM:
            return random_games
        if games is not None:
            return games
        return SMALL_EDGES.get(game, GAMES) if bot == HARD else GAMES

    registry = default_registry()
    # Hard thinks up to 1 s a move: the smoke run plays only Pig 10, the shortest game.
    only = args.only or (["pig10"] if args.smoke else registry.ids())
    matchups = [matchup for row in args.rows for matchup in ROWS[row]]
    timing = "untimed (whole playout budgets)" if args.untimed else "timed"
    print(f"{machine()}; {args.parallel} processes; strength rows {timing}")
    started = time.monotonic()
    rows, speed_rows = [], []
    beats: dict[tuple[Entrant, Entrant], int] = dict.fromkeys(matchups, 0)
    played = 0
    for game in only:
        rules = registry[game]
        players = max(2, rules.info.min_players)
        for bot, other in matchups:
            records = run(
                game,
                lineup(bot, other, players),
                games_of(game, bot, other),
                parallel=args.parallel,
                seed=f"{args.seed}-{game}",
                progress=progress_bar(f"{game} {bot} vs {other}"),
                journal=None if args.keep is None else journal(args.keep, game, bot, other),
                untimed=args.untimed,
            )
            results = standings(records)
            mine, theirs = standing_of(results, bot), standing_of(results, other)
            won = mine.p_value < SIGNIFICANT
            beats[bot, other] += won
            rows.append(
                [
                    game,
                    f"{bot} vs {other} x{players - 1}",
                    str(len(records)),
                    f"{mine.rate:.1%}",
                    f"{mine.low:.1%}-{mine.high:.1%}",
                    f"{mine.fair:.1%}",
                    format_p(mine.p_value),
                    f"{mine.rating - theirs.rating:+.0f}",
                    verdict(won),
                ]
            )
        played += 1
        for level in (SEARCH, HARD) if "hard" in args.rows else (SEARCH,):
            thinking = [
                seconds * 1000
                for record in run(
                    game, lineup(level, HEURISTIC, players), speed_games, seed="speed"
                )
                for seat, name in enumerate(record.seats)
                if name == str(level)
                for seconds in record.thinking[seat]
            ]
            fast = median(thinking) <= MEDIAN_MS and p99(thinking) <= P99_MS
            speed_rows.append(
                [
                    game,
                    str(level),
                    str(len(thinking)),
                    f"{median(thinking):.0f}",
                    f"{p99(thinking):.0f}",
                    verdict(fast) if level == SEARCH else "no bound",
                ]
            )
    print_table(
        [
            "game",
            "matchup",
            "games",
            "win rate",
            "95% CI",
            "fair share",
            "p",
            "rating gap",
            "p < 0.01",
        ],
        rows,
    )
    print()
    print_table(
        [
            "game",
            "bot",
            "choices",
            "median ms",
            "p99 ms",
            f"<= {MEDIAN_MS:.0f} / {P99_MS:.0f}",
        ],
        speed_rows,
    )
    print()
    for (bot, other), wins in beats.items():
        print(f"{bot} beats {other} in {wins} of {played} games: {verdict(wins == played)}")
    print(f"wall time {(time.monotonic() - started) / 60:.1f} min")


if __name__ == "__main__":
    main()
