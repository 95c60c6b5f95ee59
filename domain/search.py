"""Information-set Monte Carlo tree search over the rules contract, for every game.

Single-observer ISMCTS (Cowling, Powley and Whitehouse, 2012): each iteration plays one
determinization, a full state drawn by the game's `sample` from the seat's view alone, down one
tree shared by all determinizations. A tree node is a sequence of (seat, move) edges, so the same
tree collects what was learnt in every world the seat cannot tell apart; an edge's statistics are
kept for the seat that makes the move, and its availability counts how often it was legal when
its parent was visited, so moves that exist only in some worlds are not favoured for being rare.
Below the tree, a playout runs for `horizon` moves and on to the end of the turn under way, and
the game's `evaluate` scores where it stopped. Playout moves come from the game's heuristic
(mixed with random moves, so that a playout does not always take the same path): a playout that
plays like a sensible player says more about a move than one that plays at random.

The heuristic also steers the tree: each node tries the heuristic's move first and widens to
other moves as its visits grow, and the bot leaves the heuristic's move only for one that looks
better by more than the noise of its estimate. So a small budget plays at least as well as the
heuristic, and a larger one finds where the heuristic is wrong. A game may declare a planner,
slower and stronger than its heuristic: its move then takes the heuristic's place at the root.

A game (or a level: `hard`, in every game) may ask instead for paired playouts at the root
(`SearchBot.compare`): no tree, a shortlist of moves played out in the same worlds with the same
seeds, the heuristic's move left only for one whose paired edge exceeds the noise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from random import Random
from typing import Any

from domain.bots import Turn
from domain.game import Game
from domain.registry import GameRegistry
from domain.rules import JSON, Rules

Clock = Callable[[], float]
"""Seconds on a monotonic clock. Passed in by whoever builds the bots: domain/ reads no clock."""

TURN_MOVES = 50
"""The most moves a playout adds past its horizon to finish the turn under way."""


@dataclass(frozen=True)
class Budget:
    """How hard search thinks: `iterations` determinizations, stopping early after `seconds`."""

    iterations: int
    seconds: float
    horizon: int
    """Playout moves below the tree (then to the end of the turn) before `evaluate` judges."""
    exploration: float = 0.7
    """UCB's exploration constant, for rewards in [0, 1]."""
    wander: float = 0.1
    """How often a playout move is random rather than the heuristic's."""
    confidence: float = 1.0
    """How many standard errors better a move must look than the heuristic's to be played."""
    widening: float = 1.0
    """A node with n visits has at most ceil(widening * sqrt(n + 1)) children."""
    paired: bool = False
    """Compare the root's moves by paired playouts in every game, not only where the game's
    tuning asks for them: playouts spent on the root's moves alone tell them apart better than
    a tree spreading them over later moves too, once there are more than a few dozen."""


LEVELS: dict[str, Budget] = {
    "easy": Budget(iterations=16, seconds=0.03, horizon=2),
    "medium": Budget(iterations=48, seconds=0.1, horizon=4),
    "hard": Budget(iterations=576, seconds=1.0, horizon=4, paired=True),
}
"""Hard's edge over medium grows with its playouts (Pig 10, 400 games: 54.2% with 144, 62.7%
with 576), so its time limit is a safety net rather than its budget: at 0.3 s a machine 2.3
times slower than an idle one cut a quarter of hard's Wobble choices and half of its Roll'n
Bump ones, and played a weaker hard than the one measured; 1 s lets such a machine play all
576 playouts (the slowest choice seen there took 0.81 s, planner included)."""


@dataclass(eq=False)
class Node:
    """The statistics of one edge: a move of `seat`, and the tree below it."""

    seat: int
    move: JSON
    visits: int = 0
    reward: float = 0.0
    squares: float = 0.0
    """The sum of the squared rewards, for the spread of the mean."""
    availability: int = 0
    children: dict[tuple[int, str], Node] = field(default_factory=dict)

    def mean(self) -> float:
        return self.reward / self.visits if self.visits else 0.0

    def standard_error(self) -> float:
        if self.visits < 2:
            return math.inf
        variance = max(0.0, self.squares / self.visits - self.mean() ** 2)
        return math.sqrt(variance / (self.visits - 1))

    def ucb(self, exploration: float) -> float:
        return self.mean() + exploration * math.sqrt(math.log(self.availability) / self.visits)


