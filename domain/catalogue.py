"""The built-in bots a seat can be given: what each is, which games it plays, at which levels."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from random import Random

from domain.bots import Bot, RandomBot, Turn
from domain.registry import GameRegistry
from domain.rules import JSON
from domain.search import LEVELS, Clock, SearchBot


@dataclass(frozen=True)
class BotInfo:
    """One entry of the catalogue; a bot with `levels` plays at `default_level` unless told."""

    name: str
    description: str
    games: tuple[str, ...]
    levels: tuple[str, ...] = ()
    default_level: str | None = None

    def to_json(self) -> dict[str, JSON]:
        return {
            "name": self.name,
            "description": self.description,
            "games": list(self.games),
            "levels": list(self.levels),
            "default_level": self.default_level,
        }


class UnknownBot(ValueError):
    """No such bot, a level it does not have, or a game it does not play."""


class HeuristicBot:
    """Plays each game of `games` by the rules of thumb it declares (`domain.heuristics`)."""

    def __init__(self, games: GameRegistry) -> None:
        self.games = games

    def choose(self, turn: Turn, rng: Random) -> JSON:
        heuristic = self.games.game(turn.rules.info.id).heuristic
        if heuristic is None:
            raise UnknownBot(f"bot 'heuristic' does not play {turn.rules.info.id}")
        return heuristic(turn, rng)


class BotCatalogue:
    """Bots by name and level."""

    def __init__(self, entries: Iterable[tuple[BotInfo, Mapping[str | None, Bot]]]) -> None:
        self._entries = {info.name: (info, players) for info, players in entries}

    def __iter__(self) -> Iterator[BotInfo]:
        return iter(info for info, _ in self._entries.values())

    def level(self, name: str, level: str | None, game: str) -> str | None:
        """The level bot `name` plays `game` at when asked for `level` (None: its default).

        Raises `UnknownBot` naming what is wrong."""
        if name not in self._entries:
            raise UnknownBot(f"there is no bot {name!r}; known: {sorted(self._entries)}")
        info, _ = self._entries[name]
        if game not in info.games:
            raise UnknownBot(f"bot {name!r} does not play {game}; it plays {list(info.games)}")
        if level is None:
            return info.default_level
        if level not in info.levels:
            known = list(info.levels) or "none"
            raise UnknownBot(f"bot {name!r} has no level {level!r}; its levels: {known}")
        return level

    def bot(self, name: str, level: str | None) -> Bot:
        """The bot to ask for a move; `name` and `level` as resolved by `level`."""
        info, players = self._entries[name]
        return players[level if level is not None else info.default_level]


def default_catalogue(registry: GameRegistry, clock: Clock) -> BotCatalogue:
    """Every built-in bot, playing every registered game it knows; `clock` times search."""
    games = tuple(registry.ids())
    return BotCatalogue(
        [
            (
                BotInfo("random", "Plays a uniformly random legal move.", games),
                {None: RandomBot()},
            ),
            (
                BotInfo(
                    "heuristic",
                    "Plays by rules of thumb a good player uses, written for each game: quick, "
                    "sensible, predictable.",
                    tuple(game.id for game in registry.games() if game.heuristic is not None),
                ),
                {None: HeuristicBot(registry)},
            ),
            (
                BotInfo(
                    "search",
                    "Information-set Monte Carlo tree search: plays out many worlds consistent "
                    "with what its seat can see (never the hidden cards) and picks the move that "
                    "does best across them. Levels differ in how many worlds it tries.",
                    games,
                    levels=tuple(LEVELS),
                    default_level="medium",
                ),
                {level: SearchBot(budget, registry, clock) for level, budget in LEVELS.items()},
            ),
        ]
    )
