"""Krumme10 (vielspiel, Sixt & Adams): double-sided cards into a shared display, aim for exactly 10.

Rules as enforced: `docs/rules/krumme10.md`. Every card has an up face, public, and a down face
that nobody may see before play reveals it, its owner included: only the server knows it. So every
seat sees what a spectator sees, and the only events that carry a down face (`back`) are the deals,
the draws and the draw pile's top card turned up, which `redact` strips for everyone.

Cards get ids in the order they are dealt and turned up, so an id says nothing about the card. The
draw pile is the multiset of card kinds not yet drawn. Its top card shows its up face to everyone,
as a pile of double-sided cards does: the state holds that one card (`draw_top`), and each time it
is drawn the next one is picked, kind and orientation, with the rng `decide` is given and turned
up (`TopCardShown`). That is the chance of a shuffle with random orientations, without any card
below the top existing in the state before it comes up.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, fields
from fractions import Fraction
from functools import cache, lru_cache
from itertools import chain, combinations
from math import exp, factorial, sqrt
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
    Event,
    Evolvers,
    FoldingDecision,
    GameInfo,
    Option,
    OptionError,
    Result,
    RuleError,
    evolved,
)
from domain.seating import choose_first_seat, only

PINK_FOUR = 6
"""The face code of a pink 4; codes 0..5 are the plain faces (code 4 is a blue 4)."""
VALUE = (0, 1, 2, 3, 4, 5, 4)
"""What each face code counts."""
KINDS: tuple[tuple[int, int], ...] = (
    (0, 1),
    (1, 2),
    (2, 3),
    (3, 4),
    (3, PINK_FOUR),
    (4, 5),
    (PINK_FOUR, 5),
    (5, 0),
)
"""The two faces of each kind of card; a 3/4 or 4/5 card's 4 is blue or pink."""
KIND_OF = {faces: kind for kind, (a, b) in enumerate(KINDS) for faces in ((a, b), (b, a))}
KIND_BY_FACES: tuple[tuple[int | None, ...], ...] = tuple(
    tuple(KIND_OF.get((face, back)) for back in range(len(VALUE))) for face in range(len(VALUE))
)
"""`KIND_BY_FACES[face][back]`: `KIND_OF` as a table, None for pairs no kind has. Read for every
card dealt, drawn and discarded: two subscripts cost half the dict's lookup of a pair."""
WAYS_UP: tuple[tuple[tuple[int, int], tuple[int, int]], ...] = tuple(
    ((b, a), (a, b)) for a, b in KINDS
)
"""Each kind's (up, down) faces either way up, by `rng.randrange(2)`: a card is dealt or turned
up as `WAYS_UP[kind][rng.randrange(2)]`, with even chance (a table, not a call, for each card)."""
CARDS_PER_PAIR = 9
HAND_SIZE = 3
TARGET = 10
RAISED_TARGET = 15

STANDARD, TOO_SHORT, SHOWDOWN = "standard", "too_short", "showdown"
CLOCKWISE, COUNTERCLOCKWISE = "clockwise", "counterclockwise"
TEAM_SEATING: dict[int, tuple[int, ...]] = {
    4: (0, 1, 0, 1),
    5: (0, 1, 2, 0, 1),
    6: (0, 1, 0, 1, 0, 1),
}
"""Team of each seat (0 = A, 1 = B, 2 = C): ABAB, ABCAB, ABABAB."""

# Phases. The seat to move acts in PLAY, DIRECTION and CHOICE; the head of the foul scorers in
# FOUL. FOULED and DRAWING only exist between the events of one decided move.
SETUP = "setup"
PLAY = "play"
DIRECTION = "direction"
"""A pink 4 landed: the seat to move decides whether to reverse the direction of play."""
CHOICE = "choice"
"""Exactly on target (score the last card) and/or a 1 landed (steal, or pass when below target)."""
TURN_PHASES = frozenset({PLAY, DIRECTION, CHOICE})
"""The phases in which the seat to move acts."""
FOULED = "fouled"
FOUL = "foul"
DRAWING = "drawing"
OVER = "over"

PINK_FOURS = Option(
    name="pink_fours",
    default=6,
    kind=int,
    minimum=0,
    maximum=2 * CARDS_PER_PAIR,
    description="How many 4-faces are pink, spread as evenly as possible over the 3/4 and 4/5 "
    "cards (the 3/4 cards take the odd one).",
)
VARIANT = Option(
    name="variant",
    default=STANDARD,
    kind=str,
    choices=(STANDARD, TOO_SHORT, SHOWDOWN),
    description='"standard": the game ends when the draw pile is empty; "too_short": the '
    "discard pile is reshuffled once and the game ends when the draw pile empties again; "
    '"showdown": play on without drawing until every player\'s cards are gone.',
)
TEAMS = Option(
    name="teams",
    default=False,
    kind=bool,
    description="Team play for 4 to 6 players, seated ABAB, ABCAB or ABABAB; a team scores "
    "the sum of its members' points divided by its size.",
)


@cache
def deck_counts(pink_fours: int) -> tuple[int, ...]:
    """How many cards of each kind the deck holds (54 in all)."""
    pink_34, pink_45 = (pink_fours + 1) // 2, pink_fours // 2
    pair = CARDS_PER_PAIR
    return (pair, pair, pair, pair - pink_34, pink_34, pair - pink_45, pink_45, pair)


@cache
def sorted_deck(pink_fours: int) -> tuple[int, ...]:
    """The kind of each card of the deck, in kind order: the deck before its shuffle."""
    return tuple(kind for kind, count in enumerate(deck_counts(pink_fours)) for _ in range(count))


def team_seating(players: int, options: Mapping[str, JSON]) -> tuple[int, ...] | None:
    """The team of each seat, or None without teams; refuses teams outside 4 to 6 players."""
    if not options.get(TEAMS.name, TEAMS.default):
        return None
    if players not in TEAM_SEATING:
        raise OptionError(TEAMS.name, f"needs 4 to 6 players, not {players}")
    return TEAM_SEATING[players]


class Krumme10Info(GameInfo):
    """Krumme10's metadata; its options also depend on the player count (teams need 4 to 6)."""

    def resolve_options(self, players: int, given: Mapping[str, JSON]) -> dict[str, JSON]:
        resolved = super().resolve_options(players, given)
        team_seating(players, resolved)
        return resolved


INFO = Krumme10Info(
    id="krumme10",
    title="Krumme10",
    min_players=2,
    max_players=6,
    options=(FIRST_SEAT, PINK_FOURS, VARIANT, TEAMS),
    # Every card is scored at most once, for at most 5 points.
    score_range=(0, 6 * CARDS_PER_PAIR * max(VALUE)),
    summary="Play one of your double-sided cards, normally or flipped, into the display; "
    "exactly 10 (15 once a 4 lands) scores the last card, more is a foul the others score from. "
    "Nobody knows the back sides. Most points wins.",
    # 2: the draw pile's top card is turned up (drawn as shown); jackpot pink 4s may be flipped.
    rules_version=2,
)


