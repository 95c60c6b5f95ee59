"""Krumme10 (vielspiel, Sixt & Adams): double-sided cards into a shared display, aim for exactly 10.

Rules as enforced: `shared/rules/krumme10.md`. Every card has an up face, public, and a down face
that nobody may see before play reveals it, its owner included: only the server knows it. So every
seat sees what a spectator sees, and the only events that carry a down face (`back`) are the deals
and draws, which `redact` strips for everyone.

Cards get ids in the order they are dealt and drawn, so an id says nothing about the card. The draw
pile is the multiset of card kinds not yet drawn; each draw picks a kind and an orientation with the
rng `decide` is given. That is the chance of a shuffle with random orientations, without any future
card existing in the state before it is drawn.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from random import Random
from typing import NamedTuple

from domain import multiset
from domain.rules import FIRST_SEAT, JSON, Event, GameInfo, Option, OptionError, Result, RuleError
from domain.seating import choose_first_seat

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
CARDS_PER_PAIR = 9
HAND_SIZE = 3
TARGET = 10
RAISED_TARGET = 15

STANDARD, TOO_SHORT, SHOWDOWN = "standard", "too_short", "showdown"
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


def deck_counts(pink_fours: int) -> tuple[int, ...]:
    """How many cards of each kind the deck holds (54 in all)."""
    pink_34, pink_45 = (pink_fours + 1) // 2, pink_fours // 2
    pair = CARDS_PER_PAIR
    return (pair, pair, pair, pair - pink_34, pink_34, pair - pink_45, pink_45, pair)


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
)


class Card(NamedTuple):
    """A double-sided card: `face` is up, `back` down; `revealed` once the back was seen."""

    id: int
    face: int
    back: int
    revealed: bool = False

    def flipped(self) -> Card:
        return Card(self.id, self.back, self.face, True)


class Placed(NamedTuple):
    """A card in the display, who played it and, for a stolen card, whose it was."""

    card: Card
    seat: int
    stolen_from: int | None = None


@dataclass(frozen=True)
class State:
    hands: tuple[tuple[Card, ...], ...]
    """Each seat's cards, by id."""
    draw_pile: tuple[int, ...]
    """Count of each kind still to draw."""
    discard_pile: tuple[int, ...]
    """Count of each kind discarded (a "too_short" game draws them again)."""
    scores: tuple[int, ...]
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

    @property
    def players(self) -> int:
        return len(self.hands)

    @property
    def draw_pile_size(self) -> int:
        return sum(self.draw_pile)


# --- small helpers -------------------------------------------------------------------------------


def _replace(state: State, **changes: object) -> State:
    """`dataclasses.replace` without re-running `__init__`: evolve is the engine's hot path."""
    changed = object.__new__(State)
    changed.__dict__.update(state.__dict__, **changes)
    return changed


@cache
def seats_after(seat: int, players: int, direction: int) -> tuple[int, ...]:
    """Every other seat in turn order, starting after `seat`."""
    return tuple((seat + direction * step) % players for step in range(1, players))


def same_team(state: State, seat: int, other: int) -> bool:
    if state.teams is None:
        return seat == other
    return state.teams[seat] == state.teams[other]


def _face_code(value: int, pink: bool) -> int:
    return PINK_FOUR if pink else value


def _face_json(code: int) -> tuple[int, bool]:
    return VALUE[code], code == PINK_FOUR


def card_json(card: Card) -> dict[str, JSON]:
    """A dealt or drawn card as its event records it, its down face included (redacted)."""
    return {
        "id": card.id,
        "face": VALUE[card.face],
        "pink": card.face == PINK_FOUR,
        "back": VALUE[card.back],
        "back_pink": card.back == PINK_FOUR,
    }


def _card_from_json(data: Mapping[str, JSON]) -> Card:
    return Card(
        data["id"],
        _face_code(data["face"], data["pink"]),
        _face_code(data["back"], data["back_pink"]),
    )


def _public_card(card: Card) -> dict[str, JSON]:
    return {"id": card.id, "face": VALUE[card.face], "pink": card.face == PINK_FOUR}


def _with(
    items: tuple[tuple[Card, ...], ...], seat: int, value: tuple[Card, ...]
) -> tuple[tuple[Card, ...], ...]:
    return (*items[:seat], value, *items[seat + 1 :])


