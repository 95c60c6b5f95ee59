"""Cards kept as a multiset: how many of each kind, never an order.

A draw pile stored this way holds no future: `decide` picks the drawn card with the rng it is
given, so nothing in the state says which card comes next.
"""

from __future__ import annotations

from collections.abc import Iterable

from domain.chance import Chance


def draw(counts: tuple[int, ...], rng: Chance) -> int:
    """One kind drawn uniformly from the multiset `counts` (each card equally likely)."""
    pick = rng.randrange(sum(counts))
    for kind, count in enumerate(counts):
        if pick < count:
            return kind
        pick -= count
    raise AssertionError("unreachable: pick is below the total count")


def without(counts: tuple[int, ...], kinds: Iterable[int]) -> tuple[int, ...]:
    """`counts` less one card of each of `kinds`."""
    remaining = list(counts)
    for kind in kinds:
        remaining[kind] -= 1
    return tuple(remaining)