# The cards built at nearly every move (a card turned up, a card flipped, a card placed in the
# display) are built as `tuple.__new__(Card, fields)`, every field given, in order: what a named
# tuple's own `__new__`, a Python function, does inside, less that function's call (a third of
# the card's cost). A field added to `Card` or `Placed` is added there too.


class Card(NamedTuple):
    """A double-sided card: `face` is up, `back` down; `revealed` once the back was seen."""

    id: int
    face: int
    back: int
    revealed: bool = False

    def flipped(self) -> Card:
        # `tuple.__new__`: see the comment above the class.
        return tuple.__new__(Card, (self.id, self.back, self.face, True))


class Placed(NamedTuple):
    """A card in the display, who played it and, for a stolen card, whose it was."""

    card: Card
    seat: int
    stolen_from: int | None = None


CARD_IDS = range(2 * sum(deck_counts(0)))
"""Every id a card can get: the deck's 54 cards each get one as they are dealt or turned up, and
a "too_short" game's one reshuffle turns up at most as many again."""


@dataclass(frozen=True)
class State:
    hands: tuple[tuple[Card, ...], ...]
    """Each seat's cards, by id."""
    draw_pile: tuple[int, ...]
    """Count of each kind still to draw."""
    scores: tuple[int, ...]
    won: tuple[tuple[Card, ...], ...]
    """Each seat's scored cards, the counted face up, oldest first."""
    discarded: tuple[Card, ...] = ()
    """The discard pile, as the cards landed on it (a "too_short" game draws them again)."""
    teams: tuple[int, ...] | None = None
    variant: str = STANDARD
    display: tuple[Placed, ...] = ()
    total: int = 0
    target: int = TARGET
    turn: int | None = None
    direction: int = 1
    """1: clockwise (to higher seat numbers), -1: counterclockwise."""
    phase: str = SETUP
    foul_scorers: tuple[int, ...] = ()
    """Seats still to decide on foul points, the next one first."""
    foul_any_card: bool = False
    """The foul exceeded 15: foul scorers may score any of their cards."""
    refilled: bool = False
    next_id: int = 0
    draw_top: Card | None = None
    """The draw pile's top card (counted in `draw_pile`): its up face is public, its back not."""

    @property
    def players(self) -> int:
        return len(self.hands)

    @property
    def draw_pile_size(self) -> int:
        """Cards left to draw. Deciding sums `state.draw_pile` itself: a property's getter is a
        call into the interpreter, and each card played asks a few times."""
        return sum(self.draw_pile)

    @property
    def discard_pile(self) -> tuple[int, ...]:
        """Count of each kind discarded."""
        return _count_kinds((0,) * len(KINDS), self.discarded, +1)


STATE_FIELDS = {field.name for field in fields(State)}

# --- small helpers -------------------------------------------------------------------------------


def _state(**values: object) -> State:
    """A `State` of every field, without `__init__`'s cost: `sample` is the search's hot path."""
    assert values.keys() == STATE_FIELDS
    state = object.__new__(State)
    state.__dict__.update(values)
    return state


@cache
def seats_after(seat: int, players: int, direction: int) -> tuple[int, ...]:
    """Every other seat in turn order, starting after `seat`."""
    return tuple((seat + direction * step) % players for step in range(1, players))


def drawing_order(mover: int, players: int, direction: int) -> tuple[int, ...]:
    """Every seat in turn order, starting after `mover` and ending with it."""
    return (*seats_after(mover, players, direction), mover)


DRAWING_ORDERS = {
    direction: tuple(
        tuple(drawing_order(mover, players, direction) for mover in range(players))
        for players in range(INFO.max_players + 1)
    )
    for direction in (1, -1)
}
"""`DRAWING_ORDERS[direction][players][mover]`: `drawing_order`, read at the end of every turn
(cheaper than a call to a cache keyed by the three)."""


def same_team(state: State, seat: int, other: int) -> bool:
    if state.teams is None:
        return seat == other
    return state.teams[seat] == state.teams[other]


def _face_code(value: int, pink: bool) -> int:
    return PINK_FOUR if pink else value


CARD_JSON: tuple[tuple[dict[str, JSON], ...], ...] = tuple(
    tuple(
        {
            "id": 0,
            "face": VALUE[face],
            "pink": face == PINK_FOUR,
            "back": VALUE[back],
            "back_pink": back == PINK_FOUR,
        }
        for back in range(len(VALUE))
    )
    for face in range(len(VALUE))
)
"""`card_json`'s answer for each up and down face code, but for the id (0): copied, never given
out. Copying a dict costs half of building one, key by key, and every card dealt, drawn or
turned up is recorded this way."""


def card_json(card_id: int, face: int, back: int) -> dict[str, JSON]:
    """A dealt or drawn card (its id and face codes) as its event records it, its down face
    included (redacted). From the numbers, not a `Card`: a card turned up is not built twice."""
    card = CARD_JSON[face][back].copy()
    card["id"] = card_id
    return card


def _card_from_json(data: Mapping[str, JSON]) -> Card:
    # `_face_code` written out, and `tuple.__new__` (see the comment above `Card`): every card
    # drawn and turned up is read here.
    return tuple.__new__(
        Card,
        (
            data["id"],
            PINK_FOUR if data["pink"] else data["face"],
            PINK_FOUR if data["back_pink"] else data["back"],
            False,
        ),
    )


def _public_card(card: Card) -> dict[str, JSON]:
    return {"id": card.id, "face": VALUE[card.face], "pink": card.face == PINK_FOUR}


def _without_card(cards: tuple[Card, ...], card_id: int) -> tuple[Card | None, tuple[Card, ...]]:
    # The index counted by hand: making an `enumerate` (or a `range`) costs more than searching
    # a hand of three, and every card played, stolen or scored is taken out here (0.6k
    # instructions an action less than with `enumerate`, 0.9k less than with `range`, when
    # measured on 2026-11-29).
    index = 0
    for card in cards:
        if card.id == card_id:
            return card, cards[:index] + cards[index + 1 :]
        index += 1  # noqa: SIM113 (counted by hand: the comment above says why)
    return None, cards


def _card_in(cards: tuple[Card, ...], card_id: int) -> Card | None:
    """Card `card_id` of `cards`, None if it is not there (`_without_card` less the rest)."""
    for card in cards:
        if card.id == card_id:
            return card
    return None


def _count_kinds(counts: tuple[int, ...], cards: Iterable[Card], sign: int) -> tuple[int, ...]:
    changed = list(counts)
    for card in cards:
        kind = KIND_BY_FACES[card.face][card.back]
        assert kind is not None
        changed[kind] += sign
    return tuple(changed)


def _holder(state: State, card_id: int) -> tuple[int, Card | None]:
    """The seat holding card `card_id` and the card (None if nobody holds it)."""
    for seat, hand in enumerate(state.hands):
        card = _card_in(hand, card_id)
        if card is not None:
            return seat, card
    return -1, None


# Evolvers answer the fields an event changes, not a new state: `evolve` copies the state once
# with them, and a move's `FoldingDecision` writes them into the one copy it makes for it.
# These helpers give the fields a step changes, for an evolver to merge into its answer.