class SearchBot:
    """Chooses the move most often chosen by ISMCTS within `budget`, playing each game of
    `games` by its declared heuristic and search tuning; `clock` times the budget's seconds."""

    def __init__(self, budget: Budget, games: GameRegistry, clock: Clock) -> None:
        self.budget = budget
        self.games = games
        self.clock = clock

    def choose(self, turn: Turn, rng: Random) -> JSON:
        if len(turn.moves) == 1:
            return turn.moves[0]
        if self.budget.paired or self._game(turn).search.paired:
            return self.compare(turn, rng)
        opening = self._opening(turn, rng)
        root = Node(turn.seat, None)
        deadline = self.clock() + self.budget.seconds
        for iteration in range(self.budget.iterations):
            if iteration and self.clock() > deadline:
                break
            state = turn.rules.sample(turn.players, turn.options, turn.view, turn.seat, rng)
            self._iterate(turn, root, opening, state, rng)
        best = max(root.children.values(), key=lambda child: child.visits)
        # The first child is the opening move. Leave it only for a move whose edge over it is
        # larger than the noise of the estimates: a game of dice makes small samples lie.
        first = next(iter(root.children.values()))
        margin = best.mean() - first.mean()
        spread = math.hypot(best.standard_error(), first.standard_error())
        confidence = self.budget.confidence * self._game(turn).search.doubt
        return best.move if margin > confidence * spread else first.move

    def compare(self, turn: Turn, rng: Random) -> JSON:
        """The heuristic's move, unless another beats it in paired playouts.

        Rollout improvement (Tesauro and Galperin, 1996) with sequential halving (Karnin et al.,
        2013) over the game's shortlist of moves (else all of them): every move still in the
        running is played in the same sampled world and followed by a playout from the same
        seed, so the dice and hidden cards that make one playout say little hit every move
        alike and the differences between moves stand out. After each round the worse half of
        the moves drops out (never the heuristic's); the best survivor is played if its paired
        edge over the heuristic's move exceeds the noise, as in the tree."""
        rules, game = turn.rules, self._game(turn)
        if game.shortlist is not None:
            moves = list(game.shortlist(turn, rng))
        else:
            first = self._opening(turn, rng)
            moves = [first, *(move for move in turn.moves if move != first)]
        if len(moves) == 1:
            return moves[0]
        values: list[list[float]] = [[] for _ in moves]
        running = list(range(len(moves)))
        rounds = max(1, math.ceil(math.log2(len(moves))))
        spent, started = 0, self.clock()
        deadline = started + self.budget.seconds
        out_of_time = False
        for round_ in range(rounds):
            allowance = (self.budget.iterations - spent) // (rounds - round_)
            for _ in range(max(1, allowance // len(running))):
                # A world costs a playout per move still running: stop before one that would
                # end past the deadline, at the pace of the playouts so far.
                now = self.clock()
                out_of_time = spent > 0 and now + (now - started) / spent * len(running) > deadline
                if out_of_time:
                    break
                world = rules.sample(turn.players, turn.options, turn.view, turn.seat, rng)
                seed = rng.getrandbits(64)
                for index in running:
                    values[index].append(self._played_out(turn, world, moves[index], seed))
                spent += len(running)
            if out_of_time:
                break
            running.sort(key=lambda index: -sum(values[index]))
            running = sorted({0, *running[: math.ceil(len(running) / 2)]})
        best = max(running, key=lambda index: sum(values[index]))
        edges = [mine - theirs for mine, theirs in zip(values[best], values[0], strict=True)]
        confidence = self.budget.confidence * game.search.doubt
        return moves[best] if mean_exceeds(edges, confidence) else moves[0]

    def _played_out(self, turn: Turn, world: Any, move: JSON, seed: int) -> float:
        """What `move` in `world` is worth to the seat after a playout seeded with `seed`."""
        rng = Random(seed)
        state = play(turn.rules, world, turn.seat, move, rng)
        return self._playout(turn, state, turn.seat, rng)[turn.seat]

    def _opening(self, turn: Turn, rng: Random) -> JSON:
        """The move search starts from at the root: the game's planner's, else its heuristic's,
        else a random one."""
        game = self._game(turn)
        policy = game.planner or game.heuristic
        return rng.choice(turn.moves) if policy is None else policy(turn, rng)

    def _iterate(self, turn: Turn, root: Node, opening: JSON, state: Any, rng: Random) -> None:
        rules = turn.rules
        path: list[Node] = [root]
        node = root
        expanded = False
        while not expanded and rules.result(state) is None:
            # The root decides only this seat's move; below it the world picks who acts when
            # several may (a reaction races the next turn), as it is out of this seat's hands.
            if node is root:
                seat, moves, preferred = turn.seat, turn.moves, opening
            else:
                seat = rng.choice(sorted(rules.may_act(state)))
                moves, preferred = rules.legal_moves(state, seat), None
            node, expanded = self._select(
                turn, node, state, seat, moves, preferred=preferred, rng=rng
            )
            path.append(node)
            state = play(rules, state, seat, node.move, rng)
        values = self._playout(turn, state, node.seat, rng)
        for visited in path:
            visited.visits += 1
            value = values[visited.seat]
            visited.reward += value
            visited.squares += value * value

    def _select(
        self,
        turn: Turn,
        node: Node,
        state: Any,
        seat: int,
        moves: Sequence[JSON],
        *,
        preferred: JSON | None,
        rng: Random,
    ) -> tuple[Node, bool]:
        """The child to descend into, and whether it is new.

        Progressive widening: a node tries a new move only while it has fewer children than
        the square root of its visits allows, `preferred` first (None: the heuristic's move),
        so that a small budget is spent on a few sensible moves rather than one look at each
        of fifty. Past that, the available child with the best upper confidence bound."""
        available = []
        untried = {}
        for move in moves:
            key = (seat, repr(move))
            child = node.children.get(key)
            if child is None:
                untried[key] = move
            else:
                child.availability += 1
                available.append(child)
        widest = math.ceil(self.budget.widening * math.sqrt(node.visits + 1))
        if untried and (not available or len(node.children) < widest):
            if preferred is None:
                preferred = self._preferred(turn, state, seat, moves, rng)
            key = (seat, repr(preferred))
            if key not in untried:
                key = rng.choice(list(untried))
            child = node.children[key] = Node(seat, untried[key], availability=1)
            return child, True
        exploration = self.budget.exploration
        return max(available, key=lambda child: child.ucb(exploration)), False

    def _preferred(
        self, turn: Turn, state: Any, seat: int, moves: Sequence[JSON], rng: Random
    ) -> JSON:
        """The move the game's heuristic plays for `seat` in `state`, or a random one."""
        rules = turn.rules
        heuristic = self._game(turn).heuristic
        if heuristic is None or len(moves) == 1:
            return rng.choice(moves)
        view = rules.view(state, seat)
        return heuristic(Turn(rules, seat, turn.players, turn.options, view, moves), rng)

    def _game(self, turn: Turn) -> Game:
        return self.games.game(turn.rules.info.id)

    def _playout(self, turn: Turn, state: Any, mover: int, rng: Random) -> tuple[float, ...]:
        """`horizon` moves and then to the end of the turn under way, so that `evaluate` never
        judges a turn half played (dice rolled but not yet placed); then the game's evaluation.
        `mover` made the last move before the playout."""
        rules = turn.rules
        for played in range(self.budget.horizon + TURN_MOVES):
            if rules.result(state) is not None:
                break
            to_act = sorted(rules.may_act(state))
            if played >= self.budget.horizon and to_act != [mover]:
                break
            mover = rng.choice(to_act)
            moves = rules.legal_moves(state, mover)
            if rng.random() < self.budget.wander:
                move = rng.choice(moves)
            else:
                move = self._preferred(turn, state, mover, moves, rng)
            state = play(rules, state, mover, move, rng)
        return rules.evaluate(state)


def mean_exceeds(samples: Sequence[float], confidence: float) -> bool:
    """Whether the mean of `samples` is above 0 by more than `confidence` standard errors."""
    count = len(samples)
    if count < 2:
        return False
    mean = sum(samples) / count
    variance = sum((sample - mean) ** 2 for sample in samples) / (count - 1)
    return mean > confidence * math.sqrt(variance / count)


def play(rules: Rules[Any], state: Any, seat: int, move: JSON, rng: Random) -> Any:
    _, after = rules.step(state, seat, move, rng)
    return after
