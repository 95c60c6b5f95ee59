"""Engine speed: random legal playouts of whole games in-process, beside RLCard's UNO.

Each action is what a server does for one move: list the acting seat's legal moves, pick one,
decide it and evolve the state by the events decided. No Redis, no HTTP. The reference is RLCard's
UNO environment stepped by its random agents in the same run (install it with
`pip install -e '.[bench]'`); the target is at least 0.5 x its actions per second.

    python bench/engine.py [--game krumme10] [--seconds 3] [--smoke]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from random import Random
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import print_table, ratio, verdict
from domain.registry import AnyRules, default_registry

TARGET = 0.5


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
        for event in rules.decide(state, seat, move, rng):
            state = rules.evolve(state, event)
        actions += 1
    return actions


def game_rate(rules: AnyRules, seconds: float) -> tuple[float, int]:
    """Actions per second over whole games played for about `seconds`; and the games played."""
    actions = games = 0
    started = time.perf_counter()
    while games == 0 or time.perf_counter() - started < seconds:
        actions += playout(rules, games)
        games += 1
    return actions / (time.perf_counter() - started), games


def uno_rate(seconds: float) -> float | None:
    """RLCard's UNO stepped by its random agents, actions per second; None if not installed."""
    try:  # an optional dependency, so imported only when asked for
        import rlcard  # noqa: PLC0415
        from rlcard.agents import RandomAgent  # noqa: PLC0415
    except ImportError:
        return None
    env = rlcard.make("uno", config={"seed": 0})
    agents = [RandomAgent(num_actions=env.num_actions) for _ in range(env.num_players)]
    actions = games = 0
    started = time.perf_counter()
    while games == 0 or time.perf_counter() - started < seconds:
        state, player = env.reset()
        while not env.is_over():
            state, player = env.step(agents[player].step(state))
            actions += 1
        games += 1
    return actions / (time.perf_counter() - started)


def main() -> None:
    registry = default_registry()
    parser = argparse.ArgumentParser(description="Engine speed beside RLCard's UNO.")
    parser.add_argument("--game", action="append", choices=registry.ids(), help="default: all")
    parser.add_argument("--seconds", type=float, default=3.0, help="time per game (default 3)")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: proves the script runs")
    args = parser.parse_args()
    seconds = 0.2 if args.smoke else args.seconds
    reference = uno_rate(seconds)
    if reference is None and not args.smoke:
        raise SystemExit("RLCard is not installed: pip install -e '.[bench]'")
    rows = []
    for game_id in args.game or registry.ids():
        rate, games = game_rate(registry[game_id], seconds)
        if reference is None:
            rows.append([game_id, f"{rate:,.0f}", str(games), "-", "-", "-"])
            continue
        share = ratio(rate, reference)
        rows.append(
            [
                game_id,
                f"{rate:,.0f}",
                str(games),
                f"{reference:,.0f}",
                f"{share:.2f}",
                verdict(share >= TARGET),
            ]
        )
    print_table(["game", "actions/s", "games", "RLCard UNO actions/s", "ratio", "target 0.5"], rows)


if __name__ == "__main__":
    main()