def _scoring(state: State, seat: int, cards: tuple[Card, ...], points: int) -> Changes:
    """The fields that change as `seat` wins `cards` worth `points`."""
    scores = state.scores
    return {
        "scores": with_item(scores, seat, scores[seat] + points),
        "won": with_item(state.won, seat, state.won[seat] + cards),
    }


def landing(total: int, target: int, face: int) -> tuple[int, int]:
    """Total and target after a card showing `face` lands: a 4 raises the target first."""
    value = VALUE[face]
    return total + value, RAISED_TARGET if value == 4 else target


def _outcome_phase(
    total: int,
    target: int,
    turn: int | None,
    hands: tuple[tuple[Card, ...], ...],
    may_steal: bool,
) -> str:
    """The step after a card landed (and after a pink 4's direction choice), from the state's
    `total`, `target`, `turn` and `hands` once it landed."""
    if total > target:
        return FOULED
    if may_steal and turn is not None and _others_hold_cards(hands, turn):
        return CHOICE
    return CHOICE if total == target else DRAWING


def _others_hold_cards(hands: tuple[tuple[Card, ...], ...], seat: int) -> bool:
    # Counted rather than searched: `any` over a generator and `enumerate` cost more.
    return sum(map(len, hands)) > len(hands[seat])


# --- evolve: one function per event --------------------------------------------------------------


def _on_cards_dealt(state: State, data: Mapping[str, JSON]) -> Changes:
    cards = [_card_from_json(card) for card in data["cards"]]
    return {
        "hands": with_item(state.hands, data["seat"], tuple(cards)),
        "draw_pile": _count_kinds(state.draw_pile, cards, -1),
        "next_id": cards[-1].id + 1,
    }


def _on_first_seat_chosen(state: State, data: Mapping[str, JSON]) -> Changes:
    return {"turn": data["seat"], "phase": PLAY}


def _land(
    state: State, owner: int, hand: tuple[Card, ...], placed: Placed, data: Mapping[str, JSON]
) -> Changes:
    """What changes as `placed` leaves `owner`'s hand (`hand` is what stays) for the display."""
    hands = with_item(state.hands, owner, hand)
    total, target = data["total"], data["target"]
    face = placed.card.face
    if face == PINK_FOUR:
        phase = DIRECTION
    elif total < target and face != 1:
        # `_outcome_phase`'s commonest answer without its call: below target, no 1 to steal with.
        phase = DRAWING
    else:
        phase = _outcome_phase(total, target, state.turn, hands, may_steal=face == 1)
    return {
        "hands": hands,
        "display": (*state.display, placed),
        "total": total,
        "target": target,
        "phase": phase,
    }


def _on_card_played(state: State, data: Mapping[str, JSON]) -> Changes:
    seat = data["seat"]
    card, hand = _without_card(state.hands[seat], data["card"])
    assert card is not None
    # `tuple.__new__`: see the comment above `Card`.
    placed = tuple.__new__(Placed, (card.flipped() if data["flip"] else card, seat, None))
    return _land(state, seat, hand, placed, data)


def _on_card_stolen(state: State, data: Mapping[str, JSON]) -> Changes:
    owner = data["from"]
    card, hand = _without_card(state.hands[owner], data["card"])
    assert card is not None
    return _land(state, owner, hand, Placed(card.flipped(), data["seat"], owner), data)


def _on_direction_chosen(state: State, data: Mapping[str, JSON]) -> Changes:
    # The direction does not change what comes next: the phase follows from the state as it is.
    phase = _outcome_phase(state.total, state.target, state.turn, state.hands, may_steal=False)
    return {"direction": data["direction"], "phase": phase}


def _on_steal_declined(state: State, data: Mapping[str, JSON]) -> Changes:
    return {"phase": DRAWING}


def _clearing(state: State, discarded: list[Card]) -> Changes:
    """The fields that change as the display is cleared, `discarded` going to the discard pile."""
    return {
        "discarded": (*state.discarded, *discarded),
        "display": (),
        "total": 0,
        "target": TARGET,
    }


def _on_target_hit(state: State, data: Mapping[str, JSON]) -> Changes:
    flips = {data["card"]: data["flip"]}
    flips.update((pink["card"], pink["flip"]) for pink in data["jackpot"])
    won: list[Card] = []
    discarded: list[Card] = []
    for placed in state.display:
        card = placed.card
        if card.id in flips:
            won.append(card.flipped() if flips[card.id] else card)
        else:
            discarded.append(card)
    points = data["points"] + data["jackpot_points"]
    return {
        **_scoring(state, data["seat"], tuple(won), points),
        **_clearing(state, discarded),
        "phase": DRAWING,
    }


def _on_fouled(state: State, data: Mapping[str, JSON]) -> Changes:
    scorers = tuple(data["scorers"])
    return {
        **_clearing(state, [placed.card for placed in state.display]),
        "foul_scorers": scorers,
        "foul_any_card": data["any_card"],
        "phase": FOUL if scorers else DRAWING,
    }


def _next_foul_scorer(state: State) -> Changes:
    """The fields that change as the head of the foul scorers has decided."""
    rest = state.foul_scorers[1:]
    return {"foul_scorers": rest, "phase": FOUL if rest else DRAWING}


def _on_foul_scored(state: State, data: Mapping[str, JSON]) -> Changes:
    seat = data["seat"]
    card, hand = _without_card(state.hands[seat], data["card"])
    assert card is not None
    won = card.flipped() if data["flip"] else card
    return {
        "hands": with_item(state.hands, seat, hand),
        **_scoring(state, seat, (won,), data["points"]),
        **_next_foul_scorer(state),
    }


def _on_foul_passed(state: State, data: Mapping[str, JSON]) -> Changes:
    return _next_foul_scorer(state)


def _on_card_drawn(state: State, data: Mapping[str, JSON]) -> Changes:
    seat, drawn, top = data["seat"], data["card"], state.draw_top
    if top is not None and top.id == drawn["id"]:
        # The card drawn is the top card turned up before: already built, and counted in
        # `next_id` as it was turned up.
        card, next_id = top, state.next_id
    else:  # a game begun before the top card was shown
        card = _card_from_json(drawn)
        next_id = max(state.next_id, card.id + 1)
    kind, pile = KIND_BY_FACES[card.face][card.back], state.draw_pile
    assert kind is not None
    return {
        "hands": with_item(state.hands, seat, (*state.hands[seat], card)),
        "draw_pile": with_item(pile, kind, pile[kind] - 1),
        "next_id": next_id,
        "draw_top": None,
    }


def _on_top_card_shown(state: State, data: Mapping[str, JSON]) -> Changes:
    card = _card_from_json(data["card"])
    return {"draw_top": card, "next_id": card.id + 1}


def _on_discard_reshuffled(state: State, data: Mapping[str, JSON]) -> Changes:
    return {
        "draw_pile": state.discard_pile,
        "discarded": (),
        "refilled": True,
        "draw_top": None,
    }


def _on_turn_passed(state: State, data: Mapping[str, JSON]) -> Changes:
    return {"turn": data["seat"], "phase": PLAY}


def _on_game_ended(state: State, data: Mapping[str, JSON]) -> Changes:
    return {"turn": None, "phase": OVER, "foul_scorers": ()}


