"""Wobble rules of thumb: shed cards and points, turn attacks away, aim at whoever nearly went out.

`choose` runs the legal moves through the rules below in order; each keeps the moves it prefers
(or all of them, when it has no preference or would keep none), and a tie is broken at random.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from itertools import chain
from random import Random

from domain.bots import Turn
from domain.game import Game
from domain.games.wobble import (
    CAPTURE,
    CARD,
    CARDS,
    COLOURS,
    DOUBLE,
    INDEX,
    NOT_ME,
    OFFENSIVE,
    RULES,
    SWAP,
    UNLUCKY,
    Wobble,
    deck_counts,
    points,
)
from domain.rules import JSON

Rule = Callable[[Turn, list[JSON]], list[JSON]]

SHEDDING = ("play", "toss", "pass")
# Looked up per card of every hand and move, without the `Card` in between.
COLOURS_OF = {card.code: card.colours for card in CARDS}
SWAP_CODES = frozenset(card.code for card in CARDS if card.group == SWAP)


def choose(turn: Turn, rng: Random) -> JSON:
    """One of `turn.moves`: the first rule of thumb that prefers some moves narrows them down."""
    moves = list(turn.moves)
    for rule in RULES_OF_THUMB:
        if len(moves) == 1:
            break  # a rule keeps some of the moves it is given, so one left is the choice
        kept = rule(turn, moves)
        if kept:
            moves = kept
    return rng.choice(moves)


# -- helpers --------------------------------------------------------------------------------------


def _best(moves: list[JSON], key: Callable[[JSON], float]) -> list[JSON]:
    """The moves with the highest `key`."""
    keys = list(map(key, moves))
    top = max(keys)
    if keys.count(top) == len(keys):
        return moves  # most often none is better: no need to pick them out one by one
    return [move for move, mine in zip(moves, keys, strict=True) if mine == top]


def _best_choice(moves: list[JSON], field: str, key: Callable[[JSON], float]) -> list[JSON]:
    """Among moves that differ only in `field`, those whose choice has the highest `key`."""
    if not any(field in move for move in moves):
        return moves  # most turns offer no such choice; legal moves are distinct
    groups: dict[str, list[JSON]] = {}
    for move in moves:
        rest = {name: value for name, value in move.items() if name != field}
        groups.setdefault(repr(sorted(rest.items())), []).append(move)
    return [
        move
        for group in groups.values()
        for move in (_best(group, key) if field in group[0] else group)
    ]


def _cards(move: JSON) -> list[str]:
    """The cards a move puts down."""
    if "cards" in move:
        cards: list[str] = move["cards"]
        return cards
    return [move["card"]] if "card" in move else []


def _hand(turn: Turn) -> list[str]:
    hand: list[str] = turn.view["hand"]
    return hand


def _held(hand: list[str]) -> Counter[str]:
    """How many cards of `hand` show each colour (a Color Swap shows two)."""
    return Counter(chain.from_iterable(map(COLOURS_OF.__getitem__, hand)))


def _left(held: Counter[str], cards: list[str], colour: str) -> int:
    """How many cards show `colour` in the hand whose colours are `held`, once `cards` (of that
    hand) are put down."""
    return held[colour] - sum(colour in CARD[card].colours for card in cards)


def _closest_to_going_out(view: Mapping[str, JSON], seat: int) -> float:
    """Higher for a seat nearer to ending the round: fewer cards, then fewer minus points."""
    size: int = view["hand_sizes"][seat]
    score: int = view["scores"][seat]
    return -size - score / 100_000


def _unseen(turn: Turn) -> list[int]:
    """Per card (in `CARDS` order), how many copies the seat has not seen: in other hands,
    the draw pile or face down."""
    options = turn.options
    unseen = list(deck_counts(options.get("deck", "standard"), bool(options.get("first_game"))))
    view = turn.view
    for code in [*_hand(turn), *view["discarded"], *([view["top"]] if view["top"] else [])]:
        unseen[INDEX[code]] -= 1
    return unseen


# -- rules of thumb -------------------------------------------------------------------------------


ESCAPES = {NOT_ME: 5, CAPTURE: 4, "pass": 3, "defend": 2, UNLUCKY: 1, DOUBLE: -1}


def turn_the_attack_away(turn: Turn, moves: list[JSON]) -> list[JSON]:
    """Aimed at, never take the hit while a card can send it on: Not Me and Capture hand it to
    others (and shed 70 points), passing it on sheds a card and makes it worse for the next,
    a grey defence only ever serves this. Who is unlucky may hit back, Double only hurts."""
    attack = turn.view["attack"]
    if attack is None or attack["target"] != turn.seat:
        return []

    def escape(move: JSON) -> float:
        if move["type"] in ("jerk", "defend"):
            symbol = CARD[move["card"]].symbol
            return ESCAPES[symbol if symbol in ESCAPES else move["type"]]
        return ESCAPES.get(move["type"], 0)

    return _best(moves, escape)


JERKS = {NOT_ME: 3, DOUBLE: 2, CAPTURE: 1}


def jerk_hardest(turn: Turn, moves: list[JSON]) -> list[JSON]:
    """Throw a Jerk card in on someone else's attack whenever possible: it costs 70 points in
    the hand. Not Me hits everyone else, Double hits the target twice as hard."""
    jerks = [m for m in moves if m["type"] == "jerk"]
    if not jerks:
        return []
    return _best(jerks, lambda m: JERKS[CARD[m["card"]].symbol])


def shed_most_cards(turn: Turn, moves: list[JSON]) -> list[JSON]:
    """Play two identical cards together: a hand two cards smaller, and the action doubled."""
    return _best(moves, _shed)


def _shed(move: JSON) -> int:
    """How many cards `move` sheds: a shedding move always lists its cards (no `_cards` call,
    as this is asked of every move at almost every turn)."""
    return len(move["cards"]) if move["type"] in SHEDDING else 0


def keep_color_swaps(turn: Turn, moves: list[JSON]) -> list[JSON]:
    """Keep a Color Swap for later: it fits two colours (and any Color Swap), so it saves a
    later turn from drawing."""
    return [m for m in moves if SWAP_CODES.isdisjoint(_cards(m))]


def attack_first(turn: Turn, moves: list[JSON]) -> list[JSON]:
    """On a turn, play an offensive card: it sheds 20 points and costs the next player cards,
    points or turns."""
    return [m for m in moves if m["type"] == "play" and CARD[_cards(m)[0]].group == OFFENSIVE]


def shed_most_points(turn: Turn, moves: list[JSON]) -> list[JSON]:
    """Get rid of the most minus points first: high numbers and action cards."""
    return _best(moves, lambda m: points(_cards(m)))


def follow_my_colour(turn: Turn, moves: list[JSON]) -> list[JSON]:
    """Leave the pile in the colour the rest of the hand holds most: it is likelier to still
    fit when the turn comes back."""

    held = _held(_hand(turn))

    def kept(move: JSON) -> float:
        if move["type"] not in SHEDDING:
            return 0
        cards = _cards(move)
        return _left(held, cards, move.get("colour") or CARD[cards[0]].colours[0])

    return _best(moves, kept)


def name_my_colour(turn: Turn, moves: list[JSON]) -> list[JSON]:
    """A Color Swap turns the pile to the colour the hand holds most."""
    if not any("colour" in move for move in moves):
        return moves
    held = _held(_hand(turn))
    return _best_choice(moves, "colour", lambda m: _left(held, _cards(m), m["colour"]))


def take_the_smallest_hand(turn: Turn, moves: list[JSON]) -> list[JSON]:
    """Card Exchange: take the hand of whoever is closest to going out."""
    view = turn.view
    return _best_choice(
        moves, "exchange_with", lambda m: _closest_to_going_out(view, m["exchange_with"])
    )


def aim_at_the_leader(turn: Turn, moves: list[JSON]) -> list[JSON]:
    """You! and Capture send the attack to whoever is closest to going out."""
    view = turn.view
    return _best_choice(moves, "target", lambda m: _closest_to_going_out(view, m["target"]))


def discard_half(turn: Turn, moves: list[JSON]) -> list[JSON]:
    """Half Hand: always put half the hand away; fewer cards, fewer points."""
    return _best_choice(moves, "discard_half", lambda m: m["discard_half"])


def stay_seated(turn: Turn, moves: list[JSON]) -> list[JSON]:
    """A 0 need not move anyone: a new seat brings no sure gain, so keep the known neighbours."""
    return _best_choice(moves, "swap_with", lambda m: m["swap_with"] is None)


def name_what_others_lack(turn: Turn, moves: list[JSON]) -> list[JSON]:
    """Magnet: name the number (then colour) with the fewest copies unseen, hence the fewest
    cards to receive from the other hands; a low number if tied, as it costs fewer points."""
    if not all(m["type"] == "name" for m in moves):
        return []
    unseen = _unseen(turn)

    def copies(move: JSON) -> float:
        if move.get("number") is not None:
            number: int = move["number"]
            found = [INDEX[f"{colour}:{number}"] for colour in COLOURS]
            return -sum(unseen[index] for index in found) - number / 10
        return -sum(
            count for c, count in zip(CARDS, unseen, strict=True) if move["colour"] in c.colours
        )

    return _best(moves, copies)


def swap_greys_for_cards(turn: Turn, moves: list[JSON]) -> list[JSON]:
    """With only grey cards and nothing to play, trade them all in rather than draw one: greys
    never go out on a turn, new cards might."""
    return [m for m in moves if m["type"] == "exchange_greys"]


def never_attempt(turn: Turn, moves: list[JSON]) -> list[JSON]:
    """Take the cards rather than attempt a task: an opponent reports how it went."""
    return [m for m in moves if m["type"] != "attempt"]


def report_failure(turn: Turn, moves: list[JSON]) -> list[JSON]:
    """Reporting on an opponent's task: a failure makes them draw double."""
    return [m for m in moves if m["type"] != "report" or not m["success"]]


RULES_OF_THUMB: Sequence[Rule] = (
    turn_the_attack_away,
    jerk_hardest,
    shed_most_cards,
    keep_color_swaps,
    attack_first,
    shed_most_points,
    follow_my_colour,
    name_my_colour,
    take_the_smallest_hand,
    aim_at_the_leader,
    discard_half,
    stay_seated,
    name_what_others_lack,
    swap_greys_for_cards,
    never_attempt,
    report_failure,
)
"""In order: an earlier rule narrows the moves before a later one looks."""


GAME = Game(
    RULES,
    heuristic=choose,
    races=RULES.race_open,
    # Tables created before rules version 3 play on under version 2, and their logs verify.
    former_rules=(Wobble(rules_version=2),),
)