def _without_card(cards: tuple[Card, ...], card_id: int) -> tuple[Card | None, tuple[Card, ...]]:
    for index, card in enumerate(cards):
        if card.id == card_id:
            return card, cards[:index] + cards[index + 1 :]
    return None, cards


def _count_kinds(counts: tuple[int, ...], cards: list[Card], sign: int) -> tuple[int, ...]:
    changed = list(counts)
    for card in cards:
        changed[KIND_OF[card.face, card.back]] += sign
    return tuple(changed)


def _holder(state: State, card_id: int) -> tuple[int, Card | None]:
    """The seat holding card `card_id` and the card (None if nobody holds it)."""
    for seat, hand in enumerate(state.hands):
        card, _ = _without_card(hand, card_id)
        if card is not None:
            return seat, card
    return -1, None


def _add_score(scores: tuple[int, ...], seat: int, points: int) -> tuple[int, ...]:
    return (*scores[:seat], scores[seat] + points, *scores[seat + 1 :])


def _oriented(kind: int, rng: Random) -> tuple[int, int]:
    """The kind's (up, down) faces, either way up with even chance."""
    first, second = KINDS[kind]
    return (first, second) if rng.randrange(2) else (second, first)


def landing(state: State, face: int) -> tuple[int, int]:
    """Total and target after a card showing `face` lands: a 4 raises the target first."""
    value = VALUE[face]
    target = RAISED_TARGET if value == 4 else state.target
    return state.total + value, target


def _outcome_phase(state: State, may_steal: bool) -> str:
    """The step after a card landed (and after a pink 4's direction choice)."""
    if state.total > state.target:
        return FOULED
    if may_steal and state.turn is not None and _others_hold_cards(state, state.turn):
        return CHOICE
    return CHOICE if state.total == state.target else DRAWING


def _others_hold_cards(state: State, seat: int) -> bool:
    return any(hand for other, hand in enumerate(state.hands) if other != seat)


# --- evolve: one function per event --------------------------------------------------------------


def _on_cards_dealt(state: State, data: Mapping[str, JSON]) -> State:
    cards = [_card_from_json(card) for card in data["cards"]]
    return _replace(
        state,
        hands=_with(state.hands, data["seat"], tuple(cards)),
        draw_pile=_count_kinds(state.draw_pile, cards, -1),
        next_id=cards[-1].id + 1,
    )


def _on_first_seat_chosen(state: State, data: Mapping[str, JSON]) -> State:
    return _replace(state, turn=data["seat"], phase=PLAY)


def _land(state: State, placed: Placed, data: Mapping[str, JSON]) -> State:
    landed = _replace(
        state, display=(*state.display, placed), total=data["total"], target=data["target"]
    )
    face = placed.card.face
    phase = DIRECTION if face == PINK_FOUR else _outcome_phase(landed, may_steal=face == 1)
    return _replace(landed, phase=phase)


def _on_card_played(state: State, data: Mapping[str, JSON]) -> State:
    seat = data["seat"]
    card, hand = _without_card(state.hands[seat], data["card"])
    assert card is not None
    placed = Placed(card.flipped() if data["flip"] else card, seat)
    return _land(_replace(state, hands=_with(state.hands, seat, hand)), placed, data)


def _on_card_stolen(state: State, data: Mapping[str, JSON]) -> State:
    owner = data["from"]
    card, hand = _without_card(state.hands[owner], data["card"])
    assert card is not None
    placed = Placed(card.flipped(), data["seat"], owner)
    return _land(_replace(state, hands=_with(state.hands, owner, hand)), placed, data)


def _on_direction_chosen(state: State, data: Mapping[str, JSON]) -> State:
    turned = _replace(state, direction=data["direction"])
    return _replace(turned, phase=_outcome_phase(turned, may_steal=False))


def _on_steal_declined(state: State, data: Mapping[str, JSON]) -> State:
    return _replace(state, phase=DRAWING)


def _cleared(state: State, discarded: list[Card]) -> State:
    return _replace(
        state,
        discard_pile=_count_kinds(state.discard_pile, discarded, +1),
        display=(),
        total=0,
        target=TARGET,
    )


def _on_target_hit(state: State, data: Mapping[str, JSON]) -> State:
    kept = {data["card"], *data["jackpot"]}
    discarded = [placed.card for placed in state.display if placed.card.id not in kept]
    points = data["points"] + data["jackpot_points"]
    scored = _replace(state, scores=_add_score(state.scores, data["seat"], points), phase=DRAWING)
    return _cleared(scored, discarded)


