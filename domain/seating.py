"""Seat arithmetic every game shares: who starts, who is next, who won."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cache

from domain.chance import Chance
from domain.rules import FIRST_SEAT, JSON


def choose_first_seat(players: int, options: Mapping[str, JSON], rng: Chance) -> int:
    """The `first_seat` option if the creator named one, else a seat drawn from `rng`."""
    named = options.get(FIRST_SEAT.name)
    return rng.randrange(players) if named is None else int(named)


@cache
def only(seat: int) -> frozenset[int]:
    """The set of `seat` alone, built once per seat: `to_act` answers one at nearly every move."""
    return frozenset((seat,))


def next_seat(after: int, players: int, may_move: Callable[[int], bool]) -> int | None:
    """The first seat clockwise after `after` (ending with `after` itself) that may move."""
    for step in range(1, players + 1):
        seat = (after + step) % players
        if may_move(seat):
            return seat
    return None


def winners_by(scores: Sequence[int], *, highest: bool) -> tuple[int, ...]:
    """Every seat sharing the best score; `highest=False` when fewest points win."""
    best = max(scores) if highest else min(scores)
    return tuple(seat for seat, score in enumerate(scores) if score == best)
