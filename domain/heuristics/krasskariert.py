"""Krass Kariert rules of thumb: shed the cards that only a lead gets rid of, beat when it
shortens the hand, spend DRAW and STOP before a reserve card, never win a trick that draws.

Each rule looks at the seat's hand and legal moves and either picks a move or leaves it to the
next rule; `choose` asks them in order of urgency.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from random import Random

from domain.bots import Turn
from domain.game import Game, SearchTuning
from domain.games.krasskariert import (
    CODE,
    COMBINATION_KINDS,
    JOINED,
    RULES,
    hand_layout,
    joined_windows,
    splits,
)
from domain.rules import JSON


@dataclass(frozen=True, slots=True)
class Spot:
    """What the rules of thumb look at, decoded once from the seat's view."""

    hand: tuple[int, ...]
    drawn: int | None
    """The card drawn and still to insert."""
    moves: Sequence[JSON]
    following: bool
    """Someone led this trick: the seat beats, passes or plays DRAW or STOP."""
    last_to_act: bool
    draw_in_trick: bool

    @classmethod
    def of(cls, turn: Turn) -> Spot:
        view = turn.view
        return cls(
            hand=tuple([CODE[card] for card in view["hand"]]),
            drawn=CODE[view["drawn"]] if "drawn" in view else None,
            moves=turn.moves,
            following=view["phase"] == "follow",
            last_to_act=not view["waiting"],
            draw_in_trick=any(play["kind"] == "draw" for play in view["trick"]),
        )

    def of_type(self, *types: str) -> list[JSON]:
        return [move for move in self.moves if move["type"] in types]


Rule = Callable[[Spot, Random], JSON | None]


def hand_after(spot: Spot, move: JSON) -> tuple[int, ...]:
    """The seat's hand once `move` is made."""
    hand, at = spot.hand, move["at"]
    match move["type"]:
        case "play":
            return hand[:at] + hand[at + move["count"] :]
        case "stop" | "draw":
            return hand[:at] + hand[at + 1 :]
        case "pass":
            return (*hand[:at], CODE[move["card"]], *hand[at:])
    assert spot.drawn is not None
    return (*hand[:at], spot.drawn, *hand[at:])


def combinations_in(hand: tuple[int, ...]) -> int:
    """How many windows of two or three adjacent cards form a combination: ways to beat later."""
    return hand_layout(hand)[1]


@dataclass(frozen=True, slots=True)
class Layout:
    """How a hand lies on either side of each position, so that the shape of the hand a move
    leaves (`Layout.shape`) takes a few steps instead of a pass over the whole new hand.

    A move changes the hand at one place only: it takes out adjacent cards or puts one in.
    The fewest plays of the new hand are those of the cards before that place plus those of
    the cards after it, unless one play joins cards of both sides (and the card put in); its
    combinations are those on each side plus the windows across the place."""

    hand: tuple[int, ...]
    fewest_before: tuple[int, ...]
    """[i]: the fewest plays `hand[:i]` splits into."""
    fewest_after: tuple[int, ...]
    """[i]: the fewest plays `hand[i:]` splits into."""
    joined_before: tuple[int, ...]
    """[i]: the windows of two or three cards inside `hand[:i]` that form a combination."""
    joined_after: tuple[int, ...]
    """[i]: the same inside `hand[i:]`."""
    taken: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    """`without`'s answers so far, by position and count."""

    def shape(self, at: int, end: int, middle: tuple[int, ...]) -> tuple[int, int]:
        """`hand_shape` of `hand[:at] + middle + hand[end:]`."""
        hand, before, after = self.hand, self.fewest_before, self.fewest_after
        plays = before[at] + len(middle) + after[end]
        joined = self.joined_before[at] + self.joined_after[end]
        # Every window of two or three cards across the place: `hand[start:at] + middle +
        # hand[end:stop]`, with a card of each side when nothing is put in.
        spans: tuple[tuple[int, int], ...]
        if middle:
            spans = ((at - 1, end), (at, end + 1), (at - 2, end), (at - 1, end + 1), (at, end + 2))
        else:
            spans = ((at - 1, end + 1), (at - 2, end + 1), (at - 1, end + 2))
        for start, stop in spans:
            if (
                start >= 0
                and stop <= len(hand)
                and hand[start:at] + middle + hand[end:stop] in JOINED
            ):
                joined += 1
                plays = min(plays, before[start] + 1 + after[stop])
        return plays, -joined

    def without(self, at: int, count: int) -> tuple[int, int]:
        """`hand_shape` of `hand` less its `count` cards from `at`. Remembered: the same cards
        make several plays (an X alone is a single of every rank), and the same hands come back
        in a search's paired playouts."""
        found = self.taken.get((at, count))
        if found is None:
            found = self.taken[at, count] = self.shape(at, at + count, ())
        return found