def _on_fouled(state: State, data: Mapping[str, JSON]) -> State:
    scorers = tuple(data["scorers"])
    fouled = _replace(
        state,
        foul_scorers=scorers,
        foul_any_card=data["any_card"],
        phase=FOUL if scorers else DRAWING,
    )
    return _cleared(fouled, [placed.card for placed in state.display])


def _next_foul_scorer(state: State) -> State:
    rest = state.foul_scorers[1:]
    return _replace(state, foul_scorers=rest, phase=FOUL if rest else DRAWING)


def _on_foul_scored(state: State, data: Mapping[str, JSON]) -> State:
    seat = data["seat"]
    _, hand = _without_card(state.hands[seat], data["card"])
    scored = _replace(
        state,
        hands=_with(state.hands, seat, hand),
        scores=_add_score(state.scores, seat, data["points"]),
    )
    return _next_foul_scorer(scored)


def _on_foul_passed(state: State, data: Mapping[str, JSON]) -> State:
    return _next_foul_scorer(state)


def _on_card_drawn(state: State, data: Mapping[str, JSON]) -> State:
    seat, card = data["seat"], _card_from_json(data["card"])
    return _replace(
        state,
        hands=_with(state.hands, seat, (*state.hands[seat], card)),
        draw_pile=_count_kinds(state.draw_pile, [card], -1),
        next_id=card.id + 1,
    )


def _on_discard_reshuffled(state: State, data: Mapping[str, JSON]) -> State:
    return _replace(
        state,
        draw_pile=state.discard_pile,
        discard_pile=(0,) * len(KINDS),
        refilled=True,
    )


def _on_turn_passed(state: State, data: Mapping[str, JSON]) -> State:
    return _replace(state, turn=data["seat"], phase=PLAY)


def _on_game_ended(state: State, data: Mapping[str, JSON]) -> State:
    return _replace(state, turn=None, phase=OVER, foul_scorers=())


EVOLVERS: dict[str, Callable[[State, Mapping[str, JSON]], State]] = {
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
    "DiscardReshuffled": _on_discard_reshuffled,
    "TurnPassed": _on_turn_passed,
    "GameEnded": _on_game_ended,
}


def evolve(state: State, event: Event) -> State:
    try:
        evolver = EVOLVERS[event.type]
    except KeyError:
        raise ValueError(f"krumme10 has no event {event.type!r}") from None
    return evolver(state, event.data)


# --- decide --------------------------------------------------------------------------------------

MOVE_FIELDS: dict[str, frozenset[str]] = {
    "play": frozenset({"type", "card", "flip"}),
    "steal": frozenset({"type", "card"}),
    "score": frozenset({"type", "flip"}),
    "direction": frozenset({"type", "reverse"}),
    "foul_score": frozenset({"type", "card", "flip"}),
    "pass": frozenset({"type"}),
}
MOVE_SHAPES = (
    '{"type": "play", "card": <id>, "flip": <bool>}, {"type": "steal", "card": <id>}, '
    '{"type": "score", "flip": <bool>}, {"type": "direction", "reverse": <bool>}, '
    '{"type": "foul_score", "card": <id>, "flip": <bool>} or {"type": "pass"}'
)


class ParsedMove(NamedTuple):
    type: str
    card: int
    flag: bool
    """`flip` or `reverse`; False for moves without one."""


def parse_move(move: JSON) -> ParsedMove:
    """The move's fields, checked for shape only; raises RuleError("move-format")."""
    if not isinstance(move, Mapping) or not isinstance(move.get("type"), str):
        raise RuleError("move-format", f"a Krumme10 move is one of {MOVE_SHAPES}")
    kind = move["type"]
    fields = MOVE_FIELDS.get(kind)
    if fields is None or set(move) != fields:
        raise RuleError("move-format", f"a Krumme10 move is one of {MOVE_SHAPES}")
    card = move.get("card", 0)
    if isinstance(card, bool) or not isinstance(card, int) or card < 0:
        raise RuleError("move-format", "card must be the id of a card (a whole number >= 0)")
    flag = move.get("flip", move.get("reverse", False))
    if not isinstance(flag, bool):
        raise RuleError("move-format", "flip and reverse must be true or false")
    return ParsedMove(kind, card, flag)