EVOLVERS: Evolvers[State] = {
    "CardsDealt": _on_cards_dealt,
    "FirstSeatChosen": _on_first_seat_chosen,
    "CardPlayed": _on_card_played,
    "CardStolen": _on_card_stolen,
    "DirectionChosen": _on_direction_chosen,
    "StealDeclined": _on_steal_declined,
    "TargetHit": _on_target_hit,
    "Fouled": _on_fouled,
    "FoulScored": _on_foul_scored,
    "FoulPassed": _on_foul_passed,
    "CardDrawn": _on_card_drawn,
    "TopCardShown": _on_top_card_shown,
    "DiscardReshuffled": _on_discard_reshuffled,
    "TurnPassed": _on_turn_passed,
    "GameEnded": _on_game_ended,
}


def evolve(state: State, event: Event) -> State:
    return evolved("krumme10", EVOLVERS, state, event)


# --- decide --------------------------------------------------------------------------------------

MOVE_FIELDS: dict[str, frozenset[str]] = {
    "play": frozenset({"type", "card", "flip"}),
    "steal": frozenset({"type", "card"}),
    "score": frozenset({"type", "flip", "flip_jackpot"}),
    "direction": frozenset({"type", "reverse"}),
    "foul_score": frozenset({"type", "card", "flip"}),
    "pass": frozenset({"type"}),
}
MOVE_SHAPES = (
    '{"type": "play", "card": <id>, "flip": <bool>}, {"type": "steal", "card": <id>}, '
    '{"type": "score", "flip": <bool>, "flip_jackpot": [<id>, ...]}, '
    '{"type": "direction", "reverse": <bool>}, '
    '{"type": "foul_score", "card": <id>, "flip": <bool>} or {"type": "pass"}'
)


ParsedMove = tuple[str, int, bool, frozenset[int]]
"""A move's type, its card (0 for moves without one), its flag (`flip` or `reverse`; False for
moves without one) and a score's `flip_jackpot` (the jackpot pink 4s to flip as they are scored).
A plain tuple that `step` unpacks: building a named tuple cost a third of the parse."""
NO_FLIPS: frozenset[int] = frozenset()


def parse_move(move: JSON) -> ParsedMove:
    """The move's fields, checked for shape only; raises RuleError("move-format")."""
    # dict first: a move is nearly always one, and the Mapping ABC's check costs more (a tuple,
    # not `dict | Mapping`, which would build a union at each call).
    kind = move.get("type") if isinstance(move, (dict, Mapping)) else None
    if not isinstance(kind, str):
        raise RuleError("move-format", f"a Krumme10 move is one of {MOVE_SHAPES}")
    fields = MOVE_FIELDS.get(kind)
    if fields is None or move.keys() != fields:
        raise RuleError("move-format", f"a Krumme10 move is one of {MOVE_SHAPES}")
    card = move.get("card", 0)
    if isinstance(card, bool) or not isinstance(card, int) or card < 0:
        raise RuleError("move-format", "card must be the id of a card (a whole number >= 0)")
    flag = move.get("flip", move.get("reverse", False))
    if not isinstance(flag, bool):
        raise RuleError("move-format", "flip and reverse must be true or false")
    if kind != "score":
        return kind, card, flag, NO_FLIPS
    flips = move["flip_jackpot"]
    if (
        not isinstance(flips, list)
        or not all(isinstance(pink, int) and not isinstance(pink, bool) for pink in flips)
        or len(set(flips)) != len(flips)
    ):
        raise RuleError("move-format", "flip_jackpot must be a list of distinct card ids")
    return kind, card, flag, frozenset(flips)


def either_way(move_type: str, card_id: int) -> tuple[JSON, JSON]:
    """The `move_type` ("play" or "foul_score") moves of card `card_id`, normally or flipped."""
    return (
        {"type": move_type, "card": card_id, "flip": False},
        {"type": move_type, "card": card_id, "flip": True},
    )


# Moves built once and shared by every `legal_moves` answer that lists them (the rules contract
# lets it; callers never change them): most answers are a hand's cards played either way up. A
# card's are built at import for every id a card can have, in tables read by the id: for each
# card in hand at each turn, reading a table costs a third of calling a cache.

SHARED_MOVES: dict[int, tuple[JSON, ParsedMove]] = {}
"""Each shared move with its parse, by the move's `id`. A step on one of them (every step a bot or
a search's playout picks from `legal_moves`) takes its parse from here instead of checking the
move's shape again: a third of a play's cost to decide. The entry keeps the move alive, so no
other object can have its id, and callers never change a shared move, so its parse holds."""


def _shared(moves: tuple[JSON, ...]) -> tuple[JSON, ...]:
    """`moves`, each entered in `SHARED_MOVES`."""
    for move in moves:
        SHARED_MOVES[id(move)] = (move, parse_move(move))
    return moves


PLAY_MOVES = tuple(_shared(either_way("play", card_id)) for card_id in CARD_IDS)
"""`PLAY_MOVES[card_id]`: the card played normally or flipped."""
FOUL_SCORE_MOVES = tuple(_shared(either_way("foul_score", card_id)) for card_id in CARD_IDS)
"""`FOUL_SCORE_MOVES[card_id]`: the card scored as foul points, normally or flipped."""
STEAL_MOVES = _shared(tuple({"type": "steal", "card": card_id} for card_id in CARD_IDS))
"""`STEAL_MOVES[card_id]`: stealing the card."""


PASS_MOVE: JSON = {"type": "pass"}


DIRECTION_MOVES: tuple[JSON, JSON] = (
    {"type": "direction", "reverse": False},
    {"type": "direction", "reverse": True},
)
_shared((PASS_MOVE, *DIRECTION_MOVES))


def _subsets(ids: list[int]) -> list[list[int]]:
    """Every subset of `ids`, each in the order of `ids`, smallest first."""
    return [list(chosen) for size in range(len(ids) + 1) for chosen in combinations(ids, size)]


@lru_cache(maxsize=64)
def score_moves(jackpot: tuple[Card, ...]) -> tuple[JSON, ...]:
    """The score moves exactly on target with the `jackpot` pink 4s: the last card and each
    subset of the pink 4s flipped or not. Built once for each jackpot, nearly always none."""
    pinks = [card.id for card in jackpot]
    return tuple(
        {"type": "score", "flip": flip, "flip_jackpot": flips}
        for flip in (False, True)
        for flips in _subsets(pinks)
    )


def target_hit_v1_to_v2(data: Mapping[str, JSON]) -> dict[str, JSON]:
    """Before jackpot pink 4s could be flipped, each was scored as it lay: a pink 4."""
    jackpot = [{"card": card, "flip": False, "face": 4, "pink": True} for card in data["jackpot"]]
    return {**data, "jackpot": jackpot}


EVENT_VERSIONS = {"TargetHit": 2}
"""Event types whose data changed shape, by current version; the rest are version 1."""
UPCASTS = (("TargetHit", 1, target_hit_v1_to_v2),)
"""Every schema step of Krumme10's events: (type, from version, function)."""


