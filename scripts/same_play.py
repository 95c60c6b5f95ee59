"""Check that a game's rules and heuristic play exactly as they did at a git revision.

For making an engine faster without changing a decision (every stored game must replay the same):
the game's rules module and heuristic module are loaded as they were at `--rev` beside the
working tree's, and both play the same seeded games in lockstep, random and heuristic moves
mixed, every player count in turn. At each step everything observable is compared: the result,
`evaluate`, the view of every seat and of a spectator, who may act, every seat's legal moves,
the events of the move, the random generator's state after it, and now and then a `sample` of
the hidden cards and the heuristic's choice (and shortlist). The first difference stops the run
and names the game, step and what differed.

    .venv/bin/python scripts/same_play.py krumme10 [--rev HEAD] [--games 400] [--options '{...}']
        [--players N] [--rules-version V]

`--players` plays every game with N seats (options such as `first_seat` need enough of them);
`--rules-version` plays a former rules version the game still decides (`Game.former_rules`) on
both sides, the revision's and the working tree's.

It prints "identical" and exits 0, or the difference and exits 1.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import subprocess
import sys
import types
from pathlib import Path
from random import Random
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from domain.bots import Turn
from domain.game import Game

ROOT = Path(__file__).resolve().parents[1]


class Differs(AssertionError):
    """The two versions did not play alike."""


def at_revision(revision: str, game: str) -> Game:
    """The `Game` declared by `game`'s modules as they were at `revision`, loaded under names of
    their own so that they sit beside the working tree's."""

    def source(path: str) -> str:
        shown = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{revision}:{path}"],
            capture_output=True,
            text=True,
            check=True,
        )
        return shown.stdout

    rules_name, heuristic_name = f"_old_rules_{game}", f"_old_heuristic_{game}"
    for name, path, text in (
        (rules_name, f"domain/games/{game}.py", source(f"domain/games/{game}.py")),
        (
            heuristic_name,
            f"domain/heuristics/{game}.py",
            # The old heuristic reads the old rules.
            source(f"domain/heuristics/{game}.py").replace(f"domain.games.{game}", rules_name),
        ),
    ):
        module = types.ModuleType(name)
        module.__file__ = path
        sys.modules[name] = module
        exec(compile(text, path, "exec"), module.__dict__)
    declared: Game = sys.modules[heuristic_name].GAME
    return declared


def same(what: str, new: Any, old: Any, where: tuple[int, int]) -> None:
    mine, theirs = (json.dumps(value, sort_keys=True, default=repr) for value in (new, old))
    if mine != theirs:
        shown = f"\n new: {mine[:300]}\n old: {theirs[:300]}"
        raise Differs(f"game {where[0]}, step {where[1]}: {what} differ{shown}")


def same_views(
    what: str, seen: tuple[Game, Any, Game, Any], players: int, where: tuple[int, int]
) -> None:
    """The two states (new game and state, old game and state) as every seat and a spectator
    see them."""
    new, state_new, old, state_old = seen
    for seat in (None, *range(players)):
        same(
            f"{what} seen by {seat}",
            new.rules.view(state_new, seat),
            old.rules.view(state_old, seat),
            where,
        )