@lru_cache(maxsize=1 << 10)
def layout_of(hand: tuple[int, ...]) -> Layout:
    """The `Layout` of `hand`. Remembered: a search's paired playouts meet the same hands again
    and again, mostly within one choice (a larger cache hardly hits more). 1,024 layouts took
    1.5 MB after 20 of hard's choices; hands of 18 cards with all their shapes taken would take
    some 12 MB."""
    size = len(hand)
    pairs, triples = joined_windows(hand)
    fewest_before, joined_before = splits(size, pairs, triples)
    # The same pass over the windows reversed counts from the hand's other end: its [size - i]
    # is about `hand[i:]`.
    fewest_after, joined_after = splits(size, pairs[::-1], triples[::-1])
    return Layout(
        hand,
        tuple(fewest_before),
        tuple(fewest_after[::-1]),
        tuple(joined_before),
        tuple(joined_after[::-1]),
    )


def hand_shape(hand: tuple[int, ...]) -> tuple[int, int]:
    """How far from empty `hand` is, lowest best: plays it needs at least, then fewer windows
    that form a combination."""
    layout = layout_of(hand)
    return layout.fewest_before[-1], -layout.joined_before[-1]


def by_shape(spot: Spot) -> Callable[[JSON], tuple[int, int]]:
    """Key of an insert or a pass: how far from empty it leaves the hand (`hand_shape`)."""
    layout = layout_of(spot.hand)

    def key(move: JSON) -> tuple[int, int]:
        at = move["at"]
        if move["type"] == "pass":
            return layout.shape(at, at, (CODE[move["card"]],))
        assert spot.drawn is not None
        return layout.shape(at, at, (spot.drawn,))

    return key


def best(moves: Sequence[JSON], key: Callable[[JSON], tuple[int, ...]], rng: Random) -> JSON:
    """One of the `moves` with the lowest `key`, ties broken by `rng`."""
    keys = [key(move) for move in moves]
    lowest = min(keys)
    return rng.choice([move for move, value in zip(moves, keys, strict=True) if value == lowest])


def by_shape_then_strength(spot: Spot) -> Callable[[JSON], tuple[int, ...]]:
    """Key of a play: fewest plays left, then the weakest combination (its kind, then its rank),
    then most combinations."""
    layout = layout_of(spot.hand)

    def key(move: JSON) -> tuple[int, ...]:
        plays, combinations = layout.without(move["at"], move["count"])
        return plays, COMBINATION_KINDS[move["kind"]], move["rank"], combinations

    return key


def fit_the_drawn_card(spot: Spot, rng: Random) -> JSON | None:
    """Insert a drawn card where it leaves the fewest plays and the most combinations: beside a
    card it pairs or runs with, so that it can leave the hand together with it."""
    inserts = spot.of_type("insert")
    return best(inserts, by_shape(spot), rng) if inserts else None


def play_out(spot: Spot, rng: Random) -> JSON | None:
    """Empty the hand when one play can: a seat without hand cards is safe for this hand."""
    if len(spot.hand) > 3:
        return None  # no play takes more than three cards (most hands are longer: a quick no)
    emptying = [move for move in spot.of_type("play", "stop", "draw") if not hand_after(spot, move)]
    return rng.choice(emptying) if emptying else None


