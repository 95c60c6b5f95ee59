"""A game as the service hosts it: its rules and how bots play it, declared in one place.

Each game declares one `Game` in its own files (the module of its heuristic, which already sees
both its rules and its heuristic; a game without a heuristic declares it beside its rules), and
`domain.registry.default_registry` lists the declarations: adding a game adds its files and one
line there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from random import Random
from typing import Any

from domain.bots import Turn
from domain.rules import JSON, Rules

Heuristic = Callable[[Turn, Random], JSON]
"""Rules of thumb for one game: one of `turn.moves`, from the seat's view alone."""
Shortlist = Callable[[Turn, Random], Sequence[JSON]]
"""The moves of `turn` worth a search's playouts, the heuristic's move first."""


@dataclass(frozen=True)
class SearchTuning:
    """How the search bot adjusts its levels to this game."""

    doubt: float = 1.0
    """How many times a level's `confidence` this game's search asks for before it leaves the
    heuristic's move: more where the estimates lie more often at the same budget."""
    paired: bool = False
    """Compare the root's moves by paired playouts (`SearchBot.compare`) rather than grow a
    tree: for games whose dice or deep hands make single playouts too noisy for a tree of a
    few dozen iterations to tell moves apart."""


@dataclass(frozen=True)
class Game:
    """One hostable game: its rules, the heuristic bots play it by (None: the heuristic bot
    does not play it, and search's playouts move at random), its search tuning, the moves
    search compares (None: every legal move) and the planner whose move search starts from
    (None: the heuristic's), and when races are open (None: never)."""

    rules: Rules[Any]
    heuristic: Heuristic | None = None
    search: SearchTuning = field(default_factory=SearchTuning)
    shortlist: Shortlist | None = None
    planner: Heuristic | None = None
    """A slower, stronger policy than the heuristic, from the seat's view alone: search plays
    its move at the root where it would play the heuristic's, and leaves it only for a move its
    playouts show better. Too slow to move in every playout, where the heuristic still does."""
    races: Callable[[Any], bool] | None = None
    """Whether a race is open in a state: seats may act out of turn now (Wobble's toss-ins and
    Jerks), whoever holds the cards to. Public, like `to_act`: the service holds bots back for
    the reaction time while it is, so their pace shows nothing of anyone's hand. None: the game
    has no moves out of turn."""
    former_rules: tuple[Rules[Any], ...] = ()
    """The game's rules at earlier rules versions (each its own `info.rules_version`) that this
    code still decides exactly as they were decided: a table created under one plays on under
    it after a release raises the version, and its log still verifies. A version neither here
    nor current is refused by name."""

    @property
    def id(self) -> str:
        return self.rules.info.id

    def rules_at(self, rules_version: int) -> Rules[Any] | None:
        """The rules at `rules_version`, current or former; None if this code does not decide
        that version."""
        for rules in (self.rules, *self.former_rules):
            if rules.info.rules_version == rules_version:
                return rules
        return None

    def rules_versions(self) -> list[int]:
        """Every rules version this code decides, oldest first."""
        return sorted(rules.info.rules_version for rules in (self.rules, *self.former_rules))
