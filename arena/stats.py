"""Win rates with confidence intervals, significance against the fair share, and ratings."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

from arena.match import GameRecord

Z_95 = 1.959963984540054
ELO_SCALE = 400 / math.log(10)
"""Bradley-Terry strengths on the Elo scale: 400 points are odds of 10 to 1."""


@dataclass(frozen=True)
class Standing:
    """How one entrant did over its seats in the arena's games."""

    entrant: str
    seats: int
    """Seats it played: games times the seats it had in each."""
    wins: float
    """Its share of the wins, ties split evenly."""
    fair: float
    """The share it would expect if every seat were equally strong."""
    low: float
    high: float
    p_value: float
    """One-sided: the chance of doing at least this well were it no better than fair."""
    rating: float

    @property
    def rate(self) -> float:
        return self.wins / self.seats


def wilson(successes: float, trials: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a success rate."""
    if trials == 0:
        return 0.0, 1.0
    rate = successes / trials
    centre = (rate + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(rate * (1 - rate) / trials + z * z / (4 * trials * trials))
    half /= 1 + z * z / trials
    return max(0.0, centre - half), min(1.0, centre + half)


def p_above(successes: float, trials: int, fair: float, win: float = 1.0) -> float:
    """One-sided p-value of doing at least this well with success chance `fair` per trial,
    each success worth `win` (the share a winner gets).

    Where several seats win and split the win, as in Krass Kariert where two of three do, a
    seat's count of wins, not its sum of shares, is the binomial one: `successes / win` wins
    at a chance of `fair / win` each (2/3 against a fair share of 1/3 and a win worth 1/2).
    Testing the shares as if each were a whole win would overstate their spread. The normal
    approximation to the binomial, with continuity correction: the arena plays hundreds of
    games, and ties make the count fractional, which the exact test cannot take."""
    if trials == 0:
        return 1.0
    chance = min(1.0, fair / win)
    if chance >= 1.0:
        return 1.0
    spread = math.sqrt(trials * chance * (1 - chance))
    z = (successes / win - 0.5 - trials * chance) / spread
    return 0.5 * math.erfc(z / math.sqrt(2))


def bradley_terry(
    outcomes: Iterable[tuple[str, str, float]], iterations: int = 500
) -> dict[str, float]:
    """Ratings (Elo scale, mean 0) fitted to pairwise `(a, b, score of a)` outcomes.

    Minorization-maximization (Hunter, 2004), with one virtual draw of every entrant against
    an average one, so that an entrant that never lost still gets a finite rating."""
    wins: defaultdict[str, float] = defaultdict(float)
    meetings: defaultdict[tuple[str, str], float] = defaultdict(float)
    for a, b, score in outcomes:
        wins[a] += score
        wins[b] += 1 - score
        meetings[(a, b) if a < b else (b, a)] += 1
    names = sorted(wins)
    if not names:
        return {}
    strength = dict.fromkeys(names, 1.0)
    for _ in range(iterations):
        updated = {}
        for name in names:
            denominator = 2 / (strength[name] + 1)  # the virtual draw against strength 1
            for (a, b), count in meetings.items():
                if name in (a, b):
                    other = b if name == a else a
                    denominator += count / (strength[name] + strength[other])
            updated[name] = (wins[name] + 1) / denominator
        mean_log = sum(math.log(value) for value in updated.values()) / len(updated)
        strength = {name: value / math.exp(mean_log) for name, value in updated.items()}
    return {name: ELO_SCALE * math.log(value) for name, value in strength.items()}


def pairwise(records: Iterable[GameRecord]) -> list[tuple[str, str, float]]:
    """Every pair of seats held by different entrants in a game, scored by their win shares."""
    outcomes = []
    for record in records:
        for i, j in combinations(range(len(record.seats)), 2):
            if record.seats[i] != record.seats[j]:
                a, b = record.shares[i], record.shares[j]
                outcomes.append(
                    (record.seats[i], record.seats[j], 1.0 if a > b else 0.5 if a == b else 0.0)
                )
    return outcomes


def standings(records: Sequence[GameRecord]) -> list[Standing]:
    """Every entrant's win share, its 95% interval, p-value against its fair share, and rating,
    strongest first."""
    seats: defaultdict[str, int] = defaultdict(int)
    wins: defaultdict[str, float] = defaultdict(float)
    fair: defaultdict[str, float] = defaultdict(float)
    win: defaultdict[str, float] = defaultdict(float)
    for record in records:
        for entrant, share in zip(record.seats, record.shares, strict=True):
            seats[entrant] += 1
            wins[entrant] += share
            fair[entrant] += 1 / len(record.seats)
            win[entrant] += max(record.shares)
    ratings = bradley_terry(pairwise(records))
    table = []
    for entrant, count in seats.items():
        expected = fair[entrant] / count
        low, high = wilson(wins[entrant], count)
        table.append(
            Standing(
                entrant,
                count,
                wins[entrant],
                expected,
                low,
                high,
                p_above(wins[entrant], count, expected, win[entrant] / count),
                ratings.get(entrant, 0.0),
            )
        )
    return sorted(table, key=lambda standing: -standing.rating)
