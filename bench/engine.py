"""Engine speed: random legal playouts of whole games in-process, beside RLCard's UNO.

Each action is what a server does for one move: list the acting seat's legal moves, pick one,
decide it and reach the state its events lead to (`step`: decide and evolve through the rules
contract). No Redis, no HTTP. The reference is RLCard's UNO environment stepped by its random
agents (install it with `pip install -e '.[bench]'`), measured in slices that alternate with each
game's, so that a busy moment of the machine weighs on both sides of a ratio; each row gives the
min/median/max of the ratios over the repeats. The target is at least the reference's actions
per second (ratio 1.0), the moonshot twice it.

    python bench/engine.py [--game krumme10] [--seconds 1] [--repeats 5] [--smoke]

Timings move with the machine's load; `--callgrind` counts instructions per action instead
(valgrind's callgrind, deterministic, unmoved by other processes): each engine plays whole games
of fixed seeds under valgrind twice, once for about `--actions` actions and once for none, and
the difference divided by the actions is what one action costs, start-up excluded.

    python bench/engine.py --callgrind [--game wobble] [--actions 20000]
"""

from __future__ import annotations

import argparse
import sys
import time
from itertools import count
from pathlib import Path
from random import Random
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    instructions,
    leave_counted,
    median,
    print_table,
    ratio,
    start_counting,
    verdict,
)
from domain.registry import AnyRules, default_registry

TARGET = 1.0
MOONSHOT = 2.0


def playout(rules: AnyRules, seed: int) -> int:
    """One whole game with uniformly random legal moves; returns the number of actions."""
    rng = Random(seed)
    info = rules.info
    players = info.min_players + seed % (info.max_players - info.min_players + 1)
    options = info.resolve_options(players, {})
    state: Any = rules.initial_state(players, options)
    for event in rules.setup(players, options, rng):
        state = rules.evolve(state, event)
    actions = 0
    while rules.result(state) is None:
        seat = rng.choice(sorted(rules.may_act(state)))
        move = rng.choice(rules.legal_moves(state, seat))
        _, state = rules.step(state, seat, move, rng)
        actions += 1
    return actions


def game_rate(rules: AnyRules, seconds: float, first_seed: int = 0) -> tuple[float, int]:
    """Actions per second over whole games played for about `seconds`; and the games played."""
    actions = games = 0
    started = time.perf_counter()
    while games == 0 or time.perf_counter() - started < seconds:
        actions += playout(rules, first_seed + games)
        games += 1
    return actions / (time.perf_counter() - started), games


class Uno:
    """RLCard's UNO stepped by its random agents: the reference engine."""

    def __init__(self) -> None:
        import rlcard  # noqa: PLC0415 (an optional dependency, imported only when asked for)
        from rlcard.agents import RandomAgent  # noqa: PLC0415

        self.env = rlcard.make("uno", config={"seed": 0})
        self.agents = [RandomAgent(num_actions=self.env.num_actions) for _ in range(4)]

    def playout(self) -> int:
        """One whole game by the random agents; returns the number of actions."""
        env, agents = self.env, self.agents
        actions = 0
        state, player = env.reset()
        while not env.is_over():
            state, player = env.step(agents[player].step(state))
            actions += 1
        return actions

    def rate(self, seconds: float) -> float:
        """Actions per second over whole games played for about `seconds`."""
        actions = games = 0
        started = time.perf_counter()
        while games == 0 or time.perf_counter() - started < seconds:
            actions += self.playout()
            games += 1
        return actions / (time.perf_counter() - started)


def reference_engine() -> Uno | None:
    try:
        return Uno()
    except ImportError:
        return None


REFERENCE = "uno"
"""`--play`'s name for the reference engine."""


