"""Krass Kariert (AMIGO, Katja Stremmel): climbing tricks from hands whose order never changes.

Rules as enforced: `docs/rules/krasskariert.md`. Cards are small ints inside the engine
(1..12 numbers, then X, DRAW and STOP) and their wire names outside it (`1`..`12`, `"X"`,
`"DRAW"`, `"STOP"`). Moves name hand positions. As at a real table, where everyone sees a
hand's backs in their order, the positions are public (where a play takes cards from, where a card
goes in) and a reserve card taken into a hand, face up when taken, stays known at its position;
the cards themselves are hidden from everyone but their holder. Cards that are neither in a hand,
a reserve row nor the middle are kept as one multiset (the face-down draw pile and the cards out
of this hand are indistinguishable to everyone), and every draw picks from it with the rng
`decide` is given, so no future card exists in the state before it is drawn.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import chain, product, takewhile
from math import exp
from random import Random
from typing import NamedTuple

from domain import multiset
from domain.chance import Chance
from domain.frozen import replace, with_item
from domain.rules import (
    FIRST_SEAT,
    JSON,
    Changes,
    DecidesBySteps,
    Decision,
    Event,
    Evolvers,
    FoldingDecision,
    GameInfo,
    Result,
    RuleError,
    evolved,
    listed,
)
from domain.seating import choose_first_seat, next_seat, only

X, DRAW, STOP = 13, 14, 15
NUMBERS = range(1, 13)
CODES = range(STOP + 1)
"""Every card code, and 0 (no card)."""
DECK_COUNTS: tuple[int, ...] = (0, *(4,) * 12, 2, 2, 2)
"""How many cards of each code the deck holds: four of each number 1..12, two X, DRAW, STOP."""
NO_CARDS: tuple[int, ...] = (0,) * len(DECK_COUNTS)
HIDDEN = 0
"""A hand position whose card only its holder knows (no card has code 0)."""
DRAW_PILE_SIZE = 6
CARDS_PER_DRAW = 3
RESERVE_SIZE = 2

WIRE: tuple[JSON, ...] = (None, *NUMBERS, "X", "DRAW", "STOP")
CODE: dict[JSON, int] = {name: code for code, name in enumerate(WIRE) if name is not None}
DECK_WIRE: tuple[JSON, ...] = tuple(
    WIRE[card] for card, count in enumerate(DECK_COUNTS) for _ in range(count)
)
"""The deck's cards by their wire names, lowest code first: what a deal shuffles (the same
order as shuffling the codes, whose names the events would carry)."""

SINGLE, RUN2, PAIR, RUN3, TRIPLE, DRAW_PLAY, STOP_PLAY = range(7)
KIND_NAMES = ("single", "2-run", "pair", "3-run", "triple", "draw", "stop")
KINDS = {name: kind for kind, name in enumerate(KIND_NAMES)}
COMBINATION_KINDS = {name: kind for kind, name in enumerate(KIND_NAMES[: TRIPLE + 1])}

LAST_WITH_CARDS, CANNOT_BEAT = "last-with-cards", "cannot-beat"

INFO = GameInfo(
    id="krasskariert",
    title="Krass Kariert",
    min_players=3,
    max_players=5,
    options=(FIRST_SEAT,),
    score_range=(0, 3),
    summary="Beat the combination in the middle with adjacent cards of a hand you may never "
    "sort, or take a reserve card. The last to hold cards gives up a chip; whoever must give "
    "one up with none left loses.",
)


def hand_size(players: int) -> int:
    return 7 if players == 5 else 10


def starting_chips(players: int) -> int:
    return 2 if players == 5 else 3


def _combinations(window: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """Every (kind, rank) the cards of `window` can be declared as, lowest first."""
    numbers = [card for card in window if card != X]
    size = len(window)
    if size == 1:
        return tuple((SINGLE, rank) for rank in (numbers or NUMBERS))
    if not numbers:
        return ()  # X+X (or X+X+X) holds no number card
    found: list[tuple[int, int]] = []
    run_kind, set_kind = (RUN2, PAIR) if size == 2 else (RUN3, TRIPLE)
    if len(set(numbers)) == len(numbers):
        for top in range(size, 13):
            if all(top - size < number <= top for number in numbers):
                found.append((run_kind, top))
    if len(set(numbers)) == 1:
        found.append((set_kind, numbers[0]))
    return tuple(found)


COMBINATIONS: dict[tuple[int, ...], tuple[tuple[int, int], ...]] = {
    window: _combinations(window)
    for size in (1, 2, 3)
    for window in product(range(1, X + 1), repeat=size)
}
"""Every window of number and X cards, with what it may be played as. A window holding a
DRAW or STOP card is absent: those cards are only ever played alone."""


def play_number(kind: int, rank: int) -> int:
    """A play's (kind, rank) as one number, ordered as the pairs are (ranks run 0 to 12): cheaper
    to compare and to look a move up by than the pair, which is hashed and compared item by item."""
    return kind * 13 + rank


def _plays_from(cards: tuple[int, ...]) -> tuple[int, ...]:
    """Every play from the first of `cards` (`play_number`), lowest first: its DRAW or STOP card
    alone (rank 0), else the first one, two and three cards as combinations, up to the first DRAW
    or STOP card."""
    if cards[0] in (DRAW, STOP):
        return (play_number(DRAW_PLAY if cards[0] == DRAW else STOP_PLAY, 0),)
    plays: list[int] = []
    for count in range(1, len(cards) + 1):
        combinations = COMBINATIONS.get(cards[:count])
        if combinations is None:
            break
        plays += [play_number(kind, rank) for kind, rank in combinations]
    return tuple(plays)


END = 0
"""In `PLAYS`' windows, a place past a hand's last card (no card has code 0)."""


def _window(first: int, second: int, third: int) -> tuple[int, ...]:
    """The cards of a window of `PLAYS` that lie in the hand: those before its end."""
    return tuple(takewhile(lambda card: card != END, (first, second, third)))


PLAYS: list[list[list[tuple[int, ...]]]] = [
    [
        [_plays_from(_window(first, second, third)) if first != END else () for third in CODES]
        for second in CODES
    ]
    for first in CODES
]
"""`PLAYS[first][second][third]`: for the (up to) three cards from a hand position on (`END`
past the hand's end), every play from that position, lowest first: a window of more cards is
always of a higher kind, and the DRAW and STOP kinds lie above every combination (they may be
played on anything), so the last play says whether any beats the middle. Windows over a DRAW or
STOP card are left out, and so are all longer ones. Nested lists indexed by card rather than a
dict keyed by the window: `hand_moves` reads a position's plays without slicing and hashing a
window, which cost more than the rest of its pass over the hand."""
JOINED: frozenset[tuple[int, ...]] = frozenset(
    window for window, combinations in COMBINATIONS.items() if len(window) > 1 and combinations
)
"""The windows of two or three cards that form a combination: the cards that may leave a hand
in one play. A set lookup, for `joined_windows`, which searches ask about every hand they see."""
CARDS_OF_KIND = (1, 2, 2, 3, 3)
"""How many cards a combination of each kind (SINGLE to TRIPLE) takes from a hand."""


class Play(NamedTuple):
    """Cards put into the middle: a combination, or a DRAW or STOP card (rank 0).

    A named tuple rather than a frozen dataclass, as `Event` is: each play builds one for the
    trick, and a frozen dataclass's `__init__` sets each field by `object.__setattr__`.
    """

    seat: int
    cards: tuple[int, ...]
    kind: int
    rank: int


@dataclass(frozen=True)
class State:
    chips: tuple[int, ...]
    hands: tuple[tuple[int, ...], ...]
    """Each seat's hand in its fixed order."""
    reserves: tuple[tuple[int, ...], ...]
    unseen: tuple[int, ...]
    """Count of each card code in no hand, reserve row or the middle: draw pile and set-aside."""
    draw_pile: int = 0
    hand_number: int = 0
    leader: int | None = None
    turn: int | None = None
    waiting: tuple[int, ...] = ()
    """Seats still to have their turn in this trick after `turn`, in order."""
    trick: tuple[Play, ...] = ()
    trick_winner: int | None = None
    drawn: int | None = None
    """The card the trick winner drew and has still to insert."""
    draws_left: int = 0
    """Cards the trick winner has still to draw after `drawn`."""
    losers: tuple[int, ...] = ()
    out: tuple[int, ...] = NO_CARDS
    """Count of each card code played in an earlier trick of this hand: seen by all, now gone."""
    known: tuple[tuple[int, ...], ...] = ()
    """Per seat, per hand position, what everyone knows lies there: a reserve card taken into
    the hand (it was face up), else `HIDDEN`. Empty: nothing is known of any hand."""

    @property
    def players(self) -> int:
        return len(self.hands)

    def known_in(self, seat: int) -> tuple[int, ...]:
        """What everyone knows of `seat`'s hand, position by position."""
        return self.known[seat] if self.known else (HIDDEN,) * len(self.hands[seat])


def _known_rows(state: State) -> tuple[tuple[int, ...], ...]:
    """What everyone knows of every hand, position by position."""
    return state.known or tuple(state.known_in(seat) for seat in range(state.players))


def _inserted(state: State, seat: int, at: int, card: int) -> tuple[tuple[int, ...], ...]:
    """`state.known` after a card went into `seat`'s hand at `at`, known to all as `card`."""
    rows = _known_rows(state)
    known = rows[seat]
    return with_item(rows, seat, (*known[:at], card, *known[at:]))


def _clockwise_after(leader: int, hands: tuple[tuple[int, ...], ...]) -> tuple[int, ...]:
    """The seats holding cards after `leader`, clockwise: who follows in a trick it leads."""
    after = (*range(leader + 1, len(hands)), *range(leader))
    return tuple([seat for seat in after if hands[seat]])


def beat_floor(state: State) -> int:
    """The `play_number` of the highest combination in the middle, which a play must exceed; -1
    (below every play) if nothing lies there. A number rather than `to_beat`'s pair: cheaper to
    compare and to remember `hand_moves` by.

    Each combination beats the one before, so the last one is the highest; DRAW cards do not
    count, so the player after one must beat what lay before it.
    """
    for play in reversed(state.trick):
        kind = play.kind  # read once: a named tuple's field is looked up in its class
        if kind <= TRIPLE:
            # `play_number` written out: beat_floor is asked two or three times a move.
            return kind * 13 + play.rank
    return -1


def to_beat(state: State) -> tuple[int, int] | None:
    """The (kind, rank) of the highest combination in the middle; None if nothing lies there."""
    floor = beat_floor(state)
    return None if floor < 0 else divmod(floor, 13)  # `play_number`'s pair


def plays_to_empty(hand: tuple[int, ...]) -> int:
    """The fewest combinations `hand` splits into as it lies: the plays it needs at least, unless
    playing the cards between two of them brings them together."""
    return hand_layout(hand)[0]


def joined_windows(hand: tuple[int, ...]) -> tuple[list[bool], list[bool]]:
    """Which windows of `hand` form a combination: of two cards from each position, and of
    three."""
    size = len(hand)
    pairs = [hand[at : at + 2] in JOINED for at in range(size - 1)]
    triples = [hand[at : at + 3] in JOINED for at in range(size - 2)]
    return pairs, triples


def splits(size: int, pairs: list[bool], triples: list[bool]) -> tuple[list[int], list[int]]:
    """For each `end` up to `size`: the fewest plays the first `end` cards of a hand split into,
    and how many of their windows form a combination, from `joined_windows`' answer. Only the
    windows matter, so the same pass read from the other end, over the windows reversed, gives
    the same for each end of the hand."""
    fewest = [0] * (size + 1)
    joined = [0] * (size + 1)
    for end in range(1, size + 1):
        best, windows = fewest[end - 1] + 1, joined[end - 1]
        if end >= 2 and pairs[end - 2]:
            windows += 1
            best = min(best, fewest[end - 2] + 1)
        if end >= 3 and triples[end - 3]:
            windows += 1
            best = min(best, fewest[end - 3] + 1)
        fewest[end], joined[end] = best, windows
    return fewest, joined


@lru_cache(maxsize=1 << 16)
def hand_layout(hand: tuple[int, ...]) -> tuple[int, int]:
    """How `hand` lies: the fewest plays it needs (`plays_to_empty`), and how many windows of two
    or three adjacent cards form a combination. Remembered: `evaluate` and the heuristic ask
    about the same hands again and again in a search's playouts."""
    fewest, joined = splits(len(hand), *joined_windows(hand))
    return fewest[-1], joined[-1]


HAND_LOSS_WEIGHTS = (0.70, -0.38, -0.50, -0.97, -0.24, -0.26, -1.64, -0.97, -0.46)
"""What each of these adds to a seat's log-odds of losing the hand: plays left, cards in hand,
reserve cards, DRAW and STOP cards, X cards, leading the trick, leading with one play left,
one play left, two plays left. A conditional logit fitted to who lost about 2 000 hands of the
heuristic bots playing each other, 3 to 5 players."""
SHARPNESS = (0.8, 0.6)
"""Those log-odds are scaled by the first plus the second times the share of the dealt cards
the holders have played: the same gap between hands decides more once they are nearly empty."""


def hand_loss(state: State) -> list[float]:
    """Each seat's chance to be the one who loses the running hand."""
    plays, cards, reserves, specials, jokers, leading, leading_out, one_left, two_left = (
        HAND_LOSS_WEIGHTS
    )
    # Between the events of one move nobody may hold cards: then anyone might lose.
    holders = [seat for seat, hand in enumerate(state.hands) if hand] or range(state.players)
    odds = [0.0] * state.players
    for seat in holders:
        hand = state.hands[seat]
        drawing = state.draws_left + (state.drawn is not None) if seat == state.turn else 0
        left = plays_to_empty(hand) + drawing
        leads = seat == state.turn and not state.trick
        odds[seat] = (
            plays * left
            + cards * (len(hand) + drawing)
            + reserves * len(state.reserves[seat])
            + specials * (hand.count(DRAW) + hand.count(STOP))
            + jokers * hand.count(X)
            + leading * leads
            + leading_out * (leads and left == 1)
            + one_left * (left == 1)
            + two_left * (left == 2)
        )
    held = sum(len(state.hands[seat]) for seat in holders)
    played = max(0.0, 1 - held / (len(holders) * hand_size(state.players)))
    sharpness = SHARPNESS[0] + SHARPNESS[1] * played
    weights = [
        exp(sharpness * odds[seat]) if seat in holders else 0.0 for seat in range(state.players)
    ]
    total = sum(weights)
    return [weight / total for weight in weights]


@cache
def game_loss(chips: tuple[int, ...]) -> tuple[float, ...]:
    """Each seat's chance to lose the game from a fresh hand with `chips`, every hand lost by a
    seat drawn uniformly: a seat with fewer chips than the others is likelier to run out."""
    players = len(chips)
    loss = [0.0] * players
    for seat, left in enumerate(chips):
        if left == 0:
            loss[seat] += 1 / players
            continue
        for other, share in enumerate(game_loss(with_item(chips, seat, left - 1))):
            loss[other] += share / players
    return tuple(loss)


def can_act(state: State, seat: int) -> bool:
    """Whether `seat` has anything to do on its turn in this trick: beat, pass or play a card."""
    # The moves, not a search for a first one: the seat's `legal_moves` asks for them next.
    return bool(state.reserves[seat]) or bool(hand_moves(state.hands[seat], beat_floor(state)))


def _card_json(card: int) -> JSON:
    return WIRE[card]


def _cards_json(cards: Iterable[int]) -> list[JSON]:
    return [WIRE[card] for card in cards]


def _codes(cards: list[JSON]) -> tuple[int, ...]:
    return tuple([CODE[card] for card in cards])


# The moves below are built once and shared by every `legal_moves` answer that lists them (the
# rules contract lets it): a follower's passes alone are a dozen or more moves to build anew. They
# are built at import, for every hand size there can be, into tables read by index: a lookup in a
# `functools.cache` costs a call through the cache's wrapper and a hashed key, several per answer.

MAX_HAND = (
    max(map(hand_size, range(INFO.min_players, INFO.max_players + 1)))
    + RESERVE_SIZE
    + CARDS_PER_DRAW * DECK_COUNTS[DRAW]
)
"""The most cards a hand can hold: the largest deal, the seat's reserve cards, and three drawn for
each DRAW card in the deck."""


def _pass_moves(card: int, hand_size: int) -> tuple[JSON, ...]:
    """Taking the reserve `card` into a hand of `hand_size` cards, at each position."""
    return tuple({"type": "pass", "card": WIRE[card], "at": at} for at in range(hand_size + 1))


def _play_moves(at: int) -> tuple[JSON, ...]:
    """Every play from hand position `at`, the DRAW and STOP cards' too, at its `play_number`
    (None at numbers no play has), for `PLAYS`' numbers to pick from. A tuple rather than a dict:
    reading an index costs less than hashing a key."""
    moves: list[JSON] = [None] * (play_number(STOP_PLAY, 0) + 1)
    moves[play_number(DRAW_PLAY, 0)] = {"type": "draw", "at": at}
    moves[play_number(STOP_PLAY, 0)] = {"type": "stop", "at": at}
    for kind, rank in product(range(SINGLE, TRIPLE + 1), NUMBERS):
        moves[play_number(kind, rank)] = {
            "type": "play",
            "at": at,
            "count": CARDS_OF_KIND[kind],
            "kind": KIND_NAMES[kind],
            "rank": rank,
        }
    return tuple(moves)


PASS_MOVES = tuple(tuple(_pass_moves(card, size) for size in range(MAX_HAND + 1)) for card in CODES)
"""`PASS_MOVES[card][hand_size]`: `_pass_moves`."""
INSERT_MOVES = tuple(
    tuple({"type": "insert", "at": at} for at in range(size + 1)) for size in range(MAX_HAND + 1)
)
"""`INSERT_MOVES[hand_size]`: inserting a drawn card into a hand of `hand_size` cards, at each
position."""
PLAY_MOVES = tuple(_play_moves(at) for at in range(MAX_HAND))
"""`PLAY_MOVES[at]`: `_play_moves`."""


@lru_cache(maxsize=1 << 14)
def hand_moves(hand: tuple[int, ...], floor: int) -> tuple[JSON, ...]:
    """The plays of `hand` above the play number `floor` (`beat_floor`), and its DRAW and STOP
    cards, in `legal_moves`' order. Remembered: a search's paired playouts play the same world
    once per move compared, so the same hand meets the same trick again and again."""
    moves: list[JSON] = []
    # The window from each position rolls through `first`, `second` and `third`, read from the
    # hand once each, where slicing a window per position cost a third of the whole pass.
    padded = (*hand, END, END)
    first, second = padded[0], padded[1]
    for at, third in enumerate(padded[2:]):
        plays = PLAYS[first][second][third]
        if plays[-1] > floor:
            by_number = PLAY_MOVES[at]
            for play in plays:
                if play > floor:
                    moves.append(by_number[play])
        first, second = second, third
    return tuple(moves)


PLAY_NUMBERS: dict[int, int] = {
    id(move): number
    for by_number in PLAY_MOVES
    for number, move in enumerate(by_number)
    if move is not None
}
"""The `play_number` of each move of `PLAY_MOVES`, by the move's `id`: `PLAY_MOVES` keeps every
one alive for good, so no other object can have its id. Numbers only (no tuples): the garbage
collector stops looking into a dict of numbers."""


def _offered(state: State, seat: int, move: JSON) -> bool:
    """Whether `move` is itself one of the moves `legal_moves(state, seat)` lists (as
    `rules.listed` asks), told without listing them again (that cost 7% of a random playout's
    action): a play by where `hand_moves` would take it from, the rest by a look in their table."""
    if seat != state.turn:
        return False
    hand = state.hands[seat]
    if state.drawn is not None:
        return listed(move, INSERT_MOVES[len(hand)])
    number = PLAY_NUMBERS.get(id(move))
    if number is not None:  # `PLAY_MOVES[at][number]`: listed as `hand_moves` picks its plays
        at = move["at"]
        return at < len(hand) and number > beat_floor(state) and number in _plays_at(hand, at)
    if state.trick:
        for card in state.reserves[seat]:
            if listed(move, PASS_MOVES[card][len(hand)]):
                return True
    return False


def _plays_at(hand: tuple[int, ...], at: int) -> tuple[int, ...]:
    """`PLAYS` for the window of `hand` from position `at`."""
    after = len(hand) - at
    return PLAYS[hand[at]][hand[at + 1] if after > 1 else END][hand[at + 2] if after > 2 else END]


MOVE_FIELDS: dict[str, frozenset[str]] = {
    "play": frozenset({"type", "at", "count", "kind", "rank"}),
    "stop": frozenset({"type", "at"}),
    "draw": frozenset({"type", "at"}),
    "pass": frozenset({"type", "card", "at"}),
    "insert": frozenset({"type", "at"}),
}
MOVE_SHAPES = (
    '{"type": "play", "at": i, "count": 1..3, "kind": "single"|"2-run"|"pair"|"3-run"|"triple", '
    '"rank": 1..12}, {"type": "stop", "at": i}, {"type": "draw", "at": i}, '
    '{"type": "pass", "card": <reserve card>, "at": i} or {"type": "insert", "at": i}'
)


def _whole_number(value: JSON) -> bool:
    # A plain int (nearly always) answers the first check alone.
    return type(value) is int or (isinstance(value, int) and not isinstance(value, bool))


def _parse(move: JSON) -> tuple[str, Mapping[str, JSON]]:
    """The move's type and fields; raises `RuleError("move-format")` for any other shape."""
    # dict first: a move is nearly always one, and the Mapping ABC's check costs more (a tuple,
    # not `dict | Mapping`, which would build a union at each call; so below for the card).
    if not isinstance(move, (dict, Mapping)) or not isinstance(move.get("type"), str):
        raise RuleError("move-format", f"a Krass Kariert move is one of {MOVE_SHAPES}")
    kind = move["type"]
    fields = MOVE_FIELDS.get(kind)
    if fields is None or move.keys() != fields:
        raise RuleError("move-format", f"a Krass Kariert move is one of {MOVE_SHAPES}")
    if not _whole_number(move["at"]):
        raise RuleError("move-format", "at must be a whole number (a position in your hand)")
    if kind == "play":
        count, combination, rank = move["count"], move["kind"], move["rank"]
        if not _whole_number(count) or not 1 <= count <= 3:
            raise RuleError("move-format", "count must be 1, 2 or 3")
        if not isinstance(combination, str) or combination not in COMBINATION_KINDS:
            raise RuleError("move-format", f"kind must be one of {list(COMBINATION_KINDS)}")
        if not _whole_number(rank) or not 1 <= rank <= 12:
            raise RuleError("move-format", "rank must be a whole number from 1 to 12")
    elif kind == "pass" and (
        isinstance(move["card"], bool) or not isinstance(move["card"], (int, str))
    ):
        raise RuleError("move-format", 'card must be a card: 1..12, "X", "DRAW" or "STOP"')
    return kind, move


def _on_reserve_taken(state: State, data: Mapping[str, JSON]) -> Changes:
    seat, card, at = data["seat"], CODE[data["card"]], data["at"]
    hand, reserve = state.hands[seat], list(state.reserves[seat])
    reserve.remove(card)
    return {
        "hands": with_item(state.hands, seat, (*hand[:at], card, *hand[at:])),
        "reserves": with_item(state.reserves, seat, tuple(reserve)),
        "turn": state.waiting[0] if state.waiting else None,
        "waiting": state.waiting[1:],
        # Reserves lie face up: everyone saw this card go in, and where.
        "known": _inserted(state, seat, at, card),
    }


def _on_trick_won(state: State, data: Mapping[str, JSON]) -> Changes:
    draws = data["draws"]
    return {
        "trick_winner": data["seat"],
        "draws_left": draws,
        "turn": data["seat"] if draws else None,
        "waiting": (),
    }


def _on_card_drawn(state: State, data: Mapping[str, JSON]) -> Changes:
    card = CODE[data["card"]]
    return {
        "drawn": card,
        "draws_left": state.draws_left - 1,
        "draw_pile": state.draw_pile - 1,
        "unseen": multiset.without(state.unseen, [card]),
    }


def _on_card_inserted(state: State, data: Mapping[str, JSON]) -> Changes:
    seat, at = data["seat"], data["at"]
    hand = state.hands[seat]
    card = CODE[data["card"]]
    return {
        "hands": with_item(state.hands, seat, (*hand[:at], card, *hand[at:])),
        "drawn": None,
        "turn": seat if state.draws_left else None,
        # Everyone sees where it goes in; only its holder saw the card.
        "known": _inserted(state, seat, at, HIDDEN),
    }


def _on_trick_started(state: State, data: Mapping[str, JSON]) -> Changes:
    out = list(state.out)
    for play in state.trick:  # loops, not a generator handing `_with_cards` one card at a time
        for card in play.cards:
            out[card] += 1
    return _led_by(state, data["leader"], tuple(out))


def _on_cards_dealt(state: State, data: Mapping[str, JSON]) -> Changes:
    seat, cards = data["seat"], _codes(data["cards"])
    known = _known_rows(state)
    return {
        "hands": with_item(state.hands, seat, cards),
        "reserves": with_item(state.reserves, seat, _codes(data["reserve"])),
        "known": with_item(known, seat, (HIDDEN,) * len(cards)),
    }


def _on_hand_started(state: State, data: Mapping[str, JSON]) -> Changes:
    dealt = chain(*state.hands, *state.reserves)
    return {
        **_led_by(state, data["leader"], NO_CARDS),
        "unseen": multiset.without(DECK_COUNTS, dealt),
        "draw_pile": data["draw_pile"],
        "hand_number": data["hand"],
    }


def _on_hand_lost(state: State, data: Mapping[str, JSON]) -> Changes:
    seats = data["seats"]
    chips = list(state.chips)
    for seat in seats:
        chips[seat] = max(0, chips[seat] - 1)
    return {
        "chips": tuple(chips),
        "losers": tuple(seat for seat in seats if state.chips[seat] == 0),
        "turn": None,
        "waiting": (),
    }


def _led_by(state: State, leader: int, out: tuple[int, ...]) -> Changes:
    """A fresh trick led by `leader`, `out` the cards played before it."""
    return {
        "leader": leader,
        "turn": leader,
        "waiting": _clockwise_after(leader, state.hands),
        "trick": (),
        "trick_winner": None,
        "out": out,
    }


def _on_cards_played(state: State, data: Mapping[str, JSON]) -> Changes:
    seat, at = data["seat"], data["at"]
    cards = tuple([CODE[card] for card in data["cards"]])  # `_codes` written out: a call less
    kind = KINDS[data["kind"]]
    hand = state.hands[seat]
    # `tuple.__new__` with `Play`'s fields in their order: `Play.__new__` is a Python function
    # that calls it so, and calling the class costs more again.
    play = tuple.__new__(Play, (seat, cards, kind, data["rank"] or 0))
    waiting = state.waiting
    turn, waiting = (waiting[0], waiting[1:]) if waiting else (None, ())
    if kind == STOP_PLAY:  # the trick ends at once: nobody after it has a turn
        turn, waiting = None, ()
    rows = _known_rows(state)
    known, end = rows[seat], at + len(cards)
    return {
        "hands": with_item(state.hands, seat, hand[:at] + hand[end:]),
        "trick": (*state.trick, play),
        "turn": turn,
        "waiting": waiting,
        "known": with_item(rows, seat, known[:at] + known[end:]),
    }


EVOLVERS: Evolvers[State] = {
    "CardsPlayed": _on_cards_played,
    "ReserveTaken": _on_reserve_taken,
    "TrickWon": _on_trick_won,
    "CardDrawn": _on_card_drawn,
    "CardInserted": _on_card_inserted,
    "TrickStarted": _on_trick_started,
    "CardsDealt": _on_cards_dealt,
    "HandStarted": _on_hand_started,
    "HandLost": _on_hand_lost,
}
"""What each event changes in a state: `evolve` copies the state with it, and a move's
`FoldingDecision` writes it into the one copy it makes for the move (1.7 events on average)."""


class KrassKariert(DecidesBySteps):
    """Krass Kariert behind the rules contract."""

    info = INFO

    def initial_state(self, players: int, options: Mapping[str, JSON]) -> State:
        return State(
            chips=(starting_chips(players),) * players,
            hands=((),) * players,
            reserves=((),) * players,
            unseen=DECK_COUNTS,
        )

    def setup(self, players: int, options: Mapping[str, JSON], rng: Chance) -> list[Event]:
        return self._deal(players, 1, choose_first_seat(players, options, rng), rng)

    @staticmethod
    def _deal(players: int, number: int, leader: int, rng: Chance) -> list[Event]:
        deck = list(DECK_WIRE)
        rng.shuffle(deck)
        size = hand_size(players)
        reserves = deck[players * size :]
        events = [
            Event(
                "CardsDealt",
                {
                    "seat": seat,
                    "cards": deck[seat * size : (seat + 1) * size],
                    "reserve": reserves[seat * RESERVE_SIZE : (seat + 1) * RESERVE_SIZE],
                },
            )
            for seat in range(players)
        ]
        events.append(
            Event("HandStarted", {"hand": number, "leader": leader, "draw_pile": DRAW_PILE_SIZE})
        )
        return events

    # -- evolve ---------------------------------------------------------------------------------

    def evolve(self, state: State, event: Event) -> State:
        return evolved("krasskariert", EVOLVERS, state, event)

    # -- who acts and how -----------------------------------------------------------------------

    def to_act(self, state: State) -> frozenset[int]:
        return frozenset() if state.turn is None else only(state.turn)

    may_act = to_act  # nobody acts out of turn

    def legal_moves(self, state: State, seat: int) -> list[JSON]:
        if seat != state.turn:
            return []
        hand = state.hands[seat]
        if state.drawn is not None:
            return list(INSERT_MOVES[len(hand)])
        moves = list(hand_moves(hand, beat_floor(state)))
        if state.trick:
            for card in dict.fromkeys(state.reserves[seat]):
                moves += PASS_MOVES[card][len(hand)]
        return moves

    # -- decide ---------------------------------------------------------------------------------

    def step(self, state: State, seat: int, move: JSON, rng: Chance) -> tuple[list[Event], State]:
        if not _offered(state, seat, move):
            self._check(state, seat, move)
        kind, at = move["type"], move["at"]
        log = FoldingDecision(EVOLVERS, state)
        if kind == "insert":
            return self._insert(log, seat, at, rng).outcome()
        if kind == "pass":
            log.add("ReserveTaken", {"seat": seat, "card": move["card"], "at": at})
            return self._after_turn(log, rng).outcome()
        hand = state.hands[seat]
        if kind == "play":
            cards, name, rank = hand[at : at + move["count"]], move["kind"], move["rank"]
        else:  # a DRAW or STOP card, alone
            cards, name, rank = hand[at : at + 1], kind, None
        log.add(
            "CardsPlayed",
            {
                "seat": seat,
                "at": at,
                "cards": [WIRE[card] for card in cards],  # `_cards_json` written out
                "kind": name,
                "rank": rank,
            },
        )
        return self._after_turn(log, rng).outcome()

    def _check(self, state: State, seat: int, move: JSON) -> None:
        """Raises the `RuleError` naming the rule `move` breaks, if it breaks one."""
        kind, fields = _parse(move)
        if seat != state.turn:
            raise RuleError("turn-order", f"seat {seat} is not the seat to move")
        hand = state.hands[seat]
        at = fields["at"]
        if state.drawn is not None:
            if kind != "insert":
                raise RuleError(
                    "insert-drawn-card", "insert the card you drew before doing anything else"
                )
            if not 0 <= at <= len(hand):
                raise RuleError("hand-position", f"insert at a position from 0 to {len(hand)}")
        elif kind == "insert":
            raise RuleError("insert-drawn-card", "you have drawn no card to insert")
        elif kind == "pass":
            self._check_pass(state, seat, fields["card"], at)
        elif not 0 <= at < len(hand):
            raise RuleError("hand-position", f"your hand has positions 0 to {len(hand) - 1}")
        elif kind == "play":
            self._check_combination(state, seat, fields)
        else:
            self._check_special(hand, at, STOP if kind == "stop" else DRAW)

    @staticmethod
    def _check_combination(state: State, seat: int, fields: Mapping[str, JSON]) -> None:
        hand, at, count = state.hands[seat], fields["at"], fields["count"]
        if at + count > len(hand):
            raise RuleError(
                "adjacent-cards", f"{count} cards from position {at} run past your hand's end"
            )
        window = hand[at : at + count]
        declared = (COMBINATION_KINDS[fields["kind"]], fields["rank"])
        combinations = COMBINATIONS.get(window)
        if combinations is None:
            raise RuleError(
                "special-card-alone",
                'a DRAW or STOP card is no combination card: play it alone as {"type": "draw"} '
                'or {"type": "stop"}',
            )
        if count > 1 and window.count(X) == count:
            raise RuleError("x-needs-number", "a combination of X cards needs a number card")
        if declared not in combinations:
            cards = ", ".join(str(WIRE[card]) for card in window)
            raise RuleError(
                "combination",
                f"{cards} cannot be played as a {fields['kind']} of {fields['rank']}",
            )
        lowest = to_beat(state)
        if lowest is not None and declared <= lowest:
            # Only a tie needs the reminder; a lower play is plainly lower.
            tie = " (equal does not beat)" if declared == lowest else ""
            raise RuleError(
                "must-beat",
                f"a {fields['kind']} of {fields['rank']} does not beat the "
                f"{KIND_NAMES[lowest[0]]} of {lowest[1]}{tie}",
            )

    @staticmethod
    def _check_special(hand: tuple[int, ...], at: int, card: int) -> None:
        if hand[at] != card:
            raise RuleError("card-at-position", f"the card at position {at} is no {WIRE[card]}")

    @staticmethod
    def _check_pass(state: State, seat: int, card: JSON, at: int) -> None:
        if not state.trick:
            raise RuleError("leader-must-play", "the leader of a trick plays a combination")
        code = CODE.get(card)
        if code is None or code not in state.reserves[seat]:
            raise RuleError("reserve-card", f"you have no reserve card {card!r}")
        hand = state.hands[seat]
        if not 0 <= at <= len(hand):
            raise RuleError("hand-position", f"insert at a position from 0 to {len(hand)}")

    def _after_turn(self, log: Decision[State], rng: Chance) -> Decision[State]:
        """What follows a turn: the next player's turn, a hand lost by them, or the trick's end."""
        state = log.state
        if state.turn is not None:
            if can_act(state, state.turn):
                return log
            return self._hand_lost(log, [state.turn], CANNOT_BEAT, rng)
        winner, reason = self._trick_winner(state)
        draws = CARDS_PER_DRAW * [play.kind for play in state.trick].count(DRAW_PLAY)
        log.add("TrickWon", {"seat": winner, "reason": reason, "draws": draws})
        if draws:
            return self._drawn(log, winner, rng)
        return self._after_trick(log, rng)

    @staticmethod
    def _trick_winner(state: State) -> tuple[int, str]:
        last = state.trick[-1]
        if last.kind == STOP_PLAY:
            return last.seat, "stop"
        for play in reversed(state.trick):
            if play.kind <= TRIPLE:
                return play.seat, "highest"
        return state.trick[0].seat, "lead"

    @staticmethod
    def _drawn(log: Decision[State], seat: int, rng: Chance) -> Decision[State]:
        card = WIRE[multiset.draw(log.state.unseen, rng)]
        log.add("CardDrawn", {"seat": seat, "card": card})
        return log

    def _insert(self, log: Decision[State], seat: int, at: int, rng: Chance) -> Decision[State]:
        drawn = log.state.drawn
        assert drawn is not None
        log.add("CardInserted", {"seat": seat, "card": WIRE[drawn], "at": at})
        if log.state.draws_left:
            return self._drawn(log, seat, rng)
        return self._after_trick(log, rng)

    def _after_trick(self, log: Decision[State], rng: Chance) -> Decision[State]:
        """After a trick (and its draws): the next trick, or the hand's end for its last holder."""
        state = log.state
        holders = [seat for seat, hand in enumerate(state.hands) if hand]
        if len(holders) > 1:
            log.add("TrickStarted", {"leader": self._next_leader(state)})
            return log
        if holders:
            return self._hand_lost(log, holders, LAST_WITH_CARDS, rng)
        # Nobody holds cards any more: everyone who played out in this trick held cards last, so
        # each gives up a chip ("if several must give one up at once, all of them lose"). The
        # last of them to play out leads the next hand.
        played_out = list(dict.fromkeys(play.seat for play in state.trick))
        return self._hand_lost(log, played_out, LAST_WITH_CARDS, rng)

    @staticmethod
    def _next_leader(state: State) -> int:
        hands, winner = state.hands, state.trick_winner
        assert winner is not None
        if hands[winner]:
            return winner
        for play in reversed(state.trick):
            if play.kind <= TRIPLE and hands[play.seat]:
                return play.seat
        leader = next_seat(winner, state.players, lambda seat: bool(hands[seat]))
        assert leader is not None, "a trick is only led while two seats hold cards"
        return leader

    def _hand_lost(
        self, log: Decision[State], seats: list[int], reason: str, rng: Chance
    ) -> Decision[State]:
        players, number = log.state.players, log.state.hand_number + 1
        log.add("HandLost", {"seats": seats, "reason": reason})
        if not log.state.losers:
            for event in self._deal(players, number, seats[-1], rng):
                log.add(event.type, event.data)
        return log

    # -- what a seat may see --------------------------------------------------------------------

    def view(self, state: State, seat: int | None) -> dict[str, JSON]:
        lowest = to_beat(state)
        view: dict[str, JSON] = {
            "hand_number": state.hand_number,
            "chips": list(state.chips),
            "hand_sizes": [len(hand) for hand in state.hands],
            "reserves": [[WIRE[card] for card in reserve] for reserve in state.reserves],
            "draw_pile": state.draw_pile,
            "phase": self._phase(state),
            "leader": state.leader,
            "turn": state.turn,
            "waiting": list(state.waiting),
            "trick": [
                {
                    "seat": play.seat,
                    "cards": [WIRE[card] for card in play.cards],
                    "kind": KIND_NAMES[play.kind],
                    "rank": play.rank or None,
                }
                for play in state.trick
            ],
            "to_beat": None
            if lowest is None
            else {"kind": KIND_NAMES[lowest[0]], "rank": lowest[1]},
            "trick_winner": state.trick_winner,
            "draws_left": state.draws_left + (state.drawn is not None),
            "losers": list(state.losers),
            "out": list(_out_json(state.out)),
            # WIRE[HIDDEN] is None: an unknown position is shown as None, and a row without a
            # known card (most rows: HIDDEN is 0) is all None.
            "known": [
                [WIRE[card] for card in row] if any(row) else [None] * len(row)
                for row in _known_rows(state)
            ],
        }
        if seat is not None:
            view["hand"] = _cards_json(state.hands[seat])
            if state.drawn is not None and state.turn == seat:
                view["drawn"] = _card_json(state.drawn)
        return view

    @staticmethod
    def _phase(state: State) -> str:
        if state.turn is None:
            # Between two events of one move (a past version can stop there): a trick or hand ends.
            return "over" if state.losers else "resolving"
        if state.drawn is not None:
            return "insert"
        return "follow" if state.trick else "lead"

    def redact(self, event: Event, seat: int | None) -> Event | None:
        data = event.data
        if seat is not None and data.get("seat") == seat:
            return event
        match event.type:
            case "CardsDealt":
                return Event(
                    event.type,
                    {"seat": data["seat"], "count": len(data["cards"]), "reserve": data["reserve"]},
                    event.v,
                )
            case "CardInserted":
                # Everyone sees where the drawn card goes in, not which card it is.
                return Event(event.type, {"seat": data["seat"], "at": data["at"]}, event.v)
            case "CardDrawn":
                return Event(event.type, {"seat": data["seat"]}, event.v)
        return event

    def result(self, state: State) -> Result | None:
        if not state.losers:
            return None
        return Result(
            winners=tuple(seat for seat in range(state.players) if seat not in state.losers),
            scores=state.chips,
            details={"losers": list(state.losers)},
        )

    def scores(self, state: State) -> tuple[int, ...]:
        return state.chips

    def evaluate(self, state: State) -> tuple[float, ...]:
        """Each seat's chance to survive the game, split among the survivors: who loses the
        running hand (by how far each hand is from empty), then the chip race to the end."""
        players = state.players
        result = self.result(state)
        if result is not None:
            return result.shares()
        loss = [0.0] * players
        for seat, chance in enumerate(hand_loss(state)):
            left = state.chips[seat]
            if left == 0:
                loss[seat] += chance
                continue
            chips = with_item(state.chips, seat, left - 1)
            for other, share in enumerate(game_loss(chips)):
                loss[other] += chance * share
        # max: rounding may lift a certain loss a hair above 1.
        return tuple(max(0.0, 1 - chance) / (players - 1) for chance in loss)

    def conceal(self, state: State, seat: int | None, rng: Random) -> State:
        hidden = [s for s in range(state.players) if s != seat]
        pool = _cards_of(state.unseen)
        # The reserve cards known in a hidden hand stay where they are; the rest is re-drawn.
        for s in hidden:
            known = state.known_in(s)
            pool += [card for card, at in zip(state.hands[s], known, strict=True) if not at]
        others_drawn = state.drawn is not None and state.turn != seat
        if others_drawn:
            assert state.drawn is not None
            pool.append(state.drawn)
        hands, drawn, unseen = _deal_hidden(
            list(state.hands),
            hidden,
            known=_known_rows(state),
            pool=pool,
            draw_one=others_drawn,
            rng=rng,
        )
        return replace(
            state, hands=hands, drawn=drawn if others_drawn else state.drawn, unseen=unseen
        )

    def sample(
        self,
        players: int,
        options: Mapping[str, JSON],
        view: Mapping[str, JSON],
        seat: int,
        rng: Random,
    ) -> State:
        """A state `seat` could be in: the other hands (around the reserve cards they surely
        hold), the drawn card of another seat and the unseen cards drawn from the deck less
        every card the view shows or shows to be out of play."""
        hand = _codes(view["hand"])
        reserves = tuple(_codes(row) for row in view["reserves"])
        trick = tuple(
            Play(
                play["seat"],
                _codes(play["cards"]),
                KIND_NAMES.index(play["kind"]),
                play["rank"] or 0,
            )
            for play in view["trick"]
        )
        known = tuple(
            tuple(HIDDEN if card is None else CODE[card] for card in row) for row in view["known"]
        )
        out = _codes(view["out"])
        inserting = view["phase"] == "insert"
        own_drawn = CODE[view["drawn"]] if "drawn" in view else None
        shown = [*hand, *out, *(card for row in reserves for card in row)]
        shown += [card for play in trick for card in play.cards]
        shown += [card for who, row in enumerate(known) if who != seat for card in row if card]
        if own_drawn is not None:
            shown.append(own_drawn)
        hands, drawn, unseen = _deal_hidden(
            [hand if s == seat else () for s in range(players)],
            [s for s in range(players) if s != seat],
            known=known,
            pool=_cards_of(multiset.without(DECK_COUNTS, shown)),
            draw_one=inserting and own_drawn is None,
            rng=rng,
        )
        return State(
            chips=tuple(view["chips"]),
            hands=hands,
            reserves=reserves,
            unseen=unseen,
            draw_pile=view["draw_pile"],
            hand_number=view["hand_number"],
            leader=view["leader"],
            turn=view["turn"],
            waiting=tuple(view["waiting"]),
            trick=trick,
            trick_winner=view["trick_winner"],
            drawn=own_drawn if own_drawn is not None else drawn,
            draws_left=view["draws_left"] - inserting,
            losers=tuple(view["losers"]),
            out=_counts(out),
            known=known,
        )


def _deal_hidden(
    hands: list[tuple[int, ...]],
    hidden: list[int],
    *,
    known: tuple[tuple[int, ...], ...],
    pool: list[int],
    draw_one: bool,
    rng: Random,
) -> tuple[tuple[tuple[int, ...], ...], int | None, tuple[int, ...]]:
    """`hands` with each `hidden` seat's hand dealt afresh from `pool`, position by position:
    a card everyone knows (`known`) stays, every other position gets a card of `pool`; a
    drawn card if `draw_one`; and the rest of `pool`, unseen."""
    rng.shuffle(pool)
    start = 0
    for seat in hidden:
        hand = []
        for card in known[seat]:
            if card == HIDDEN:
                hand.append(pool[start])
                start += 1
            else:
                hand.append(card)
        hands[seat] = tuple(hand)
    drawn = None
    if draw_one:
        drawn, start = pool[start], start + 1
    return tuple(hands), drawn, _counts(pool[start:])


@lru_cache(maxsize=1 << 12)
def _out_json(out: tuple[int, ...]) -> tuple[JSON, ...]:
    """The wire names of the cards played in earlier tricks of a hand (`State.out`), lowest code
    first. Remembered: a search's views show the same few for a whole trick."""
    return tuple(_cards_json(_cards_of(out)))


def _cards_of(counts: tuple[int, ...]) -> list[int]:
    """The cards of the multiset `counts`, lowest code first."""
    return [card for card, count in enumerate(counts) for _ in range(count)]


def _with_cards(counts: tuple[int, ...], cards: Iterable[int]) -> tuple[int, ...]:
    """`counts` plus one of each of `cards`."""
    more = list(counts)
    for card in cards:
        more[card] += 1
    return tuple(more)


def _counts(cards: Iterable[int]) -> tuple[int, ...]:
    return _with_cards(NO_CARDS, cards)


RULES = KrassKariert()