def play_alike(
    new: Game, old: Game, game_number: int, options: dict[str, Any], players: int | None = None
) -> int:
    """One game in lockstep, with `players` seats (None: each count in turn); the number of
    steps it took."""
    info = new.rules.info
    if players is None:
        players = info.min_players + game_number % (info.max_players - info.min_players + 1)
    resolved = info.resolve_options(players, options)
    chance_new, chance_old, chooser = Random(game_number), Random(game_number), Random(-game_number)
    set_up_new = new.rules.setup(players, resolved, chance_new)
    set_up_old = old.rules.setup(players, resolved, chance_old)
    same("setup events", set_up_new, set_up_old, (game_number, 0))
    state_new, state_old = (
        new.rules.initial_state(players, resolved),
        old.rules.initial_state(players, resolved),
    )
    for event in set_up_new:
        state_new = new.rules.evolve(state_new, event)
    for event in set_up_old:
        state_old = old.rules.evolve(state_old, event)
    by_heuristic = chooser.random() < 0.5 and new.heuristic is not None
    step = 0
    while True:
        step += 1
        where = (game_number, step)
        result_new, result_old = new.rules.result(state_new), old.rules.result(state_old)
        same(
            "results",
            result_new and result_new.to_json(),
            result_old and result_old.to_json(),
            where,
        )
        same("evaluations", new.rules.evaluate(state_new), old.rules.evaluate(state_old), where)
        same_views("views", (new, state_new, old, state_old), players, where)
        if result_new is not None:
            return step
        acting = sorted(new.rules.may_act(state_new))
        same("seats that may act", acting, sorted(old.rules.may_act(state_old)), where)
        for seat in range(players):
            same(
                f"legal moves of {seat}",
                new.rules.legal_moves(state_new, seat),
                old.rules.legal_moves(state_old, seat),
                where,
            )
        seat = chooser.choice(acting)
        moves = new.rules.legal_moves(state_new, seat)
        view_new, view_old = new.rules.view(state_new, seat), old.rules.view(state_old, seat)
        if step % 7 == 0:
            drawn_new, drawn_old = Random(step), Random(step)
            world_new = new.rules.sample(players, resolved, view_new, seat, drawn_new)
            world_old = old.rules.sample(players, resolved, view_old, seat, drawn_old)
            same_views("samples", (new, world_new, old, world_old), players, where)
            same("generators after sampling", drawn_new.getstate(), drawn_old.getstate(), where)
        move = chooser.choice(moves)
        if by_heuristic and new.heuristic is not None and old.heuristic is not None:
            turn_new = Turn(new.rules, seat, players, resolved, view_new, moves)
            turn_old = Turn(
                old.rules, seat, players, resolved, view_old, old.rules.legal_moves(state_old, seat)
            )
            thought_new, thought_old = Random(step), Random(step)
            chosen = new.heuristic(turn_new, thought_new)
            same("heuristic choices", chosen, old.heuristic(turn_old, thought_old), where)
            same("generators after choosing", thought_new.getstate(), thought_old.getstate(), where)
            if new.shortlist is not None and old.shortlist is not None:
                same(
                    "shortlists",
                    new.shortlist(turn_new, Random(step)),
                    old.shortlist(turn_old, Random(step)),
                    where,
                )
            if chooser.random() < 0.9:
                move = chosen
        events_new, state_new = new.rules.step(state_new, seat, move, chance_new)
        events_old, state_old = old.rules.step(state_old, seat, move, chance_old)
        same("events", events_new, events_old, where)
        same("generators after the move", chance_new.getstate(), chance_old.getstate(), where)


def at_version(game: Game, rules_version: int, parser: argparse.ArgumentParser) -> Game:
    """`game` playing its rules at `rules_version`, with its own heuristic."""
    rules = game.rules_at(rules_version)
    if rules is None:
        parser.error(f"rules version {rules_version} is not decided: {game.rules_versions()}")
    return dataclasses.replace(game, rules=rules)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("game")
    parser.add_argument("--rev", default="HEAD", help="the revision to compare with")
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--options", default="{}", help="the game's options, JSON")
    parser.add_argument("--players", type=int, help="seats in every game (default: each count)")
    parser.add_argument("--rules-version", type=int, help="a former rules version to play")
    args = parser.parse_args(argv)
    new = importlib.import_module(f"domain.heuristics.{args.game}").GAME
    old = at_revision(args.rev, args.game)
    info = new.rules.info
    if args.players is not None and not info.min_players <= args.players <= info.max_players:
        parser.error(f"{args.game} seats {info.min_players} to {info.max_players} players")
    if args.rules_version is not None:
        new, old = (at_version(game, args.rules_version, parser) for game in (new, old))
    options = json.loads(args.options)
    try:
        steps = sum(
            play_alike(new, old, number, options, args.players) for number in range(args.games)
        )
    except Differs as difference:
        print(difference)
        return 1
    print(f"{args.game}: {args.games} games, {steps} steps: identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