def play_counted(engine: str, at_least: int) -> int:
    """Whole games of `engine` (a game id or `REFERENCE`) from seed 0 until `at_least` actions
    are played, under callgrind; returns the actions.

    Callgrind counts from the moment the engine is built and has played one game, so a run for 0
    actions costs what one for more costs but the actions (see `instructions_per_action`)."""
    if engine == REFERENCE:
        import numpy  # noqa: PLC0415 (RLCard's random agents draw from numpy's global generator)

        numpy.random.seed(0)
        uno = Uno()
        plays = (uno.playout() for _ in count())
    else:
        rules = default_registry()[engine]
        plays = (playout(rules, seed) for seed in count(-1))  # seed -1: the warming game
    next(plays)
    start_counting()
    actions = 0
    while actions < at_least:
        actions += next(plays)
    return actions


def counted_actions(engine: str, at_least: int) -> tuple[int, int]:
    """The instructions `play_counted(engine, at_least)` executes under callgrind, and the actions
    it played."""
    script = Path(__file__).resolve()
    child = [sys.executable, str(script), "--play", engine, "--actions", str(at_least)]
    executed, printed = instructions(child)
    return executed, int(printed)


def instructions_per_action(engine: str, at_least: int) -> float:
    """Instructions per action of `engine`, start-up excluded (see the module's docstring)."""
    idle, _ = counted_actions(engine, 0)
    busy, actions = counted_actions(engine, at_least)
    return (busy - idle) / actions


def count_instructions(game_ids: list[str], at_least: int) -> None:
    """Print each game's instructions per action beside the reference's."""
    uno = instructions_per_action(REFERENCE, at_least)
    rows = [[REFERENCE, f"{uno / 1000:,.0f}k", "1.00"]]
    for game_id in game_ids:
        cost = instructions_per_action(game_id, at_least)
        rows.append([game_id, f"{cost / 1000:,.0f}k", f"{uno / cost:.2f}"])
    print_table(["engine", "instructions per action", "reference's / ours"], rows)


def main() -> None:
    registry = default_registry()
    parser = argparse.ArgumentParser(description="Engine speed beside RLCard's UNO.")
    parser.add_argument("--game", action="append", choices=registry.ids(), help="default: all")
    parser.add_argument("--seconds", type=float, default=1.0, help="one slice (default 1)")
    parser.add_argument("--repeats", type=int, default=5, help="slices per game (default 5)")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: proves the script runs")
    parser.add_argument(
        "--callgrind", action="store_true", help="count instructions per action under valgrind"
    )
    parser.add_argument(
        "--actions", type=int, default=20_000, help="actions per engine under callgrind"
    )
    parser.add_argument("--play", help=argparse.SUPPRESS)  # the child of --callgrind
    args = parser.parse_args()
    if args.play is not None:
        print(play_counted(args.play, args.actions))
        leave_counted()
    if args.callgrind:
        count_instructions(args.game or registry.ids(), 200 if args.smoke else args.actions)
        return
    seconds, repeats = (0.1, 1) if args.smoke else (args.seconds, args.repeats)
    reference = reference_engine()
    if reference is None and not args.smoke:
        raise SystemExit("RLCard is not installed: pip install -e '.[bench]'")
    rows = []
    for game_id in args.game or registry.ids():
        rates, ratios, games = [], [], 0
        for seed_base in range(repeats):
            uno = reference.rate(seconds) if reference else None
            rate, played = game_rate(registry[game_id], seconds, first_seed=seed_base * 1_000_000)
            rates.append(rate)
            games += played
            if uno is not None:
                ratios.append(ratio(rate, uno))
        if not ratios:
            rows.append([game_id, f"{median(rates):,.0f}", str(games), "-", "-", "-"])
            continue
        rows.append(
            [
                game_id,
                f"{median(rates):,.0f}",
                str(games),
                f"{min(ratios):.2f} / {median(ratios):.2f} / {max(ratios):.2f}",
                verdict(median(ratios) >= TARGET),
                verdict(median(ratios) >= MOONSHOT),
            ]
        )
    print_table(
        [
            "game",
            "actions/s (median)",
            "games",
            "ratio to RLCard UNO min/median/max",
            f"target {TARGET}",
            f"moonshot {MOONSHOT}",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
