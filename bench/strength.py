"""How strong the bots are, and how fast search thinks: issue 8's targets, measured with the arena.

Strength: for every game, `--games` seeded arena games (seats rotated) of search (medium) against
random, heuristic against random, and search against heuristic: one of each where the game allows
two players, else one bot against the other kind in every other seat. The reference is the
fair share (1 / players) measured in the same games. Targets: search and heuristic beat random
in every game at p < 0.01; search beats heuristic at p < 0.01 in at least three games and is not
significantly worse (heuristic better than its fair share at p < 0.01) in any.

Speed: search (medium)'s time per choice (turns with two or more legal moves) in this single
process, over `--speed-games` games against heuristic per game. Target: median <= 250 ms,
p99 <= 1 s.

    .venv/bin/python bench/strength.py [--games 400] [--parallel 2] [--only pig10] [--smoke]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.__main__ import progress_bar, run
from arena.match import Entrant
from arena.report import format_p
from arena.stats import Standing, standings
from bench.common import median, p99, parser, print_table, verdict
from domain.registry import default_registry

SEARCH, HEURISTIC, RANDOM = Entrant("search", "medium"), Entrant("heuristic"), Entrant("random")
MATCHUPS = ((SEARCH, RANDOM), (HEURISTIC, RANDOM), (SEARCH, HEURISTIC))
SIGNIFICANT = 0.01
MEDIAN_MS, P99_MS = 250.0, 1000.0


def lineup(bot: Entrant, others: Entrant, players: int) -> list[Entrant]:
    return [bot, *[others] * (players - 1)]


def standing_of(results: list[Standing], entrant: Entrant) -> Standing:
    return next(standing for standing in results if standing.entrant == str(entrant))


def main() -> None:
    arguments = parser(__doc__.splitlines()[0])
    arguments.add_argument("--games", type=int, default=400)
    arguments.add_argument("--speed-games", type=int, default=6)
    arguments.add_argument("--parallel", type=int, default=2)
    arguments.add_argument("--only", nargs="*", help="game ids, in the order to play them")
    args = arguments.parse_args()
    games, speed_games = (4, 1) if args.smoke else (args.games, args.speed_games)
    registry = default_registry()
    rows, speed_rows = [], []
    beats_heuristic = worse_than_heuristic = 0
    all_beat_random = True
    for game in args.only or registry.ids():
        rules = registry[game]
        players = max(2, rules.info.min_players)
        for bot, other in MATCHUPS:
            records = run(
                game,
                lineup(bot, other, players),
                games,
                parallel=args.parallel,
                seed=f"strength-{game}",
                progress=progress_bar(f"{game} {bot} vs {other}"),
            )
            results = standings(records)
            mine, theirs = standing_of(results, bot), standing_of(results, other)
            won = mine.p_value < SIGNIFICANT
            if other == RANDOM:
                all_beat_random &= won
            else:
                beats_heuristic += won
                worse_than_heuristic += theirs.p_value < SIGNIFICANT
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
        thinking = [
            seconds * 1000
            for record in run(game, lineup(SEARCH, HEURISTIC, players), speed_games, seed="speed")
            for seat, name in enumerate(record.seats)
            if name == str(SEARCH)
            for seconds in record.thinking[seat]
        ]
        fast = median(thinking) <= MEDIAN_MS and p99(thinking) <= P99_MS
        speed_rows.append(
            [
                game,
                str(len(thinking)),
                f"{median(thinking):.0f}",
                f"{p99(thinking):.0f}",
                verdict(fast),
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
        ["game", "search choices", "median ms", "p99 ms", f"<= {MEDIAN_MS:.0f} / {P99_MS:.0f}"],
        speed_rows,
    )
    print()
    print(f"every bot beats random: {verdict(all_beat_random)}")
    print(
        f"search beats heuristic in {beats_heuristic} games (target >= 3): "
        f"{verdict(beats_heuristic >= 3)}"
    )
    print(
        f"heuristic significantly better than search in {worse_than_heuristic} (target 0): "
        f"{verdict(worse_than_heuristic == 0)}"
    )


if __name__ == "__main__":
    main()
