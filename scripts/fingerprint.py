"""A fingerprint of how the games play, to show that a change meant to make them cheaper changes
nothing else.

Plays seeded games of every player count through the rules contract and hashes everything the
rules, the heuristics and the planners answer along the way: at every turn each acting seat's
legal moves, every seat's view (and the public one), `evaluate`, the heuristic's, the planner's
and the shortlist's answers for the seat to move, a `sample` and a `conceal` of the state seen
through every seat's view, the events a step gives, each of them as every seat may see it, the
refusal of a move that is not legal, the result and the scores. The moves played are the
heuristic's or random legal ones, so that games reach what either kind of player reaches.

    .venv/bin/python scripts/fingerprint.py [--game wobble ...] [--games 40] [--against REV]

`--against REV` plays the same games with the code of commit REV too (checked out in a temporary
git worktree) and says whether every digest matches. A change to how a game plays, or to the
random numbers its rules or bots draw, changes its digest.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from random import Random
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ILLEGAL = {"no such move": True}


class Digest:
    """A running SHA-256 of labelled JSON values."""

    def __init__(self) -> None:
        self.sha256 = hashlib.sha256()

    def note(self, label: str, value: Any) -> None:
        self.sha256.update(label.encode())
        self.sha256.update(json.dumps(value, sort_keys=True, default=repr).encode())


def fingerprint(game_id: str, games: int) -> dict[str, Any]:
    """The digest of `games` seeded games at each player count of `game_id`, and their turns."""
    game = registry().game(game_id)
    rules, info = game.rules, game.rules.info
    digests: dict[str, Any] = {}
    for players in range(info.min_players, info.max_players + 1):
        digest, turns = Digest(), 0
        for seed in range(games):
            rng = Random(f"{game_id}:{players}:{seed}")
            options = info.resolve_options(players, {})
            state: Any = rules.initial_state(players, options)
            for event in rules.setup(players, options, rng):
                digest.note("setup", event)
                state = rules.evolve(state, event)
            while rules.result(state) is None:
                turns += 1
                state = play_turn(
                    game, players, options, state, rng=rng, salt=f"{seed}:{turns}", digest=digest
                )
            result = rules.result(state)
            digest.note("result", [result.to_json() if result else None, rules.scores(state)])
            digest.note("random", rng.random())
        digests[str(players)] = {"sha256": digest.sha256.hexdigest(), "turns": turns}
    return digests


def play_turn(
    game: Any, players: int, options: Any, state: Any, *, rng: Random, salt: str, digest: Digest
) -> Any:
    """Note everything asked of the rules and the bots at `state`, then play one move."""
    from domain.bots import Turn  # noqa: PLC0415 - the code of the checkout --root names

    rules, note = game.rules, digest.note
    acting = sorted(rules.may_act(state))
    seat = rng.choice(acting)
    note("acting", [acting, sorted(rules.to_act(state)), seat])
    for other in acting:
        note("legal", rules.legal_moves(state, other))
    for watcher in (None, *range(players)):
        note("view", rules.view(state, watcher))
    note("evaluate", rules.evaluate(state))
    moves = rules.legal_moves(state, seat)
    view = rules.view(state, seat)
    turn = Turn(rules, seat, players, options, view, moves)
    for name, policy in (("heuristic", game.heuristic), ("planner", game.planner)):
        if policy is not None:
            note(name, policy(turn, Random(f"{salt}:{name}")))
    if game.shortlist is not None:
        note("shortlist", list(game.shortlist(turn, Random(f"{salt}:shortlist"))))
    sampled = rules.sample(players, options, view, seat, Random(f"{salt}:sample"))
    concealed = rules.conceal(state, seat, Random(f"{salt}:conceal"))
    for world in (sampled, concealed):
        for watcher in range(players):
            note("world", rules.view(world, watcher))
        note("world-legal", rules.legal_moves(world, seat))
        note("world-evaluate", rules.evaluate(world))
    try:
        rules.step(state, seat, ILLEGAL, Random(salt))
        note("illegal accepted", ILLEGAL)
    except Exception as refusal:
        note("refused", [type(refusal).__name__, str(refusal)])
    if game.heuristic is not None and rng.random() < 0.5:
        move = game.heuristic(turn, rng)
    else:
        move = rng.choice(moves)
    events, state = rules.step(state, seat, move, rng)
    for event in events:
        note("event", event)
        for watcher in (None, *range(players)):
            note("redacted", rules.redact(event, watcher))
    return state


def registry() -> Any:
    from domain.registry import default_registry  # noqa: PLC0415 - see play_turn

    return default_registry()


def against(revision: str, argv: list[str]) -> dict[str, Any]:
    """This script's answer for the code of `revision`."""
    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder) / "tree"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(tree), revision],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        try:
            answer = subprocess.run(
                [sys.executable, __file__, "--root", str(tree), "--json", *argv],
                check=True,
                capture_output=True,
                text=True,
            )
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=True
            )
    result: dict[str, Any] = json.loads(answer.stdout)
    return result


def main() -> None:
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments.add_argument("--game", action="append", help="default: every game")
    arguments.add_argument("--games", type=int, default=40, help="games per player count")
    arguments.add_argument("--against", metavar="REV", help="compare with the code of REV")
    arguments.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    arguments.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = arguments.parse_args()
    sys.path.insert(0, str(args.root))
    game_ids = args.game or registry().ids()
    ours = {game_id: fingerprint(game_id, args.games) for game_id in game_ids}
    if args.json:
        print(json.dumps(ours))
        return
    theirs = None
    if args.against:
        passed = [f"--game={game_id}" for game_id in game_ids] + [f"--games={args.games}"]
        theirs = against(args.against, passed)
    same = True
    for game_id, counts in ours.items():
        for players, mine in counts.items():
            line = f"{game_id} {players} players: {mine['turns']} turns, {mine['sha256'][:16]}"
            if theirs is not None:
                match = theirs[game_id][players] == mine
                same = same and match
                line += f"  {args.against}: {'same' if match else 'DIFFERENT'}"
            print(line)
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
