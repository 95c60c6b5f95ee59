"""The catalogue of games the service can host."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from domain.game import Game
from domain.heuristics import krasskariert, krumme10, pig10, rollnbump, wobble
from domain.rules import Rules

AnyRules = Rules[Any]


class UnknownGame(KeyError):
    """No game with that id is registered."""


class GameRegistry:
    """Games by id, in the order they were registered. `registry[id]` is a game's rules, what
    most callers need; `registry.game(id)` its whole declaration."""

    def __init__(self, games: Iterable[Game]) -> None:
        self._games: dict[str, Game] = {}
        for game in games:
            if game.id in self._games:
                raise ValueError(f"game {game.id!r} registered twice")
            self._games[game.id] = game

    def game(self, game_id: str) -> Game:
        try:
            return self._games[game_id]
        except KeyError:
            raise UnknownGame(game_id) from None

    def __getitem__(self, game_id: str) -> AnyRules:
        return self.game(game_id).rules

    def __contains__(self, game_id: object) -> bool:
        return game_id in self._games

    def __iter__(self) -> Iterator[AnyRules]:
        return iter(game.rules for game in self._games.values())

    def games(self) -> list[Game]:
        return list(self._games.values())

    def ids(self) -> list[str]:
        return list(self._games)

    def upcasts(self) -> list[tuple[str, int, Callable[[Mapping[str, Any]], Mapping[str, Any]]]]:
        """Every schema step of the games' events, by their names in the log ("game.Type").

        A game lists its own steps in an `upcasts` attribute of (type, from version, function);
        a game without one has never changed an event's shape.
        """
        return [
            (f"{game.info.id}.{event_type}", version, step)
            for game in self
            for event_type, version, step in getattr(game, "upcasts", ())
        ]


def default_registry(*extra: Game) -> GameRegistry:
    """Every game Spieltisch ships, one line each, then `extra` (games a deployment or a test
    adds without changing this file)."""
    return GameRegistry(
        [
            pig10.GAME,
            krumme10.GAME,
            krasskariert.GAME,
            wobble.GAME,
            rollnbump.GAME,
            *extra,
        ]
    )