def step_error(state: State) -> RuleError:
    """The rule a move of the wrong kind for the current step breaks."""
    if state.phase == DIRECTION:
        return RuleError("pink-4-direction", "a pink 4 landed: first choose whether to reverse")
    if state.phase == CHOICE and state.total == state.target:
        return RuleError(
            "exactly-on-target", "the display is exactly on target: score the last card"
        )
    if state.phase == CHOICE:
        return RuleError("steal-with-a-1", "a 1 landed: steal a card of another player, or pass")
    if state.phase == FOUL:
        return RuleError("foul-points", "after a foul: score foul points or pass")
    return RuleError("play-one-card", "play exactly one of your cards, normally or flipped")


def _play(log: FoldingDecision[State], seat: int, card_id: int, flip: bool) -> None:
    state = log.state
    if state.phase != PLAY:
        raise step_error(state)
    for card in state.hands[seat]:  # `_card_in` written out: one call less a card played
        if card.id == card_id:
            break
    else:
        raise RuleError("card-in-front", f"seat {seat} has no card {card_id} in front of them")
    face = card.back if flip else card.face
    total, target = landing(state.total, state.target, face)
    log.add(
        "CardPlayed",
        {
            "seat": seat,
            "card": card_id,
            "flip": flip,
            "face": VALUE[face],
            "pink": face == PINK_FOUR,
            "total": total,
            "target": target,
        },
    )


def _steal(log: FoldingDecision[State], seat: int, card_id: int) -> None:
    state = log.state
    if state.phase != CHOICE or state.display[-1].card.face != 1:
        raise RuleError("steal-with-a-1", "only a 1 that just landed lets you steal")
    owner, card = _holder(state, card_id)
    if card is None or owner == seat:
        raise RuleError(
            "steal-from-another-player", f"card {card_id} is not in front of another player"
        )
    total, target = landing(state.total, state.target, card.back)
    log.add(
        "CardStolen",
        {
            "seat": seat,
            "from": owner,
            "card": card_id,
            "face": VALUE[card.back],
            "pink": card.back == PINK_FOUR,
            "total": total,
            "target": target,
        },
    )


def jackpot_cards(state: State) -> tuple[Card, ...]:
    """The pink 4s showing in a display exactly on 15, besides its last card: the jackpot."""
    if state.target != RAISED_TARGET:
        return ()
    return tuple(placed.card for placed in state.display[:-1] if placed.card.face == PINK_FOUR)


def _scored_face(card: Card, flip: bool) -> dict[str, JSON]:
    """How a card is scored: its id, whether it was flipped, and the face that counts."""
    face = card.back if flip else card.face
    return {"card": card.id, "flip": flip, "face": VALUE[face], "pink": face == PINK_FOUR}


def _score(
    log: FoldingDecision[State], seat: int, flip: bool, jackpot_flips: frozenset[int]
) -> None:
    state = log.state
    if state.phase != CHOICE or state.total != state.target:
        raise RuleError(
            "exactly-on-target",
            f"the display is at {state.total}, its target {state.target}: nothing to score",
        )
    jackpot = jackpot_cards(state)
    if not jackpot_flips <= {card.id for card in jackpot}:
        raise RuleError(
            "jackpot-flip", "flip_jackpot names only pink 4s of the jackpot (exactly 15)"
        )
    # krumme10.md: every card added to points may be flipped, each jackpot pink 4 included.
    scored = _scored_face(state.display[-1].card, flip)
    pinks = [_scored_face(card, card.id in jackpot_flips) for card in jackpot]
    log.add(
        "TargetHit",
        {
            "seat": seat,
            **scored,
            "points": scored["face"],
            "jackpot": pinks,
            "jackpot_points": sum(pink["face"] for pink in pinks),
        },
    )


def _pass(log: FoldingDecision[State], seat: int) -> None:
    state = log.state
    if state.phase == FOUL:
        log.add("FoulPassed", {"seat": seat})
    elif state.phase == CHOICE and state.total < state.target:
        log.add("StealDeclined", {"seat": seat})
    else:
        raise step_error(state)


def _direction(log: FoldingDecision[State], seat: int, reverse: bool) -> None:
    state = log.state
    if state.phase != DIRECTION:
        raise RuleError("pink-4-direction", "only a pink 4 that just landed lets you reverse")
    direction = -state.direction if reverse else state.direction
    log.add("DirectionChosen", {"seat": seat, "reverse": reverse, "direction": direction})


def foul_cards(state: State, seat: int) -> tuple[Card, ...]:
    """The cards `seat` may score as foul points: the lowest by up face, or any after 15."""
    hand = state.hands[seat]
    if state.foul_any_card or not hand:
        return hand
    # One loop, not a generator for the lowest value and one for its cards: a generator resumes
    # for each card, and the foul scorers' moves are listed (and checked) at every foul.
    lowest, lowest_value = [hand[0]], VALUE[hand[0].face]
    for card in hand[1:]:
        value = VALUE[card.face]
        if value < lowest_value:
            lowest, lowest_value = [card], value
        elif value == lowest_value:
            lowest.append(card)
    return tuple(lowest)


def _foul_score(
    log: FoldingDecision[State], seat: int, card_id: int, flip: bool, rng: Chance
) -> None:
    state = log.state
    if state.phase != FOUL:
        raise step_error(state)
    card = _card_in(state.hands[seat], card_id)
    if card is None:
        raise RuleError("card-in-front", f"seat {seat} has no card {card_id} in front of them")
    if card not in foul_cards(state, seat):
        raise RuleError(
            "foul-lowest-card", "below 15 a foul scorer scores their lowest card (by up face)"
        )
    face = card.back if flip else card.face
    log.add(
        "FoulScored",
        {
            "seat": seat,
            "card": card_id,
            "flip": flip,
            "face": VALUE[face],
            "pink": face == PINK_FOUR,
            "points": VALUE[face],
        },
    )
    if sum(log.state.draw_pile):
        _draw(log, seat, rng)


def _show_top(log: FoldingDecision[State], rng: Chance) -> bool:
    """Turn up the draw pile's new top card, if it has one: its up face is public from now.
    False if the draw pile is empty."""
    pile = log.state.draw_pile
    size = sum(pile)
    if not size:
        return False
    face, back = WAYS_UP[multiset.draw(pile, rng, size)][rng.randrange(2)]
    card = CARD_JSON[face][back].copy()  # `card_json` written out: one call less a draw
    card["id"] = log.state.next_id
    log.add("TopCardShown", {"card": card})
    return True


def _draw(log: FoldingDecision[State], seat: int, rng: Chance) -> bool:
    """`seat` draws the top card; False if that ended the game (the draw pile ran out for good)."""
    state = log.state  # the one copy the move's events are folded into
    if state.draw_top is None:  # a game begun before the top card was shown
        _show_top(log, rng)
    top = state.draw_top
    assert top is not None
    card = CARD_JSON[top.face][top.back].copy()  # `card_json` written out: one call less a draw
    card["id"] = top.id
    log.add("CardDrawn", {"seat": seat, "card": card})
    if _show_top(log, rng):
        return True
    if state.variant == SHOWDOWN:
        return True
    if state.variant == TOO_SHORT and not state.refilled:
        log.add("DiscardReshuffled", {"cards": len(state.discarded)})
        if _show_top(log, rng):
            return True
    log.add("GameEnded", {"reason": "draw-pile-empty"})
    return False


