"""Engine speed: random legal playouts of whole games in-process, beside RLCard's UNO.

Each action is what a server does for one move: list the acting seat's legal moves, pick one,
decide it and reach the state its events lead to (`step`: decide and evolve through the rules
contract). No Redis, no HTTP. The reference is RLCard's UNO environment stepped by its random
agents (install it with `pip install -e '.[bench]'`), measured in slices that alternate with each
game's, so that a busy moment of the machine weighs on both sides of a ratio; each row gives the
min/median/max of the ratios over the repeats. The target is at least the reference's actions
per second (ratio 1.0), the moonshot twice it.

    python bench/engine.py [--game krumme10] [--seconds 1] [--repeats 5] [--smoke]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from random import Random
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import median, print_table, ratio, verdict
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

    def rate(self, seconds: float) -> float:
        """Actions per second over whole games played for about `seconds`."""
        env, agents = self.env, self.agents
        actions = games = 0
        started = time.perf_counter()
        while games == 0 or time.perf_counter() - started < seconds:
            state, player = env.reset()
            while not env.is_over():
                state, player = env.step(agents[player].step(state))
                actions += 1
            games += 1
        return actions / (time.perf_counter() - started)


def reference_engine() -> Uno | None:
    try:
        return Uno()
    except ImportError:
        return None


def main() -> None:
    registry = default_registry()
    parser = argparse.ArgumentParser(description="Engine speed beside RLCard's UNO.")
    parser.add_argument("--game", action="append", choices=registry.ids(), help="default: all")
    parser.add_argument("--seconds", type=float, default=1.0, help="one slice (default 1)")
    parser.add_argument("--repeats", type=int, default=5, help="slices per game (default 5)")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: proves the script runs")
    args = parser.parse_args()
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
