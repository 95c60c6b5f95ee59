"""Cards kept as a multiset: how many of each kind, never an order.

A draw pile stored this way holds no future: `decide` picks the drawn card with the rng it is
given, so nothing in the state says which card comes next.
"""

from __future__ import annotations

from collections.abc import Iterable

from domain.chance import Chance


def draw(counts: tuple[int, ...], rng: Chance, size: int | None = None) -> int:
    """One kind drawn uniformly from the multiset `counts` (each card equally likely); `size`
    is the number of cards in it, where the caller has counted them already."""
    pick = rng.randrange(sum(counts) if size is None else size)
    # The kind whose run of cards, laid out in kind order, covers the pick. A counted index
    # rather than `enumerate`, whose iterator costs more than the short walk.
    kind = 0
    while pick >= counts[kind]:
        pick -= counts[kind]
        kind += 1
    return kind


def without(counts: tuple[int, ...], kinds: Iterable[int]) -> tuple[int, ...]:
    """`counts` less one card of each of `kinds`."""
    remaining = list(counts)
    for kind in kinds:
        remaining[kind] -= 1
    return tuple(remaining)