def _foul(log: FoldingDecision[State]) -> None:
    state = log.state
    assert state.turn is not None
    scorers = [
        seat
        for seat in seats_after(state.turn, state.players, state.direction)
        if state.hands[seat] and not same_team(state, seat, state.turn)
    ]
    log.add(
        "Fouled",
        {
            "seat": state.turn,
            "total": state.total,
            "target": state.target,
            "any_card": state.target == RAISED_TARGET,
            "scorers": scorers,
        },
    )


def _end_turn(log: FoldingDecision[State], rng: Chance) -> None:
    """Everyone draws back to three, the mover last; then the next seat that can play moves."""
    # The one copy the move's events are folded into: it shows each draw as it is made.
    state = log.state
    mover = state.turn
    assert mover is not None
    order = DRAWING_ORDERS[state.direction][len(state.hands)][mover]
    for seat in order:
        # A top card turned up is counted in the draw pile: no need to sum the pile then.
        while len(state.hands[seat]) < HAND_SIZE and (
            state.draw_top is not None or sum(state.draw_pile) > 0
        ):
            if not _draw(log, seat, rng):
                return
    hands = state.hands
    for seat in order:
        if hands[seat]:
            log.add("TurnPassed", {"seat": seat})
            return
    log.add("GameEnded", {"reason": "cards-gone"})


def seat_to_act(state: State) -> int | None:
    """The one seat the game waits for (`to_act` without building a set), None if none."""
    if state.phase == FOUL:
        return state.foul_scorers[0]
    if state.phase in TURN_PHASES:
        return state.turn
    return None


# --- the game ------------------------------------------------------------------------------------

ACTING = tuple(only(seat) for seat in range(INFO.max_players))
"""`to_act`'s answer for each seat: read by index, cheaper than a call to `only`'s cache, and
asked before every move."""


