"""The catalogue of games the service can host."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from domain.games import krasskariert, krumme10, pig10, rollnbump, wobble
from domain.rules import Rules

AnyRules = Rules[Any]


class UnknownGame(KeyError):
    """No game with that id is registered."""


class GameRegistry:
    """Games by id, in the order they were registered."""

    def __init__(self, games: Iterable[AnyRules]) -> None:
        self._games: dict[str, AnyRules] = {}
        for game in games:
            if game.info.id in self._games:
                raise ValueError(f"game {game.info.id!r} registered twice")
            self._games[game.info.id] = game

    def __getitem__(self, game_id: str) -> AnyRules:
        try:
            return self._games[game_id]
        except KeyError:
            raise UnknownGame(game_id) from None

    def __contains__(self, game_id: object) -> bool:
        return game_id in self._games

    def __iter__(self) -> Iterator[AnyRules]:
        return iter(self._games.values())

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


def default_registry() -> GameRegistry:
    """Every game Spieltisch ships."""
    return GameRegistry(
        [pig10.RULES, krumme10.RULES, krasskariert.RULES, wobble.RULES, rollnbump.RULES]
    )
