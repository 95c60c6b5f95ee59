"""Bot policies: each chooses a move from what its seat may see, and nothing more."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from random import Random
from typing import Any, Protocol

from domain.rules import JSON, Rules


@dataclass(frozen=True)
class Turn:
    """Everything a bot knows when asked to move: the public rules and setup, its seat's view
    (`rules.view(state, seat)`) and its legal moves. Never the state itself."""

    rules: Rules[Any]
    seat: int
    players: int
    options: Mapping[str, JSON]
    view: Mapping[str, JSON]
    moves: Sequence[JSON]


class Bot(Protocol):
    """A policy for one seat."""

    def choose(self, turn: Turn, rng: Random) -> JSON:
        """One of `turn.moves`; `rng` is the bot's own randomness, not the game's."""
        ...


class RandomBot:
    """Plays a uniformly random legal move."""

    def choose(self, turn: Turn, rng: Random) -> JSON:
        return rng.choice(turn.moves)