class Krumme10(DecidesBySteps):
    """Krumme10 behind the rules contract."""

    info: GameInfo = INFO
    upcasts = UPCASTS

    def initial_state(self, players: int, options: Mapping[str, JSON]) -> State:
        pink_fours = options.get(PINK_FOURS.name, PINK_FOURS.default)
        return State(
            hands=((),) * players,
            draw_pile=deck_counts(pink_fours),
            scores=(0,) * players,
            won=((),) * players,
            teams=team_seating(players, options),
            variant=options.get(VARIANT.name, VARIANT.default),
        )

    def setup(self, players: int, options: Mapping[str, JSON], rng: Chance) -> list[Event]:
        deck = list(sorted_deck(options.get(PINK_FOURS.name, PINK_FOURS.default)))
        rng.shuffle(deck)
        # Folded as they are decided, into one copy of the state, as a move's events are: the
        # top card turned up last needs the state the deal leaves.
        log = FoldingDecision(EVOLVERS, self.initial_state(players, options), EVENT_VERSIONS)
        for seat in range(players):
            dealt = range(seat * HAND_SIZE, (seat + 1) * HAND_SIZE)
            cards = [card_json(index, *WAYS_UP[deck[index]][rng.randrange(2)]) for index in dealt]
            log.add("CardsDealt", {"seat": seat, "cards": cards})
        log.add("FirstSeatChosen", {"seat": choose_first_seat(players, options, rng)})
        _show_top(log, rng)
        return log.events

    def evolve(self, state: State, event: Event) -> State:
        return evolve(state, event)

    def to_act(self, state: State) -> frozenset[int]:
        seat = state.turn
        # `seat_to_act`'s commonest answer without its call: the seat to move, in its turn.
        if state.phase not in TURN_PHASES:
            seat = seat_to_act(state)
        return frozenset() if seat is None else ACTING[seat]

    may_act = to_act  # nobody acts out of turn

    def legal_moves(self, state: State, seat: int) -> list[JSON]:
        phase = state.phase
        if phase == FOUL:
            if seat != state.foul_scorers[0]:
                return []
            moves: list[JSON] = []
            for card in foul_cards(state, seat):
                moves += FOUL_SCORE_MOVES[card.id]
            moves.append(PASS_MOVE)
            return moves
        if seat != state.turn:
            return []
        if phase == PLAY:
            moves = []
            for card in state.hands[seat]:
                moves += PLAY_MOVES[card.id]
            return moves
        if phase == DIRECTION:
            return list(DIRECTION_MOVES)
        if phase != CHOICE:
            return []
        moves = (
            list(score_moves(jackpot_cards(state))) if state.total == state.target else [PASS_MOVE]
        )
        if state.display[-1].card.face == 1:
            others = [
                card.id for other, hand in enumerate(state.hands) if other != seat for card in hand
            ]
            moves += [STEAL_MOVES[card_id] for card_id in sorted(others)]
        return moves

    def step(self, state: State, seat: int, move: JSON, rng: Chance) -> tuple[list[Event], State]:
        shared = SHARED_MOVES.get(id(move))
        kind, card, flag, flips = parse_move(move) if shared is None else shared[1]
        # The seat to move in its turn (nearly every move) is checked without `seat_to_act`'s call.
        if (seat != state.turn or state.phase not in TURN_PHASES) and seat != seat_to_act(state):
            raise RuleError("turn-order", f"seat {seat} may not act now")
        log = FoldingDecision(EVOLVERS, state, EVENT_VERSIONS)
        match kind:
            case "play":
                _play(log, seat, card, flag)
            case "steal":
                _steal(log, seat, card)
            case "score":
                _score(log, seat, flag, flips)
            case "direction":
                _direction(log, seat, flag)
            case "foul_score":
                _foul_score(log, seat, card, flag, rng)
            case _:
                _pass(log, seat)
        # The events that follow by rule alone, until a seat must choose or the game is over
        # (a loop here, not a function of its own: one call less at every move).
        while True:
            if log.state.phase == DRAWING:  # the commoner, after nearly every card played
                _end_turn(log, rng)
            elif log.state.phase == FOULED:
                _foul(log)
            else:
                break
        return log.events, log.state  # `log.outcome()` without a method call at every move

    def view(self, state: State, seat: int | None) -> dict[str, JSON]:
        # Nobody sees a down face, so every seat sees what a spectator sees.
        return {
            "hands": [list(map(_public_card, hand)) for hand in state.hands],
            "draw_pile": state.draw_pile_size,
            "discard_pile": len(state.discarded),
            "discarded": _shown_cards(state.discarded),
            "display": list(map(_placed_json, state.display)),
            "total": state.total,
            "target": state.target,
            "scores": list(state.scores),
            "won": [_shown_cards(cards) for cards in state.won],
            "teams": None if state.teams is None else list(state.teams),
            "turn": state.turn,
            "direction": CLOCKWISE if state.direction == 1 else COUNTERCLOCKWISE,
            "phase": state.phase,
            "foul": (
                {"scorers": list(state.foul_scorers), "any_card": state.foul_any_card}
                if state.phase == FOUL
                else None
            ),
            "variant": state.variant,
            "refilled": state.refilled,
            "draw_top": None if state.draw_top is None else _public_card(state.draw_top),
        }

    def redact(self, event: Event, seat: int | None) -> Event | None:
        if event.type == "CardsDealt":
            cards = [_strip_back(card) for card in event.data["cards"]]
            return Event(event.type, {**event.data, "cards": cards}, event.v)
        if event.type in ("CardDrawn", "TopCardShown"):
            card = _strip_back(event.data["card"])
            return Event(event.type, {**event.data, "card": card}, event.v)
        return event

    def result(self, state: State) -> Result | None:
        if state.phase != OVER:
            return None
        if state.teams is None:
            best = max(state.scores)
            winners = tuple(seat for seat, score in enumerate(state.scores) if score == best)
            return Result(winners=winners, scores=state.scores)
        members = team_members(state.teams)
        points = [sum(state.scores[seat] for seat in team) for team in members]
        team_scores = [
            Fraction(total, len(team)) for total, team in zip(points, members, strict=True)
        ]
        best_score = max(team_scores)
        winners = tuple(
            sorted(
                seat
                for team, score in zip(members, team_scores, strict=True)
                if score == best_score
                for seat in team
            )
        )
        details: dict[str, JSON] = {
            "teams": [list(team) for team in members],
            "team_points": points,
            "team_scores": [float(score) for score in team_scores],
        }
        return Result(winners=winners, scores=state.scores, details=details)

    def scores(self, state: State) -> tuple[int, ...]:
        return state.scores

    def evaluate(self, state: State) -> tuple[float, ...]:
        # A softmax of each team's expected points, cooler as fewer cards are left to come.
        result = self.result(state)
        if result is not None:
            return result.shares()
        points = expected_points(state)
        teams = team_members(state.teams or tuple(range(state.players)))
        standings = [sum(points[seat] for seat in team) / len(team) for team in teams]
        spread = SPREAD_PER_TURN * sqrt(cards_to_come(state) / state.players) + LAST_SPREAD
        best = max(standings)
        weights = [exp((standing - best) / spread) for standing in standings]
        total = sum(weights)
        shares = [0.0] * state.players
        for team, weight in zip(teams, weights, strict=True):
            for seat in team:
                shares[seat] = weight / total / len(team)
        return tuple(shares)

    def conceal(self, state: State, seat: int | None, rng: Random) -> State:
        # Every seat, the owner included, knows the same: only the backs of cards never flipped
        # and the draw pile below its top card are hidden. Deal those again from their common
        # pool, keeping faces (the top card's up face too).
        hidden = [card for card in _cards(state) if not card.revealed]
        top = [] if state.draw_top is None else [state.draw_top]
        pool = _count_kinds(state.draw_pile, hidden, +1)
        backs, below_top = deal_backs(_demand([*hidden, *top]), pool, rng)

        def rebacked(card: Card) -> Card:
            return card if card.revealed else card._replace(back=take(backs[card.face], rng))

        new_top = [rebacked(card) for card in top]
        return replace(
            state,
            hands=tuple(tuple(map(rebacked, hand)) for hand in state.hands),
            display=tuple(placed._replace(card=rebacked(placed.card)) for placed in state.display),
            discarded=tuple(map(rebacked, state.discarded)),
            won=tuple(tuple(map(rebacked, cards)) for cards in state.won),
            draw_pile=_count_kinds(below_top, new_top, +1),
            draw_top=new_top[0] if new_top else None,
        )

    def sample(
        self,
        players: int,
        options: Mapping[str, JSON],
        view: Mapping[str, JSON],
        seat: int,
        rng: Random,
    ) -> State:
        # Every seat sees the same, so `seat` changes nothing. The deck less every card whose
        # two faces are public is dealt to the unrevealed backs (the draw pile's top card's
        # too) and the rest of the draw pile.
        hands, display = view["hands"], view["display"]
        discarded, won = view["discarded"], view["won"]
        top = [] if view["draw_top"] is None else [view["draw_top"]]
        public = [*chain.from_iterable(hands), *display, *discarded, *chain.from_iterable(won)]
        supply = list(deck_counts(options.get(PINK_FOURS.name, PINK_FOURS.default)))
        demand = [0] * len(VALUE)
        for card in (*public, *top):
            face, back = _face_code(card["face"], card["pink"]), card.get("back")
            if back is None:
                demand[face] += 1
            else:
                supply[KIND_OF[face, _face_code(back["face"], back["pink"])]] -= 1
        backs, draw_pile = deal_backs(tuple(demand), tuple(supply), rng)

        def dealt(card: Mapping[str, JSON]) -> Card:
            face, back = _face_code(card["face"], card["pink"]), card.get("back")
            if back is None:
                return Card(card["id"], face, take(backs[face], rng))
            return Card(card["id"], face, _face_code(back["face"], back["pink"]), True)

        foul = view["foul"]
        new_top = [dealt(card) for card in top]
        return _state(
            hands=tuple(tuple(map(dealt, hand)) for hand in hands),
            draw_pile=_count_kinds(draw_pile, new_top, +1),
            draw_top=new_top[0] if new_top else None,
            scores=tuple(view["scores"]),
            won=tuple(tuple(map(dealt, cards)) for cards in won),
            discarded=tuple(map(dealt, discarded)),
            teams=team_seating(players, options),
            variant=view["variant"],
            display=tuple(
                Placed(dealt(placed), placed["seat"], placed["stolen_from"]) for placed in display
            ),
            total=view["total"],
            target=view["target"],
            turn=view["turn"],
            direction=1 if view["direction"] == CLOCKWISE else -1,
            phase=view["phase"],
            foul_scorers=() if foul is None else tuple(foul["scorers"]),
            foul_any_card=foul is not None and foul["any_card"],
            refilled=view["refilled"],
            # The last card drawn (or the top card turned up) is in view: the one reshuffle takes
            # only older cards away.
            next_id=max((card["id"] for card in (*public, *top)), default=-1) + 1,
        )