def lead_the_weakest(spot: Spot, rng: Random) -> JSON | None:
    """Lead what leaves the fewest plays, the weakest such combination first: a low card can
    only ever leave the hand as a lead, while strong ones stay to beat with when following."""
    if spot.following:
        return None
    if leads := spot.of_type("play"):
        return best(leads, by_shape_then_strength(spot), rng)
    return rng.choice(spot.moves)  # a hand of DRAW and STOP cards only


def dodge_the_draw(spot: Spot, rng: Random) -> JSON | None:
    """Last to act on a trick with DRAW cards in it, do not win it (its winner draws three cards
    per DRAW): add a DRAW card of your own, or take a reserve card, rather than beat."""
    if not (spot.last_to_act and spot.draw_in_trick):
        return None
    if draws := spot.of_type("draw"):
        return rng.choice(draws)
    passes = spot.of_type("pass")
    return best(passes, by_shape(spot), rng) if passes else None


def beat_when_it_shortens(spot: Spot, rng: Random) -> JSON | None:
    """Beat with the play that leaves the fewest plays, the weakest of those, if it leaves fewer
    plays than now: breaking up a combination to beat only puts the cards off."""
    plays = spot.of_type("play")
    if not plays:
        return None
    key = by_shape_then_strength(spot)
    move = best(plays, key, rng)
    return move if key(move)[0] < hand_shape(spot.hand)[0] else None


def special_before_reserve(spot: Spot, rng: Random) -> JSON | None:
    """Rather than take a reserve card, play DRAW (the trick's winner draws) or STOP (win the
    trick and lead), but no STOP onto DRAW cards: either sheds a card where a pass adds one,
    and the reserve cards stay as the last way out when nothing beats."""
    specials = spot.of_type("draw") or ([] if spot.draw_in_trick else spot.of_type("stop"))
    return rng.choice(specials) if specials else None


def take_the_fitting_reserve(spot: Spot, rng: Random) -> JSON | None:
    """Pass with the reserve card and place that leave the fewest plays and most combinations."""
    passes = spot.of_type("pass")
    return best(passes, by_shape(spot), rng) if passes else None


def beat_at_any_cost(spot: Spot, rng: Random) -> JSON | None:
    """With no reserve card left, beat even if it breaks up a combination, or else STOP even
    a trick that draws: a seat that cannot act loses the hand at once."""
    plays = spot.of_type("play")
    if plays:
        return best(plays, by_shape_then_strength(spot), rng)
    stops = spot.of_type("stop")
    return rng.choice(stops) if stops else None


RULES_OF_THUMB: tuple[Rule, ...] = (
    fit_the_drawn_card,
    play_out,
    lead_the_weakest,
    dodge_the_draw,
    beat_when_it_shortens,
    special_before_reserve,
    take_the_fitting_reserve,
    beat_at_any_cost,
)
"""In order of urgency: the first that picks a move decides."""


def choose(turn: Turn, rng: Random) -> JSON:
    """The move of the first rule of thumb that applies to `turn`."""
    spot = Spot.of(turn)
    for rule in RULES_OF_THUMB:
        move = rule(spot, rng)
        if move is not None:
            return move
    raise AssertionError("beat_at_any_cost covers every follow left: a seat always has a move")


SHORTLISTED = 3
"""How many moves of each type search compares: the ones leaving the hand in the best shape."""


def shortlist(turn: Turn, rng: Random) -> list[JSON]:
    """The heuristic's move, then of each type of move (insert, pass, play, DRAW or STOP) the
    few that leave the hand in the best shape: search need not play out inserts that break up
    a pair when one keeps it."""
    spot = Spot.of(turn)
    first = choose(turn, rng)
    ranked = [
        *sorted(spot.of_type("insert"), key=by_shape(spot))[:SHORTLISTED],
        *sorted(spot.of_type("pass"), key=by_shape(spot))[:SHORTLISTED],
        *sorted(spot.of_type("play"), key=by_shape_then_strength(spot))[:SHORTLISTED],
        *spot.of_type("draw")[:1],
        *spot.of_type("stop")[:1],
    ]
    return [first, *(move for move in ranked if move != first)]


GAME = Game(
    RULES,
    heuristic=choose,
    search=SearchTuning(paired=True),
    shortlist=shortlist,
)
