"""Rules of thumb a good player uses, one module per game: pure functions of a seat's view
and legal moves, each module's `choose` registered here by game id."""

from __future__ import annotations

from collections.abc import Callable
from random import Random

from domain.bots import Turn
from domain.heuristics import krasskariert, krumme10, pig10, rollnbump, wobble
from domain.rules import JSON

Heuristic = Callable[[Turn, Random], JSON]

HEURISTICS: dict[str, Heuristic] = {
    "pig10": pig10.choose,
    "krumme10": krumme10.choose,
    "krasskariert": krasskariert.choose,
    "wobble": wobble.choose,
    "rollnbump": rollnbump.choose,
}