@cache
def team_members(teams: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """The seats of each team, by team number."""
    return tuple(
        tuple(seat for seat, team in enumerate(teams) if team == number)
        for number in range(max(teams) + 1)
    )


# --- evaluation ----------------------------------------------------------------------------------

SPREAD_PER_TURN = 1.5
"""The softmax temperature in points, per square root of the turns each player has left: fitted
(with `LAST_SPREAD`) to the outcomes of games between heuristic bots."""
LAST_SPREAD = 0.5
"""The temperature left when no card is to come: what the last moves may still change."""
DISCARDED_SHARE = 0.75
"""About three cards in four leave play to the discard pile, the rest are won."""


def expected_points(state: State) -> list[float]:
    """Each seat's points, with those it is about to score for sure: the last card (and the
    jackpot) exactly on target, a foul scorer's best allowed card."""
    points = [float(score) for score in state.scores]
    if state.phase == CHOICE and state.total == state.target and state.turn is not None:
        *before, last = state.display
        points[state.turn] += VALUE[last.card.face]
        if state.target == RAISED_TARGET:
            pinks = sum(placed.card.face == PINK_FOUR for placed in before)
            points[state.turn] += VALUE[PINK_FOUR] * pinks
    if state.phase == FOUL:
        for seat in state.foul_scorers:
            points[seat] += max((VALUE[card.face] for card in foul_cards(state, seat)), default=0)
    return points


def cards_to_come(state: State) -> float:
    """About how many cards are still to be played before the game ends."""
    if state.variant == SHOWDOWN:
        return state.draw_pile_size + sum(map(len, state.hands))
    if state.variant == TOO_SHORT and not state.refilled:
        discards = len(state.discarded) + len(state.display)
        return state.draw_pile_size * (1 + DISCARDED_SHARE) + discards
    return state.draw_pile_size


def _cards(state: State) -> Iterator[Card]:
    """Every card in front of the players, in the display, on the discard pile or won."""
    yield from chain.from_iterable(state.hands)
    yield from (placed.card for placed in state.display)
    yield from state.discarded
    yield from chain.from_iterable(state.won)


def _demand(cards: Iterable[Card]) -> tuple[int, ...]:
    """How many of `cards` show each face code."""
    demand = [0] * len(VALUE)
    for card in cards:
        demand[card.face] += 1
    return tuple(demand)


# --- dealing hidden backs ------------------------------------------------------------------------
# Nobody knows an unflipped back, and the deal was uniform, so every way of giving the hidden
# cards and the draw pile the kinds left over, each card a kind with its up face, is equally likely.
# Kinds join two faces in a ring (0-1-2-3-4-5-0, the 4 blue or pink), so dealing face by face
# along the ring keeps only a few kinds half-dealt: a small dynamic programme counts the ways
# exactly and draws from them.

FACE_ORDER = (4, 3, PINK_FOUR, 5, 0, 1, 2)
"""The blue 4 first, so the faces with three kinds (3 and 5) are dealt while few kinds are
half-dealt, one of them pink (there are few): the cheapest order measured."""
INVERSE_FACTORIAL = tuple(1 / factorial(n) for n in range(sum(deck_counts(0)) + 1))


class _Step(NamedTuple):
    """Dealing the cards of one face: the kinds it may be, and how they meet the half-dealt ones."""

    face: int
    kinds: tuple[int, ...]
    backs: tuple[int, ...]
    """For each kind, the back of a card of this face."""
    closes: tuple[int, ...]
    """For each kind, its place among the half-dealt kinds before this step; -1 if it opens."""
    keeps: tuple[int, ...]
    """The places of the half-dealt kinds this face does not touch."""


def _steps() -> tuple[_Step, ...]:
    steps: list[_Step] = []
    half_dealt: list[int] = []
    for face in FACE_ORDER:
        kinds = tuple(kind for kind, faces in enumerate(KINDS) if face in faces)
        closes = tuple(half_dealt.index(kind) if kind in half_dealt else -1 for kind in kinds)
        keeps = tuple(at for at, kind in enumerate(half_dealt) if kind not in kinds)
        half_dealt = [half_dealt[at] for at in keeps]
        half_dealt += [kind for kind, at in zip(kinds, closes, strict=True) if at < 0]
        backs = tuple(sum(KINDS[kind]) - face for kind in kinds)
        steps.append(_Step(face, kinds, backs, closes, keeps))
    return tuple(steps)


STEPS = _steps()

Reached = dict[tuple[int, ...], tuple[list[float], list[tuple[tuple[int, ...], tuple[int, ...]]]]]


@cache
def _splits(total: int, parts: int) -> tuple[tuple[int, ...], ...]:
    """Every way to split `total` cards over `parts` kinds."""
    if parts == 1:
        return ((total,),)
    return tuple(
        (first, *rest) for first in range(total + 1) for rest in _splits(total - first, parts - 1)
    )


@lru_cache(maxsize=64)
def _plan(demand: tuple[int, ...], supply: tuple[int, ...]) -> tuple[Reached, ...]:
    """For each step, every state it reaches (how many of each half-dealt kind are used) with the
    choices leading there: the state before, the split of the face's cards over its kinds, and the
    running total of their weights. A weight is the number of deals a choice stands for, up to a
    constant: the orders of the face's cards among its kinds, and of each kind dealt in full (the
    rest of it is in the draw pile)."""
    weights: dict[tuple[int, ...], float] = {(): 1.0}
    plan = []
    for step in STEPS:
        reached: Reached = {}
        for before, weight in weights.items():
            for split in _splits(demand[step.face], len(step.kinds)):
                factor, opened = weight, []
                for kind, count, at in zip(step.kinds, split, step.closes, strict=True):
                    used = count if at < 0 else before[at] + count
                    if used > supply[kind]:
                        break
                    factor *= INVERSE_FACTORIAL[count]
                    if at < 0:
                        opened.append(count)
                    else:
                        factor *= INVERSE_FACTORIAL[supply[kind] - used]
                else:
                    after = (*(before[at] for at in step.keeps), *opened)
                    running, choices = reached.setdefault(after, ([], []))
                    running.append((running[-1] if running else 0.0) + factor)
                    choices.append((before, split))
        plan.append(reached)
        weights = {after: running[-1] for after, (running, _) in reached.items()}
    if () not in weights:
        raise ValueError(f"no deal gives faces {demand} backs from the kinds {supply}")
    return tuple(plan)


def deal_backs(
    demand: tuple[int, ...], supply: tuple[int, ...], rng: Random
) -> tuple[list[list[int]], tuple[int, ...]]:
    """Backs for `demand[face]` hidden cards of each face code from the kind counts `supply`,
    uniformly among all deals: for each face, the backs its cards get (to `take` in any order);
    and the kinds left for the draw pile."""
    plan = _plan(demand, supply)
    backs: list[list[int]] = [[] for _ in VALUE]
    rest = list(supply)
    state: tuple[int, ...] = ()
    for step, reached in zip(reversed(STEPS), reversed(plan), strict=True):
        running, choices = reached[state]
        pick = bisect_right(running, rng.random() * running[-1])
        state, split = choices[min(pick, len(choices) - 1)]
        face_backs = backs[step.face]
        for kind, back, count in zip(step.kinds, step.backs, split, strict=True):
            rest[kind] -= count
            face_backs += [back] * count
    return backs, tuple(rest)


def take(backs: list[int], rng: Random) -> int:
    """One of `backs`, uniformly, removed from it."""
    index = int(rng.random() * len(backs))
    back = backs[index]
    backs[index] = backs[-1]
    backs.pop()
    return back


def _shown_cards(cards: Iterable[Card]) -> list[dict[str, JSON]]:
    """Cards out of anyone's hands: each one's back too once it was flipped."""
    # One comprehension, `_public_card`'s fields written out, rather than a call for each card:
    # a view shows every card played so far this way, and a search's playouts ask for a view at
    # each move.
    return [
        {
            "id": id_,
            "face": VALUE[face],
            "pink": face == PINK_FOUR,
            "flipped": revealed,
            "back": {"face": VALUE[back], "pink": back == PINK_FOUR} if revealed else None,
        }
        for id_, face, back, revealed in cards
    ]


def _placed_json(placed: Placed) -> dict[str, JSON]:
    (shown,) = _shown_cards((placed.card,))
    return {**shown, "seat": placed.seat, "stolen_from": placed.stolen_from}


def _strip_back(card: Mapping[str, JSON]) -> dict[str, JSON]:
    return {key: value for key, value in card.items() if key not in ("back", "back_pink")}


RULES = Krumme10()
