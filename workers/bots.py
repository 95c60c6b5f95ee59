"""Built-in bot policies: each chooses a move from what its seat may see, and nothing more."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from random import Random
from typing import Protocol

from domain.rules import JSON


class Bot(Protocol):
    """A policy for one seat: it gets the seat's view and legal moves, never the full state."""

    name: str
    description: str

    def choose(self, view: Mapping[str, JSON], moves: Sequence[JSON], rng: Random) -> JSON:
        """One of `moves`; `rng` is the bot's own randomness, not the game's."""
        ...


class RandomBot:
    name = "random"
    description = "plays a uniformly random legal move"

    def choose(self, view: Mapping[str, JSON], moves: Sequence[JSON], rng: Random) -> JSON:
        return rng.choice(moves)


def default_bots() -> dict[str, Bot]:
    """Every built-in bot by name."""
    return {bot.name: bot for bot in (RandomBot(),)}
