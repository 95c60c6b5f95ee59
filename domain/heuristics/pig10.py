"""Pig 10 rules of thumb: take a PIG 10, never overshoot, leave the next player a pile that is
hard to hit, and keep the cards that get you out of trouble.

Every rule reads only the seat's view (its hand, the pile, the counts of cards out of play) and
the legal moves; the cards nobody has shown are counted from the public deck table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import comb
from random import Random

from domain.bots import Turn
from domain.game import Game
from domain.games.pig10 import (
    FROG,
    PIGMAID,
    RULES,
    TARGET,
    PileCard,
    pile_value_after,
    unseen,
)
from domain.rules import JSON

View = Mapping[str, JSON]

KEEP_ORDER = (FROG, PIGMAID, 1, 2, 3, 4, TARGET, 6, 7, 8, 9)
"""Cards from most to least worth keeping: a frog and a pigmaid get you out of any pile, small
cards rarely overshoot, a 10 still wins an empty pile, high cards are the ones that bust."""


def value_after(view: View, move: JSON) -> int:
    """The pile value `move` announces."""
    return pile_value_after(view["pile_value"], move["card"], move["mode"])


def wins_the_pile(view: View, move: JSON) -> bool:
    """Exactly 10 takes every card on the pile: nothing gains more this turn."""
    return value_after(view, move) == TARGET


def busts(view: View, move: JSON) -> bool:
    """Over 10 hands the whole pile to the player before you: avoid it whenever you can."""
    return value_after(view, move) > TARGET


def next_seat(view: View, seat: int) -> int:
    """Who moves after `seat`: the neighbour while there are cards to draw, else the next seat
    that still holds cards."""
    sizes = list(view["hand_sizes"])
    sizes[seat] -= 1
    players = len(sizes)
    for step in range(1, players + 1):
        other = (seat + step) % players
        if view["draw_pile"] or sizes[other]:
            return other
    return seat


def none_among(hand_size: int, hits: int, pool: int) -> float:
    """Chance that a hand of `hand_size` cards drawn from `pool` unseen cards holds none of the
    `hits` among them."""
    return comb(pool - hits, hand_size) / comb(pool, hand_size)


def trap_value(view: View, move: JSON, seat: int, cards: Sequence[int]) -> float:
    """Cards the next player's reply is expected to win for you (minus what it wins for them)
    after `move` leaves a pile below 10. Leave a value whose missing card is scarce, and high
    enough that a hand without a frog, a pigmaid or a matching card must overshoot: its
    overshoot gives the pile to you."""
    following = next_seat(view, seat)
    if following == seat:
        return 0.0
    value, card = value_after(view, move), move["card"]
    hand_size = view["hand_sizes"][following]
    total = sum(cards)
    stake = len(view["pile"]) + 2
    winning = TARGET - value
    hit = 1 - none_among(hand_size, cards[winning], total)
    overshooting = sum(
        cards[other]
        for other in range(winning + 1, TARGET + 1)
        if other not in (card, value) and not (other == PIGMAID and value >= PIGMAID)
    )
    # Forced to bust: every card held overshoots (no winning card, no way out).
    forced = none_among(hand_size, total - overshooting, total)
    return stake * (forced - hit)


def spend_rank(move: JSON) -> int:
    """Play the card least worth keeping (see `KEEP_ORDER`) when the rest is equal."""
    return KEEP_ORDER.index(move["card"])


def choose(turn: Turn, rng: Random) -> JSON:
    """Win the pile if possible, else the safe move with the best trap, else the cheapest bust."""
    view, seat = turn.view, turn.seat
    pile = [PileCard(played["seat"], played["card"]) for played in view["pile"]]
    cards = unseen(view["hand"], pile, view["out_of_play"])

    def preference(move: JSON) -> tuple[bool, bool, float, int, float]:
        safe = not busts(view, move)
        won = wins_the_pile(view, move)
        trap = trap_value(view, move, seat, cards) if safe and not won else 0.0
        return won, safe, trap, spend_rank(move), rng.random()

    return max(turn.moves, key=preference)


GAME = Game(RULES, heuristic=choose)