class _Log:
    """The events decided so far and the state they lead to."""

    __slots__ = ("events", "state")

    def __init__(self, state: State) -> None:
        self.events: list[Event] = []
        self.state = state

    def emit(self, type_: str, data: dict[str, JSON]) -> None:
        event = Event(type_, data)
        self.events.append(event)
        self.state = EVOLVERS[type_](self.state, data)


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


def _play(log: _Log, seat: int, card_id: int, flip: bool) -> None:
    state = log.state
    if state.phase != PLAY:
        raise step_error(state)
    card, _ = _without_card(state.hands[seat], card_id)
    if card is None:
        raise RuleError("card-in-front", f"seat {seat} has no card {card_id} in front of them")
    face = card.back if flip else card.face
    total, target = landing(state, face)
    log.emit(
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


def _steal(log: _Log, seat: int, card_id: int) -> None:
    state = log.state
    if state.phase != CHOICE or state.display[-1].card.face != 1:
        raise RuleError("steal-with-a-1", "only a 1 that just landed lets you steal")
    owner, card = _holder(state, card_id)
    if card is None or owner == seat:
        raise RuleError(
            "steal-from-another-player", f"card {card_id} is not in front of another player"
        )
    total, target = landing(state, card.back)
    log.emit(
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


def _score(log: _Log, seat: int, flip: bool) -> None:
    state = log.state
    if state.phase != CHOICE or state.total != state.target:
        raise RuleError(
            "exactly-on-target",
            f"the display is at {state.total}, its target {state.target}: nothing to score",
        )
    last = state.display[-1].card
    face = last.back if flip else last.face
    jackpot = (
        [placed.card.id for placed in state.display[:-1] if placed.card.face == PINK_FOUR]
        if state.target == RAISED_TARGET
        else []
    )
    log.emit(
        "TargetHit",
        {
            "seat": seat,
            "card": last.id,
            "flip": flip,
            "face": VALUE[face],
            "pink": face == PINK_FOUR,
            "points": VALUE[face],
            "jackpot": jackpot,
            "jackpot_points": VALUE[PINK_FOUR] * len(jackpot),
        },
    )


def _pass(log: _Log, seat: int) -> None:
    state = log.state
    if state.phase == FOUL:
        log.emit("FoulPassed", {"seat": seat})
    elif state.phase == CHOICE and state.total < state.target:
        log.emit("StealDeclined", {"seat": seat})
    else:
        raise step_error(state)


def _direction(log: _Log, seat: int, reverse: bool) -> None:
    state = log.state
    if state.phase != DIRECTION:
        raise RuleError("pink-4-direction", "only a pink 4 that just landed lets you reverse")
    direction = -state.direction if reverse else state.direction
    log.emit("DirectionChosen", {"seat": seat, "reverse": reverse, "direction": direction})


def foul_cards(state: State, seat: int) -> tuple[Card, ...]:
    """The cards `seat` may score as foul points: the lowest by up face, or any after 15."""
    hand = state.hands[seat]
    if state.foul_any_card or not hand:
        return hand
    lowest = min(VALUE[card.face] for card in hand)
    return tuple(card for card in hand if VALUE[card.face] == lowest)


def _foul_score(log: _Log, seat: int, card_id: int, flip: bool, rng: Random) -> None:
    state = log.state
    if state.phase != FOUL:
        raise step_error(state)
    card, _ = _without_card(state.hands[seat], card_id)
    if card is None:
        raise RuleError("card-in-front", f"seat {seat} has no card {card_id} in front of them")
    if card not in foul_cards(state, seat):
        raise RuleError(
            "foul-lowest-card", "below 15 a foul scorer scores their lowest card (by up face)"
        )
    face = card.back if flip else card.face
    log.emit(
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
    if log.state.draw_pile_size:
        _draw(log, seat, rng)


def _draw(log: _Log, seat: int, rng: Random) -> bool:
    """`seat` draws one card; False if that ended the game (the draw pile ran out for good)."""
    state = log.state
    face, back = _oriented(multiset.draw(state.draw_pile, rng), rng)
    log.emit("CardDrawn", {"seat": seat, "card": card_json(Card(state.next_id, face, back))})
    state = log.state
    if state.draw_pile_size or state.variant == SHOWDOWN:
        return True
    if state.variant == TOO_SHORT and not state.refilled:
        log.emit("DiscardReshuffled", {"cards": sum(state.discard_pile)})
        if log.state.draw_pile_size:
            return True
    log.emit("GameEnded", {"reason": "draw-pile-empty"})
    return False


def _foul(log: _Log) -> None:
    state = log.state
    assert state.turn is not None
    scorers = [
        seat
        for seat in seats_after(state.turn, state.players, state.direction)
        if state.hands[seat] and not same_team(state, seat, state.turn)
    ]
    log.emit(
        "Fouled",
        {
            "seat": state.turn,
            "total": state.total,
            "target": state.target,
            "any_card": state.target == RAISED_TARGET,
            "scorers": scorers,
        },
    )


def _end_turn(log: _Log, rng: Random) -> None:
    """Everyone draws back to three, the mover last; then the next seat that can play moves."""
    state = log.state
    mover = state.turn
    assert mover is not None
    for seat in (*seats_after(mover, state.players, state.direction), mover):
        while len(log.state.hands[seat]) < HAND_SIZE and log.state.draw_pile_size:
            if not _draw(log, seat, rng):
                return
    state = log.state
    for seat in (*seats_after(mover, state.players, state.direction), mover):
        if state.hands[seat]:
            log.emit("TurnPassed", {"seat": seat})
            return
    log.emit("GameEnded", {"reason": "cards-gone"})


def _advance(log: _Log, rng: Random) -> None:
    """The events that follow by rule alone, until a seat must choose or the game is over."""
    while True:
        if log.state.phase == FOULED:
            _foul(log)
        elif log.state.phase == DRAWING:
            _end_turn(log, rng)
        else:
            return


# --- the game ------------------------------------------------------------------------------------


class Krumme10:
    """Krumme10 behind the rules contract."""

    info: GameInfo = INFO

    def initial_state(self, players: int, options: Mapping[str, JSON]) -> State:
        pink_fours = options.get(PINK_FOURS.name, PINK_FOURS.default)
        return State(
            hands=((),) * players,
            draw_pile=deck_counts(pink_fours),
            discard_pile=(0,) * len(KINDS),
            scores=(0,) * players,
            teams=team_seating(players, options),
            variant=options.get(VARIANT.name, VARIANT.default),
        )

    def setup(self, players: int, options: Mapping[str, JSON], rng: Random) -> list[Event]:
        counts = deck_counts(options.get(PINK_FOURS.name, PINK_FOURS.default))
        deck = [kind for kind, count in enumerate(counts) for _ in range(count)]
        rng.shuffle(deck)
        events = []
        for seat in range(players):
            dealt = range(seat * HAND_SIZE, (seat + 1) * HAND_SIZE)
            cards = [card_json(Card(index, *_oriented(deck[index], rng))) for index in dealt]
            events.append(Event("CardsDealt", {"seat": seat, "cards": cards}))
        first = choose_first_seat(players, options, rng)
        events.append(Event("FirstSeatChosen", {"seat": first}))
        return events

    def evolve(self, state: State, event: Event) -> State:
        return evolve(state, event)

    def to_act(self, state: State) -> frozenset[int]:
        if state.phase == FOUL:
            return frozenset({state.foul_scorers[0]})
        if state.phase in (PLAY, DIRECTION, CHOICE) and state.turn is not None:
            return frozenset({state.turn})
        return frozenset()

    def legal_moves(self, state: State, seat: int) -> list[JSON]:
        phase = state.phase
        if phase == FOUL:
            if seat != state.foul_scorers[0]:
                return []
            moves: list[JSON] = [
                {"type": "foul_score", "card": card.id, "flip": flip}
                for card in foul_cards(state, seat)
                for flip in (False, True)
            ]
            moves.append({"type": "pass"})
            return moves
        if seat != state.turn:
            return []
        if phase == PLAY:
            return [
                {"type": "play", "card": card.id, "flip": flip}
                for card in state.hands[seat]
                for flip in (False, True)
            ]
        if phase == DIRECTION:
            return [{"type": "direction", "reverse": reverse} for reverse in (False, True)]
        if phase != CHOICE:
            return []
        if state.total == state.target:
            moves = [{"type": "score", "flip": flip} for flip in (False, True)]
        else:
            moves = [{"type": "pass"}]
        if state.display[-1].card.face == 1:
            moves += [
                {"type": "steal", "card": card.id}
                for card in sorted(
                    (
                        card
                        for other, hand in enumerate(state.hands)
                        if other != seat
                        for card in hand
                    ),
                    key=lambda card: card.id,
                )
            ]
        return moves

    def decide(self, state: State, seat: int, move: JSON, rng: Random) -> list[Event]:
        parsed = parse_move(move)
        if seat not in self.to_act(state):
            raise RuleError("turn-order", f"seat {seat} may not act now")
        log = _Log(state)
        match parsed.type:
            case "play":
                _play(log, seat, parsed.card, parsed.flag)
            case "steal":
                _steal(log, seat, parsed.card)
            case "score":
                _score(log, seat, parsed.flag)
            case "direction":
                _direction(log, seat, parsed.flag)
            case "foul_score":
                _foul_score(log, seat, parsed.card, parsed.flag, rng)
            case _:
                _pass(log, seat)
        _advance(log, rng)
        return log.events

    def view(self, state: State, seat: int | None) -> dict[str, JSON]:
        # Nobody sees a down face, so every seat sees what a spectator sees.
        return {
            "hands": [[_public_card(card) for card in hand] for hand in state.hands],
            "draw_pile": state.draw_pile_size,
            "discard_pile": sum(state.discard_pile),
            "display": [_placed_json(placed) for placed in state.display],
            "total": state.total,
            "target": state.target,
            "scores": list(state.scores),
            "teams": None if state.teams is None else list(state.teams),
            "turn": state.turn,
            "direction": "clockwise" if state.direction == 1 else "counterclockwise",
            "phase": state.phase,
            "foul": (
                {"scorers": list(state.foul_scorers), "any_card": state.foul_any_card}
                if state.phase == FOUL
                else None
            ),
            "variant": state.variant,
            "refilled": state.refilled,
        }

    def redact(self, event: Event, seat: int | None) -> Event | None:
        if event.type == "CardsDealt":
            cards = [_strip_back(card) for card in event.data["cards"]]
            return Event(event.type, {**event.data, "cards": cards}, event.v)
        if event.type == "CardDrawn":
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
        members = [
            [seat for seat, team in enumerate(state.teams) if team == number]
            for number in range(max(state.teams) + 1)
        ]
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
            "teams": members,
            "team_points": points,
            "team_scores": [float(score) for score in team_scores],
        }
        return Result(winners=winners, scores=state.scores, details=details)

    def conceal(self, state: State, seat: int | None, rng: Random) -> State:
        # Every seat, the owner included, knows the same: only the backs of cards never flipped
        # and the draw pile are hidden. Deal those again from their common pool, keeping faces.
        pool = [kind for kind, count in enumerate(state.draw_pile) for _ in range(count)]
        hidden = [card for hand in state.hands for card in hand if not card.revealed]
        hidden += [placed.card for placed in state.display if not placed.card.revealed]
        pool += [KIND_OF[card.face, card.back] for card in hidden]
        for _ in range(20):
            rng.shuffle(pool)
            backs = _assign_backs(hidden, pool)
            if backs is not None:
                return _with_backs(state, backs, pool)
        return state


def _assign_backs(hidden: list[Card], pool: list[int]) -> dict[int, int] | None:
    """A back for every hidden card from `pool` (consumed), matching its face; None if stuck."""
    backs: dict[int, int] = {}
    for card in hidden:
        for index, kind in enumerate(pool):
            first, second = KINDS[kind]
            if card.face in (first, second):
                backs[card.id] = second if card.face == first else first
                del pool[index]
                break
        else:
            return None
    return backs


def _with_backs(state: State, backs: dict[int, int], rest: list[int]) -> State:
    def rebacked(card: Card) -> Card:
        back = backs.get(card.id)
        return card if back is None else card._replace(back=back)

    draw_pile = [0] * len(KINDS)
    for kind in rest:
        draw_pile[kind] += 1
    return _replace(
        state,
        hands=tuple(tuple(rebacked(card) for card in hand) for hand in state.hands),
        display=tuple(placed._replace(card=rebacked(placed.card)) for placed in state.display),
        draw_pile=tuple(draw_pile),
    )


def _placed_json(placed: Placed) -> dict[str, JSON]:
    card = placed.card
    back = None
    if card.revealed:
        value, pink = _face_json(card.back)
        back = {"face": value, "pink": pink}
    return {
        **_public_card(card),
        "seat": placed.seat,
        "flipped": card.revealed,
        "back": back,
        "stolen_from": placed.stolen_from,
    }


def _strip_back(card: Mapping[str, JSON]) -> dict[str, JSON]:
    return {key: value for key, value in card.items() if key not in ("back", "back_pink")}


RULES = Krumme10()
