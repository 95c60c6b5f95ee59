"""Wobble: the 138-card shedding game with attacks, defences, Jerk cards and toss-ins out of turn.

Rules as enforced: `docs/rules/wobble.md`. A card is a string code (`cyan:7`, `green:+3`,
`swap:cyan/yellow`, `grey:mirror`, `brown:not_me`); identical cards share a code, so a hand is a
sorted tuple of codes and the draw pile is a count per code: every draw picks from that multiset
with the rng `decide` is given, so no future card exists in the state before it is drawn.

`decide` validates a move against `legal_moves` and records the choices and chance outcomes;
`evolve` applies the rules to them (who is targeted, who moves next), so a replay never re-rolls.
Several seats may act at once (`may_act`): the seat to move (or the target of an attack), every
seat that may toss in the identical card, and every seat that may play a Jerk card. Only the first
is public (`to_act`); the others learn their chance from their own legal moves. The log decides
who was first; a move decided on an older version is refused by the table's expected version.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import accumulate, chain, compress
from math import exp, sqrt
from operator import mul, sub
from random import Random

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
    Option,
    OptionError,
    Result,
    RuleError,
    evolved,
    listed,
    remembers_last_answer,
)
from domain.seating import only, winners_by

COLOURS = ("magenta", "cyan", "yellow", "green")
SWAP_PAIRS = (("magenta", "cyan"), ("cyan", "yellow"), ("yellow", "green"), ("green", "magenta"))
HAND_SIZE = 6

NUMBER, OFFENSIVE, NEUTRAL, SWAP, GREY, BROWN = (
    "number",
    "offensive",
    "neutral",
    "swap",
    "grey",
    "brown",
)
SKIP, PLUS3, PLUS5, MINUS20, MAGNET, AFK = "skip", "+3", "+5", "minus20", "magnet", "afk"
REVERSE, HALF_HAND, CARD_EXCHANGE, COLOR_SWAP = (
    "reverse",
    "half_hand",
    "card_exchange",
    "color_swap",
)
DODGE, YOU, MIRROR, UNLUCKY = "dodge", "you", "mirror", "unlucky"
NOT_ME, CAPTURE, DOUBLE = "not_me", "capture", "double"
DRAW_ATTACKS = (PLUS3, PLUS5)

# `evaluate`'s weights, fitted (by log loss of the final winners) to positions of games played
# by random and by heuristic bots, two to eight players.
GOING_OUT = 0.3
"""How much each card fewer raises the odds (as a log factor) of going out first."""
HAND_WEIGHT = 0.2
"""How much of its hand's points a seat that does not go out is expected to score: hands
change a lot before a round ends."""
ROUND_SPREAD = 30.0
"""Minus points of doubt about the standing even when the game ends this round."""
GAME_SPREAD = 2.0
"""Further doubt per square root of the minus points left before the limit."""

OFFENSIVE_UNITS = {SKIP: 1, PLUS3: 3, PLUS5: 5, MINUS20: 20, MAGNET: 1, AFK: 1}
"""What one offensive card adds to an attack: turns lost, cards drawn, points, names, sit-outs."""


@dataclass(frozen=True)
class Kind:
    """One symbol of the deck: its group, standard count, the most the `deck` option allows."""

    symbol: str
    group: str
    standard: int
    most: int
    first_game: bool


KINDS = (
    *(Kind(str(n), NUMBER, 1 if n == 0 else 2, 1 if n == 0 else 2, True) for n in range(10)),
    Kind(SKIP, OFFENSIVE, 2, 2, True),
    Kind(PLUS3, OFFENSIVE, 2, 2, True),
    Kind(PLUS5, OFFENSIVE, 1, 2, True),
    Kind(MINUS20, OFFENSIVE, 1, 2, False),
    Kind(MAGNET, OFFENSIVE, 1, 2, True),
    Kind(AFK, OFFENSIVE, 1, 2, False),
    Kind(REVERSE, NEUTRAL, 2, 2, True),
    Kind(HALF_HAND, NEUTRAL, 1, 1, False),
    Kind(CARD_EXCHANGE, NEUTRAL, 1, 1, False),
    Kind(COLOR_SWAP, SWAP, 1, 1, True),
    Kind(DODGE, GREY, 2, 4, True),
    Kind(YOU, GREY, 2, 4, True),
    Kind(MIRROR, GREY, 2, 4, True),
    Kind(UNLUCKY, GREY, 1, 4, False),
    Kind(NOT_ME, BROWN, 1, 4, False),
    Kind(CAPTURE, BROWN, 1, 4, False),
    Kind(DOUBLE, BROWN, 1, 4, False),
)
"""The deck, per symbol: coloured kinds count per colour, Color Swap per colour pair."""
KIND_BY_SYMBOL = {kind.symbol: kind for kind in KINDS}
MIN_NUMBER_CARDS = 8 * HAND_SIZE + 1
"""Number cards alone can deal eight hands and turn a starting card."""


@dataclass(frozen=True)
class Card:
    """What a card code stands for."""

    code: str
    symbol: str
    group: str
    colours: tuple[str, ...]
    """Its colour (two for a Color Swap, none for grey and brown)."""
    value: int
    """Minus points when it is left in a hand."""
    pairable: bool
    """Two identical ones may be played together (their action counts double)."""


def _card(code: str, symbol: str, group: str, colours: tuple[str, ...]) -> Card:
    value = int(symbol) if group == NUMBER else 70 if group == BROWN else 20
    pairable = group == OFFENSIVE or symbol == REVERSE or (group == NUMBER and symbol != "0")
    return Card(code, symbol, group, colours, value, pairable)


def _all_cards() -> tuple[Card, ...]:
    cards: list[Card] = []
    for kind in KINDS:
        if kind.group in (NUMBER, OFFENSIVE, NEUTRAL):
            cards += [_card(f"{c}:{kind.symbol}", kind.symbol, kind.group, (c,)) for c in COLOURS]
        elif kind.group == SWAP:
            cards += [_card(f"swap:{a}/{b}", kind.symbol, SWAP, (a, b)) for a, b in SWAP_PAIRS]
        else:
            cards.append(_card(f"{kind.group}:{kind.symbol}", kind.symbol, kind.group, ()))
    return tuple(cards)


CARDS = _all_cards()
CARD = {card.code: card for card in CARDS}
CODES = tuple(card.code for card in CARDS)
INDEX = {card.code: index for index, card in enumerate(CARDS)}
GREY_CODES = frozenset(card.code for card in CARDS if card.group == GREY)
BROWN_CODES = frozenset(card.code for card in CARDS if card.group == BROWN)
"""The defence and the Jerk cards: which of a hand's cards are, looked up as a set."""
COLOUR_CODES = frozenset(card.code for card in CARDS if card.group not in (GREY, BROWN))
"""The cards with a colour: the ones that may be the starting card."""
CODES_OF_SYMBOL = {
    kind.symbol: frozenset(card.code for card in CARDS if card.symbol == kind.symbol)
    for kind in KINDS
}
"""The codes of each symbol (its colours): an attack is passed on with a card of its symbol."""
NO_CARDS = (0,) * len(CARDS)
VALUE = {card.code: card.value for card in CARDS}
"""Each card's minus points, looked up without the `Card` in between."""


class DeckOption(Option):
    """`deck`: "standard", or overrides of it such as "afk=0,not_me=2" (counts per colour)."""

    def check(self, value: JSON) -> None:
        super().check(value)
        parse_deck(value)


def parse_deck(value: str) -> dict[str, int]:
    """Count per symbol of the deck `value` names; raise `OptionError` if it is not a deck."""
    counts = {kind.symbol: kind.standard for kind in KINDS}
    if value != "standard":
        for item in value.split(","):
            symbol, _, count = item.strip().partition("=")
            kind = KIND_BY_SYMBOL.get(symbol)
            if kind is None or not count.isdigit() or not 0 <= int(count) <= kind.most:
                raise OptionError(
                    "deck",
                    f"item {item!r} is not symbol=count with a known symbol "
                    f"{sorted(KIND_BY_SYMBOL)} and a count up to its maximum",
                )
            counts[symbol] = int(count)
    numbers = sum(counts[str(n)] for n in range(10)) * len(COLOURS)
    if numbers < MIN_NUMBER_CARDS:
        raise OptionError("deck", f"needs at least {MIN_NUMBER_CARDS} number cards, not {numbers}")
    return counts


@cache
def deck_counts(deck: str, first_game: bool) -> tuple[int, ...]:
    """The count of each card code (in `CARDS` order) of a deck."""
    per_symbol = parse_deck(deck)
    return tuple(
        0 if first_game and not KIND_BY_SYMBOL[card.symbol].first_game else per_symbol[card.symbol]
        for card in CARDS
    )


DECK = DeckOption(
    name="deck",
    default="standard",
    kind=str,
    description='The deck: "standard" (138 cards), or changes to it as "symbol=count,..." with '
    "counts per colour (per colour pair for color_swap; in all for grey and brown symbols).",
)
FIRST_GAME = Option(
    name="first_game",
    default=False,
    kind=bool,
    description="Play with the number cards, Change of direction, Color Swap, Skip, +3, +5, "
    "Magnet, Dodge, You! and Mirror only.",
)
TASKS = Option(
    name="tasks",
    default="off",
    kind=str,
    choices=("off", "table"),
    description='"off": the target of +3/+5 draws; "table": the target may attempt the printed '
    "task instead, and the card's player reports success (nothing drawn) or failure (draw double).",
)
SCORE_LIMIT = Option(
    name="score_limit",
    default=500,
    kind=int,
    minimum=1,
    maximum=100_000,
    description="The game ends after the round in which a seat reaches this many minus points.",
)

INFO = GameInfo(
    id="wobble",
    title="Wobble",
    min_players=2,
    max_players=8,
    options=(FIRST_SEAT, DECK, FIRST_GAME, TASKS, SCORE_LIMIT),
    # Minus 20 can hit a seat any number of times in a round, so no finite bound is exact.
    score_range=(0, 2**31 - 1),
    summary="Shed your hand onto the discard pile by colour or symbol; attack with +3, Skip and "
    "Magnet, defend with grey cards, jerk the attack away with brown ones, toss in identical cards "
    "out of turn. Fewest minus points win.",
    # 2: the first dealer is drawn; who just played (and the dealer on the starting card) may
    # toss in its twin; a Double on a Skip costs only its target, twice.
    # 3: an AFK seat waits until each other seat has had its turn (passed over or tossing in
    # counts), no longer for as many turns of any seats.
    rules_version=3,
)

DEALING, OPENING, TURN, DRAWN, ATTACK, RESOLVE, OVER = (
    "dealing",
    "opening",
    "turn",
    "drawn",
    "attack",
    "resolve",
    "over",
)
NAME, TASK, REPORT = "name", "task", "report"
SEAT_TO_MOVE = frozenset({OPENING, DRAWN, TURN})
"""The phases in which `turn` names the seat to move: looked up as a set, not compared in turn."""


@dataclass(frozen=True)
class Attack:
    """The open offensive stack: its symbol, summed effect, who owns and who faces it."""

    symbol: str
    amount: int
    owner: int
    """Who played (or captured) its last card."""
    target: int
    directed_by: int
    """Who last aimed it at the target (the owner, or a defender)."""
    passed: bool = False
    """Passed on at least once: a Mirror then sends it back to the owner."""
    jerk_open: bool = True
    """No Jerk card has been played on its top card yet."""
    doubled: int = 0
    """Doubles played on a Skip stack: each doubles the turns its target loses (only theirs)."""
    dealt: bool = False
    """Its card is the starting card, turned up by the deal for the dealer: no seat played it.
    A Jerk card played on it, or a grey card sending it on, leaves it so; a pass or a capture
    makes it a seat's."""


@dataclass(frozen=True)
class Step:
    """One pending part of an accepted attack: `seat` names a number, chooses or reports a task."""

    kind: str
    seat: int
    subject: int
    """Whose task a report is about (else the seat itself)."""


@dataclass(frozen=True)
class State:
    players: int
    deck: tuple[int, ...]
    tasks: bool
    score_limit: int
    first_dealer: int | None
    """The first round's dealer; None until the seeded generator has drawn it."""
    scores: tuple[int, ...]
    ring: tuple[int, ...]
    """Seats in clockwise order of the places they sit at (a 0 lets two swap places)."""
    round: int = -1
    dealer: int = 0
    direction: int = 1
    hands: tuple[tuple[str, ...], ...] = ()
    draw: tuple[int, ...] = NO_CARDS
    discard: tuple[int, ...] = NO_CARDS
    """Count of each card under the top card of the discard pile that was played face up."""
    buried: tuple[int, ...] = NO_CARDS
    """Count of each card a Half Hand put face down under the discard pile."""
    top: str | None = None
    colour: str | None = None
    phase: str = DEALING
    turn: int | None = None
    drawn: str | None = None
    """The drawn card the seat to move must play at once."""
    attack: Attack | None = None
    steps: tuple[Step, ...] = ()
    toss: str | None = None
    """The card that may be tossed in on now (its window is open)."""
    toss_by: int | None = None
    named: tuple[int, ...] = ()
    lost: tuple[int, ...] = ()
    """Turns each seat will lose (Skip)."""
    away: tuple[tuple[int, ...], ...] = ()
    """Per seat sitting out (AFK): how many more turns of each seat, by seat, it waits for;
    `()` for a seat that plays, so that `state.away[seat]` is true only while it sits out.
    Under rules version 2, one count for a seat sitting out: the turns of any seats it waits for."""
    afk_counts_any_turns: bool = False
    """Rules version 2: an AFK seat sits out `amount` turns of any seats per other seat, a
    toss-in counting as nobody's turn; since version 3 it waits for each other seat's own."""

    @property
    def draw_size(self) -> int:
        return sum(self.draw)

    @property
    def discard_size(self) -> int:
        return sum(self.discard) + sum(self.buried)


# -- small pure helpers ---------------------------------------------------------------------------


def _remove(hand: tuple[str, ...], cards: Iterable[str]) -> tuple[str, ...]:
    remaining = list(hand)
    for card in cards:
        remaining.remove(card)
    return tuple(remaining)


def _add(hand: tuple[str, ...], cards: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted((*hand, *cards)))


def _count(counts: tuple[int, ...], cards: Iterable[str], sign: int) -> tuple[int, ...]:
    changed = list(counts)
    for card in cards:
        changed[INDEX[card]] += sign
    return tuple(changed)


# Each code as a tuple of one: times a count, that many copies. `itertools.repeat` did the same
# but parsed its arguments anew for every one of the 138 codes, which cost more than the copying.
_ONES = tuple((code,) for code in CODES)


def _multiset(counts: Iterable[int]) -> list[str]:
    """Each code as many times as `counts` says, in `CARDS` order."""
    return list(chain.from_iterable(map(mul, _ONES, counts)))


@cache
def _deck_cards(deck: tuple[int, ...]) -> tuple[str, ...]:
    """`_multiset(deck)` for a whole deck, listed once per deck rather than at every deal."""
    return tuple(_multiset(deck))


def _sorted_multiset(counts: tuple[int, ...]) -> list[str]:
    """`sorted(_multiset(counts))`, repeating only the codes present: the face-up discards that
    `view` lists are a few dozen of the 138 codes, and sorting those few cost less than
    repeating every other code zero times: a view costs a third fewer instructions."""
    present = map(mul, compress(_ONES, counts), compress(counts, counts))
    return sorted(chain.from_iterable(present))


def _sample(counts: tuple[int, ...], size: int, rng: Chance) -> list[str]:
    """`size` cards drawn without replacement from the multiset `counts` (fewer if it runs out)."""
    remaining = list(counts)
    picked = []
    for _ in range(size):
        index = _pick(remaining, rng)
        if index is None:
            break
        remaining[index] -= 1
        picked.append(CODES[index])
    return sorted(picked)


def _pick(counts: Sequence[int], rng: Chance) -> int | None:
    """The index of one card drawn from the multiset `counts`; None if it is empty."""
    # The card whose run of copies, laid out in `CARDS` order, covers the position drawn: the
    # first whose running total exceeds it. The last running total is the cards left, so no
    # `sum` of the pile is needed besides.
    running = list(accumulate(counts))
    if not running[-1]:
        return None
    return bisect_right(running, rng.randrange(running[-1]))


def _next(state: State, seat: int) -> int:
    """The seat after `seat` in the direction of play."""
    ring = state.ring
    return ring[(ring.index(seat) + state.direction) % state.players]


def next_target(state: State, seat: int) -> int:
    """The next player after `seat` who is not away (AFK); the plain next one if all others are."""
    ring, n = state.ring, state.players
    position = ring.index(seat)
    for step in range(1, n):
        other = ring[(position + step * state.direction) % n]
        if not state.away[other]:
            return other
    return ring[(position + state.direction) % n]


def _had_a_turn(away: tuple[tuple[int, ...], ...], seat: int) -> tuple[tuple[int, ...], ...]:
    """`away` once `seat` has had a turn: each seat sitting out waits for one fewer of its
    turns, and comes back once it waits for none."""
    changed = list(away)
    for other, waits in enumerate(away):
        if waits and waits[seat]:
            fewer = with_item(waits, seat, waits[seat] - 1)
            changed[other] = fewer if any(fewer) else ()
    return tuple(changed)


def _seats_from(state: State, first: int) -> list[int]:
    """Every seat in the direction of play, starting with `first`."""
    ring, n = state.ring, state.players
    position = ring.index(first)
    return [ring[(position + step * state.direction) % n] for step in range(n)]


def matches(state: State, card: Card) -> bool:
    """Whether `card` may be played on the discard pile on a turn (no attack open)."""
    return _fits(state.top, state.colour, card)


def _fits(top_code: str | None, colour: str | None, card: Card) -> bool:
    """Whether `card` may be played on the top card `top_code` with `colour` to follow."""
    if card.group in (GREY, BROWN) or top_code is None:
        return False
    top = CARD[top_code]
    if card.group == SWAP:
        return colour in card.colours or top.group == SWAP
    return card.colours[0] == colour or card.symbol == top.symbol


@lru_cache(maxsize=1024)
def _matching(top: str | None, colour: str | None) -> frozenset[str]:
    """The codes that `matches` on `top` with `colour`: each turn checks a whole hand against
    them, and there are only a few hundred tops and colours."""
    return frozenset(card.code for card in CARDS if _fits(top, colour, card))


def choices(state: State, seat: int, card: Card) -> list[dict[str, JSON]]:
    """The choices playing `card` asks for, each as the move fields that carry it."""
    if card.symbol == "0":
        others = (other for other in range(state.players) if other != seat)
        return [{"swap_with": None}, *({"swap_with": other} for other in others)]
    if card.symbol == CARD_EXCHANGE:
        return [{"exchange_with": other} for other in range(state.players) if other != seat]
    if card.symbol == HALF_HAND:
        return [{"discard_half": False}, {"discard_half": True}]
    if card.group == SWAP:
        if state.colour in card.colours:
            return [{"colour": next(c for c in card.colours if c != state.colour)}]
        return [{"colour": colour} for colour in card.colours]
    return [{}]


CHOOSING = frozenset(
    card.code
    for card in CARDS
    if card.symbol in ("0", CARD_EXCHANGE, HALF_HAND) or card.group == SWAP
)
"""The cards whose play asks for more than `choices`' one empty choice."""

SHEDDING_MOVES: dict[str, dict[str, tuple[JSON, JSON | None]]] = {
    kind: {
        code: ({"type": kind, "cards": [code]}, {"type": kind, "cards": [code, code]})
        if CARD[code].pairable
        else ({"type": kind, "cards": [code]}, None)
        for code in CODES
        if code not in CHOOSING
    }
    for kind in ("play", "toss", "pass")
}
"""Per kind of move that sheds cards, the move of each card without choices alone and as a pair
(None if it does not pair): built once, as every state lists them, and shared by their lists."""
DRAW: JSON = {"type": "draw"}
ACCEPT: JSON = {"type": "accept"}
"""The commonest moves without cards, shared by the lists as `SHEDDING_MOVES` are."""


def reporter(attack: Attack, subject: int) -> int:
    """Who reports `subject`'s task: the card's owner, or who aimed it if the owner is `subject`."""
    return attack.owner if attack.owner != subject else attack.directed_by


def points(hand: Iterable[str]) -> int:
    return sum(map(VALUE.__getitem__, hand))


# -- folding events -------------------------------------------------------------------------------

# Evolvers answer the fields an event changes, not a new state: `evolve` copies the state once
# with them, and a move's `FoldingDecision` writes them into the one copy it makes for it. Where a
# later rule of the same event reads a field an earlier one changed (the next seat after a
# Reverse, say), it reads it from a copy of the state with that change.


def _on_round_started(state: State, data: Mapping[str, JSON]) -> Changes:
    n = state.players
    return {
        "first_dealer": data["dealer"] if data["round"] == 0 else state.first_dealer,
        "round": data["round"],
        "dealer": data["dealer"],
        "direction": 1,
        "hands": ((),) * n,
        "draw": state.deck,
        "discard": NO_CARDS,
        "buried": NO_CARDS,
        "top": None,
        "colour": None,
        "phase": DEALING,
        "turn": None,
        "drawn": None,
        "attack": None,
        "steps": (),
        "toss": None,
        "toss_by": None,
        "named": (),
        "lost": (0,) * n,
        "away": ((),) * n,
    }


def _on_cards_dealt(state: State, data: Mapping[str, JSON]) -> Changes:
    cards = data["cards"]
    return {
        "hands": with_item(state.hands, data["seat"], tuple(sorted(cards))),
        "draw": _count(state.draw, cards, -1),
    }


def _on_start_card_turned(state: State, data: Mapping[str, JSON]) -> Changes:
    seat, card = data["seat"], CARD[data["card"]]
    turned: Changes = {
        "draw": _count(state.draw, [card.code], -1),
        "top": card.code,
        "colour": card.colours[0] if card.group != SWAP else None,
    }
    state = replace(state, **turned)
    options = choices(state, seat, card)
    if len(options) > 1:
        return turned | {"phase": OPENING, "turn": seat}
    return turned | _played(state, seat, card, 1, options[0], hands=state.hands, dealt=True)


def _on_start_card_resolved(state: State, data: Mapping[str, JSON]) -> Changes:
    card = CARD[state.top or ""]
    return _played(state, data["seat"], card, 1, data, hands=state.hands, dealt=True)


def _on_cards_played(state: State, data: Mapping[str, JSON]) -> Changes:
    seat, cards = data["seat"], data["cards"]
    tossed: Changes = {}
    if data["how"] == "toss" and any(state.away) and not state.afk_counts_any_turns:
        # wobble.md: a toss-in acts as its tosser's play, and play goes on after the tosser
        # as after its turn, so a seat sitting out counts it as the tosser's turn.
        state = replace(state, away=_had_a_turn(state.away, seat))
        tossed["away"] = state.away
    hands = with_item(state.hands, seat, _remove(state.hands[seat], cards))
    # The old top card and the second card of a pair end up under the new top card.
    covered = cards[1:] if state.top is None else [state.top, *cards[1:]]
    return {
        **tossed,
        "hands": hands,
        "discard": _count(state.discard, covered, 1),
        "top": cards[0],
        "drawn": None,
        **_played(state, seat, CARD[cards[0]], len(cards), data, hands=hands),
    }


def _played(
    state: State,
    seat: int,
    card: Card,
    copies: int,
    data: Mapping[str, JSON],
    *,
    hands: tuple[tuple[str, ...], ...],
    dealt: bool = False,
) -> Changes:
    """The fields that change as `copies` of `card`, just put on the discard pile by `seat`, act.

    `hands`: the hands once the cards are laid down. `dealt`: the card is the starting card,
    turned up by the deal, so an attack it opens is the deal's."""
    colour = data["colour"] if card.group == SWAP else card.colours[0]
    changes: Changes = {"colour": colour, "toss": card.code, "toss_by": seat}
    if card.group == OFFENSIVE:
        open_attack = state.attack
        amount, doubled = OFFENSIVE_UNITS[card.symbol] * copies, 0
        if open_attack is not None:
            # A stack passed on keeps what was done to it, a Double included.
            amount += open_attack.amount
            doubled = open_attack.doubled
        target = next_target(state, seat)
        passed = open_attack is not None
        attack = Attack(
            card.symbol, amount, seat, target, seat, passed, doubled=doubled, dealt=dealt
        )
        changes |= {"phase": ATTACK, "turn": None, "attack": attack}
        return changes
    # The turn passes on in the new direction or seating, so it is found on a state with it.
    if card.symbol == REVERSE and copies % 2:
        state = replace(state, direction=-state.direction)
        changes["direction"] = state.direction
    elif card.symbol == "0" and data.get("swap_with") is not None:
        ring = list(state.ring)
        mine, theirs = ring.index(seat), ring.index(data["swap_with"])
        ring[mine], ring[theirs] = ring[theirs], ring[mine]
        state = replace(state, ring=tuple(ring))
        changes["ring"] = state.ring
    elif card.symbol == CARD_EXCHANGE:
        other = data["exchange_with"]
        exchanged = list(hands)
        exchanged[seat], exchanged[other] = exchanged[other], exchanged[seat]
        changes["hands"] = tuple(exchanged)
    changes |= _give_turn(state, _next(state, seat))
    return changes


def _on_half_hand_discarded(state: State, data: Mapping[str, JSON]) -> Changes:
    seat, cards = data["seat"], data["cards"]
    return {
        "hands": with_item(state.hands, seat, _remove(state.hands[seat], cards)),
        "buried": _count(state.buried, cards, 1),
    }


def _on_card_drawn(state: State, data: Mapping[str, JSON]) -> Changes:
    seat, card = data["seat"], data["card"]
    if card is None:
        return {"toss": None, **_give_turn(state, _next(state, seat))}
    index = INDEX[card]
    drawn: Changes = {
        "hands": with_item(state.hands, seat, _add(state.hands[seat], [card])),
        # One count changed in place of `_count`'s loop over a list of one card.
        "draw": with_item(state.draw, index, state.draw[index] - 1),
        "toss": None,
    }
    if card in _matching(state.top, state.colour):
        drawn |= {"phase": DRAWN, "drawn": card}
    else:
        drawn |= _give_turn(state, _next(state, seat))
    return drawn


def _on_cards_drawn(state: State, data: Mapping[str, JSON]) -> Changes:
    seat, cards = data["seat"], data["cards"]
    return {
        "hands": with_item(state.hands, seat, _add(state.hands[seat], cards)),
        "draw": _count(state.draw, cards, -1),
    }


def _on_discards_reshuffled(state: State, data: Mapping[str, JSON]) -> Changes:
    piles = zip(state.draw, state.discard, state.buried, strict=True)
    return {"draw": tuple(map(sum, piles)), "discard": NO_CARDS, "buried": NO_CARDS}


def _on_greys_exchanged(state: State, data: Mapping[str, JSON]) -> Changes:
    seat, shown, drawn = data["seat"], data["shown"], data["drawn"]
    hand = _add(_remove(state.hands[seat], shown), drawn)
    return {
        "hands": with_item(state.hands, seat, hand),
        "draw": _count(_count(state.draw, shown, 1), drawn, -1),
        "toss": None,
        **_give_turn(state, _next(state, seat)),
    }


def _give_turn(state: State, seat: int) -> Changes:
    """The turn goes to `seat`, or on to the first seat that neither loses it nor is away."""
    if not state.lost[seat] and not any(state.away):
        # The usual case: `seat` simply moves, and no turn lost or sat out changes.
        return {"phase": TURN, "turn": seat, "drawn": None, "attack": None, "steps": ()}
    reach = _reached_counting_any_turns if state.afk_counts_any_turns else _reached
    seat, lost, away = reach(state, seat)
    return {
        "phase": TURN,
        "turn": seat,
        "drawn": None,
        "attack": None,
        "steps": (),
        "lost": lost,
        "away": away,
    }


Away = tuple[tuple[int, ...], ...]


def _reached(state: State, seat: int) -> tuple[int, tuple[int, ...], Away]:
    """The seat the turn reaches going to `seat`: `seat`, or on to the first seat that neither
    loses it nor is away; and the turns lost and sat out after that.

    Each seat the turn order reaches has had a turn, for the seats sitting out: the one given
    the turn, and each one passed over, as it loses its turn or sits out itself (two seats
    sitting out would otherwise wait for each other for ever)."""
    lost, away = list(state.lost), state.away
    if all(away):  # everyone is away: nobody could move, so they all come back
        away = ((),) * state.players
    while True:
        away = _had_a_turn(away, seat)
        if lost[seat]:
            lost[seat] -= 1
        elif not away[seat]:
            break
        seat = _next(state, seat)
    return seat, tuple(lost), away


def _reached_counting_any_turns(state: State, seat: int) -> tuple[int, tuple[int, ...], Away]:
    """`_reached` under rules version 2, where a seat sitting out holds one count, `(turns,)`:
    the turns of any seats it still sits out. Seats passed over do not count; the seat the turn
    reaches counts one down for everyone else sitting out; if every seat is away, all return."""
    lost = list(state.lost)
    away = [waits[0] if waits else 0 for waits in state.away]
    passed_away = 0
    while True:
        if lost[seat]:
            lost[seat] -= 1
        elif away[seat] and passed_away < state.players:
            passed_away += 1
        else:
            break
        seat = _next(state, seat)
    if passed_away >= state.players:
        away = [0] * state.players
    away = [max(0, turns - 1) if other != seat else turns for other, turns in enumerate(away)]
    return seat, tuple(lost), tuple((turns,) if turns else () for turns in away)


def _on_defence_played(state: State, data: Mapping[str, JSON]) -> Changes:
    seat, card = data["seat"], data["card"]
    attack = state.attack
    assert attack is not None
    direction = -state.direction if CARD[card].symbol == MIRROR else state.direction
    return {
        "hands": with_item(state.hands, seat, _remove(state.hands[seat], [card])),
        "discard": _count(state.discard, [card], 1),
        "direction": direction,
        "attack": replace(attack, target=data["target"], directed_by=seat),
        "toss": None,
    }


def _on_jerk_played(state: State, data: Mapping[str, JSON]) -> Changes:
    seat, card = data["seat"], data["card"]
    attack = state.attack
    assert attack is not None
    laid: Changes = {
        "hands": with_item(state.hands, seat, _remove(state.hands[seat], [card])),
        "discard": _count(state.discard, [card], 1),
        "toss": None if seat == attack.target else state.toss,
    }
    attack = replace(attack, jerk_open=False)
    symbol = CARD[card].symbol
    if symbol == DOUBLE:
        # wobble.md: a doubled Skip costs its target twice the turns and nobody else any,
        # so it is kept apart from the stack's Skips; other effects simply double.
        if attack.symbol == SKIP:
            return laid | {"attack": replace(attack, doubled=attack.doubled + 1)}
        return laid | {"attack": replace(attack, amount=attack.amount * 2)}
    if symbol == CAPTURE:
        target = data.get("target")
        assert target is not None
        captured = replace(attack, owner=seat, target=target, directed_by=seat, dealt=False)
        return laid | {"attack": captured}
    # Not Me: every other seat suffers the effect; its player stands in for the owner.
    attack = replace(attack, owner=seat, directed_by=seat, dealt=False)
    victims = [other for other in _seats_from(state, attack.target) if other != seat]
    return laid | _suffer(state, attack, victims, one_each=True)


def _suffer(state: State, attack: Attack, victims: list[int], *, one_each: bool) -> Changes:
    """The fields that change as `attack` hits `victims` (drawn cards follow as their own events).

    `one_each` (Not Me): a Skip costs each victim its turns; otherwise Skip x2 costs the
    target and the player after them one turn each. A Double on a Skip doubles only the
    turns the target itself loses.
    """
    amount, symbol = attack.amount, attack.symbol
    scores, lost, away = list(state.scores), list(state.lost), list(state.away)
    steps: list[Step] = []
    for victim in victims:
        if symbol == MINUS20:
            scores[victim] += amount
        elif symbol == AFK and state.afk_counts_any_turns:
            away[victim] = ((away[victim] or (0,))[0] + amount * (state.players - 1),)
        elif symbol == AFK:
            # wobble.md: it sits out until every other seat has had `amount` turns.
            waits = away[victim] or (0,) * state.players
            away[victim] = tuple(
                turns if other == victim else turns + amount for other, turns in enumerate(waits)
            )
        elif symbol == MAGNET:
            steps += [Step(NAME, victim, victim)] * amount
        elif symbol in DRAW_ATTACKS and state.tasks:
            steps.append(Step(TASK, victim, victim))
    if symbol == SKIP:
        factor = 2**attack.doubled
        if not one_each:
            skipped = [0] * state.players
            seat = victims[0]
            for _ in range(amount):
                skipped[seat] += 1
                seat = next_target(state, seat)
            skipped[victims[0]] *= factor
            lost = [turns + more for turns, more in zip(lost, skipped, strict=True)]
        else:
            for victim in victims:
                lost[victim] += amount * factor
    suffered: Changes = {
        "attack": attack,
        "scores": tuple(scores),
        "lost": tuple(lost),
        "away": tuple(away),
        "toss": None,
    }
    if steps:
        return suffered | {"phase": RESOLVE, "steps": tuple(steps)}
    # The turn skips the turns just lost and the seats just sent away.
    return suffered | _give_turn(replace(state, **suffered), attack.target)


def _on_attack_accepted(state: State, data: Mapping[str, JSON]) -> Changes:
    if state.phase == RESOLVE:  # a Not Me victim takes the draw instead of the task
        return _step_done(state)
    attack = state.attack
    assert attack is not None
    if attack.symbol in DRAW_ATTACKS:
        return {"toss": None, **_give_turn(state, attack.target)}
    return _suffer(state, attack, [data["seat"]], one_each=False)


def _on_task_attempted(state: State, data: Mapping[str, JSON]) -> Changes:
    seat, attack = data["seat"], state.attack
    assert attack is not None
    rest = state.steps[1:] if state.phase == RESOLVE else ()
    report = Step(REPORT, reporter(attack, seat), seat)
    return {"phase": RESOLVE, "steps": (report, *rest), "toss": None}


def _on_task_reported(state: State, data: Mapping[str, JSON]) -> Changes:
    return _step_done(state)


def _step_done(state: State) -> Changes:
    if len(state.steps) > 1:
        return {"steps": state.steps[1:]}
    assert state.attack is not None
    return _give_turn(state, state.attack.target)


def _on_magnet_named(state: State, data: Mapping[str, JSON]) -> Changes:
    seat = data["seat"]
    hands = list(state.hands)
    for taken in data["taken"]:
        hands[taken["seat"]] = _remove(hands[taken["seat"]], taken["cards"])
        hands[seat] = _add(hands[seat], taken["cards"])
    named = state.named
    if data.get("number") is not None:
        named = tuple(sorted((*named, data["number"])))
    return {"hands": tuple(hands), "named": named, **_step_done(state)}


def _on_round_ended(state: State, data: Mapping[str, JSON]) -> Changes:
    scores: Changes = {"scores": tuple(data["scores"])}
    if data["final"]:
        return scores | {"phase": OVER, "turn": None, "toss": None, "attack": None}
    return scores


EVOLVERS: Evolvers[State] = {
    "RoundStarted": _on_round_started,
    "CardsDealt": _on_cards_dealt,
    "StartCardTurned": _on_start_card_turned,
    "StartCardResolved": _on_start_card_resolved,
    "CardsPlayed": _on_cards_played,
    "HalfHandDiscarded": _on_half_hand_discarded,
    "CardDrawn": _on_card_drawn,
    "CardsDrawn": _on_cards_drawn,
    "DiscardsReshuffled": _on_discards_reshuffled,
    "GreysExchanged": _on_greys_exchanged,
    "DefencePlayed": _on_defence_played,
    "JerkPlayed": _on_jerk_played,
    "AttackAccepted": _on_attack_accepted,
    "TaskAttempted": _on_task_attempted,
    "TaskReported": _on_task_reported,
    "MagnetNamed": _on_magnet_named,
    "RoundEnded": _on_round_ended,
}
"""What each event changes in a state: `evolve` copies the state with it, and a move's
`FoldingDecision` writes it into the one copy it makes for the move."""


# -- the rules ------------------------------------------------------------------------------------

CHOICE_FIELDS = ("colour", "swap_with", "exchange_with", "discard_half")
MOVE_FIELDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "play": (frozenset({"cards"}), frozenset(CHOICE_FIELDS)),
    "toss": (frozenset({"cards"}), frozenset(CHOICE_FIELDS)),
    "pass": (frozenset({"cards"}), frozenset()),
    "start": (frozenset(), frozenset(CHOICE_FIELDS)),
    "draw": (frozenset(), frozenset()),
    "exchange_greys": (frozenset(), frozenset()),
    "defend": (frozenset({"card"}), frozenset({"target"})),
    "jerk": (frozenset({"card"}), frozenset({"target"})),
    "accept": (frozenset(), frozenset()),
    "attempt": (frozenset(), frozenset()),
    "report": (frozenset({"success"}), frozenset()),
    "name": (frozenset(), frozenset({"number", "colour"})),
}
"""Per move type: the fields it must have and those it may have (besides `type`)."""


def _chosen(move: Mapping[str, JSON]) -> dict[str, JSON]:
    """The choices `move` makes, as the event of playing its card records them."""
    return {name: move[name] for name in CHOICE_FIELDS if name in move}


def _whole_number_or_none(name: str, value: JSON) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise RuleError("move-format", f"{name} must be a whole number")


def _true_or_false(name: str, value: JSON) -> None:
    if not isinstance(value, bool):
        raise RuleError("move-format", f"{name} must be true or false")


def _string(name: str, value: JSON) -> None:
    if not isinstance(value, str):
        raise RuleError("move-format", f"{name} must be a string")


def _not_a_card(value: JSON) -> RuleError:
    return RuleError("move-format", f"{value!r} is not a card code, e.g. 'cyan:7'")


def _card_code(name: str, value: JSON) -> None:
    _string(name, value)
    if value not in CARD:
        raise _not_a_card(value)


def _cards(name: str, value: JSON) -> None:
    # Plain loops rather than `all(...)` over a generator: every play is checked here.
    if not isinstance(value, list):
        raise RuleError("move-format", "cards must be a list of card codes")
    for code in value:
        if not isinstance(code, str):
            raise RuleError("move-format", "cards must be a list of card codes")
    if not 1 <= len(value) <= 2:
        raise RuleError("identical-pair", "play one card, or two identical ones together")
    for code in value:  # strings all, as checked above: only the code itself is left to check
        if code not in CARD:
            raise _not_a_card(code)


FIELD_CHECKS: dict[str, Callable[[str, JSON], None]] = {
    "cards": _cards,
    "card": _card_code,
    "colour": _string,
    "swap_with": _whole_number_or_none,
    "exchange_with": _whole_number_or_none,
    "target": _whole_number_or_none,
    "number": _whole_number_or_none,
    "discard_half": _true_or_false,
    "success": _true_or_false,
}
"""How each field a move may have is checked, whichever moves have it."""


class Wobble(DecidesBySteps):
    """Wobble behind the rules contract, at its current rules version or at version 2."""

    def __init__(self, rules_version: int = INFO.rules_version) -> None:
        if rules_version not in (2, INFO.rules_version):
            raise ValueError(f"wobble decides rules versions 2 and {INFO.rules_version} only")
        self.info = replace(INFO, rules_version=rules_version)
        self._afk_counts_any_turns = rules_version == 2

    # -- setup and folding ----------------------------------------------------------------------

    def initial_state(self, players: int, options: Mapping[str, JSON]) -> State:
        named_first = options.get(FIRST_SEAT.name)
        return State(
            players=players,
            deck=deck_counts(options.get("deck", "standard"), bool(options.get("first_game"))),
            tasks=options.get("tasks") == "table",
            score_limit=int(options.get("score_limit", SCORE_LIMIT.default)),
            # A named first seat is the first round's first player, so the seat before it deals;
            # otherwise the generator draws the first dealer at setup.
            first_dealer=None if named_first is None else (int(named_first) - 1) % players,
            scores=(0,) * players,
            ring=tuple(range(players)),
            afk_counts_any_turns=self._afk_counts_any_turns,
        )

    def setup(self, players: int, options: Mapping[str, JSON], rng: Chance) -> list[Event]:
        state = self.initial_state(players, options)
        return self._deal(state, 0, state.first_dealer, rng)

    def _deal(self, state: State, round_: int, dealer: int | None, rng: Chance) -> list[Event]:
        """The events of dealing round `round_`; a `dealer` of None is drawn (the first round)."""
        deck = list(_deck_cards(state.deck))
        rng.shuffle(deck)
        # Grey and brown cards turned up go back and are reshuffled, so the starting card is
        # simply a uniform pick among the colour cards left.
        dealt = state.players * HAND_SIZE
        rest = sorted(filter(COLOUR_CODES.__contains__, deck[dealt:]))
        start = rng.choice(rest)
        # Drawn last, so the deal and the starting card of a seed stay what they always were.
        if dealer is None:
            dealer = rng.randrange(state.players)
        events = [Event("RoundStarted", {"round": round_, "dealer": dealer})]
        events += [
            Event(
                "CardsDealt",
                {"seat": seat, "cards": sorted(deck[seat :: state.players][:HAND_SIZE])},
            )
            for seat in range(state.players)
        ]
        events.append(Event("StartCardTurned", {"seat": dealer, "card": start}))
        return events

    def evolve(self, state: State, event: Event) -> State:
        return evolved("wobble", EVOLVERS, state, event)

    # -- who may act, and how -------------------------------------------------------------------

    def to_act(self, state: State) -> frozenset[int]:
        """The seat to move, the target of an open attack or the seat a step waits for: never
        the seats that could toss in or jerk, as that would tell who holds those cards."""
        phase = state.phase
        if phase in SEAT_TO_MOVE:
            return frozenset() if state.turn is None else only(state.turn)
        if phase == ATTACK and state.attack is not None:
            return only(state.attack.target)
        if phase == RESOLVE:
            return only(state.steps[0].seat)
        return frozenset()

    def may_act(self, state: State) -> frozenset[int]:
        # `to_act`'s answer for the two phases in which others may act too, found here rather
        # than by a call: `may_act` is asked at every move.
        phase = state.phase
        if phase == TURN and state.turn is not None:
            mover, jerk_open = state.turn, False
        elif phase == ATTACK and state.attack is not None:
            mover, jerk_open = state.attack.target, state.attack.jerk_open
        else:
            return self.to_act(state)
        waited_for = only(mover)
        # Mostly no toss-in window and no Jerk is open: nobody else is asked about, and the set
        # of the seat waited for is all there is.
        others = self._tossers(state, mover) if state.toss is not None else []
        if jerk_open:
            others += self._jerkers(state)
        return waited_for.union(others) if others else waited_for

    @staticmethod
    def race_open(state: State) -> bool:
        """Whether a toss-in or a Jerk window is open, whoever holds a card to use it: after a
        colour card, its twin may follow it; on an open attack, a Jerk may take it. Public, as
        the cards on the table show it, where `may_act` tells who can."""
        if state.phase == TURN:
            return state.toss is not None
        if state.phase == ATTACK and state.attack is not None:
            return state.toss is not None or state.attack.jerk_open
        return False

    @staticmethod
    def _mover(state: State) -> int:
        """The seat whose move closes the toss-in window: the seat to move or the target."""
        if state.attack is not None:
            return state.attack.target
        assert state.turn is not None
        return state.turn

    # `_tossers` and `_jerkers` are plain loops, not comprehensions: a comprehension reading the
    # function's locals builds a closure at every call, which cost more than the loop itself.

    @staticmethod
    def _tossers(state: State, mover: int) -> list[int]:
        toss, away = state.toss, state.away
        tossers: list[int] = []
        if toss is None:
            return tossers
        for seat, hand in enumerate(state.hands):
            # The mover simply plays the card; whoever played it last (the dealer on the start
            # card included) may toss in its own twin like anyone else. Most hands lack the
            # card, so that is asked first.
            if toss in hand and seat != mover and not away[seat]:
                tossers.append(seat)
        return tossers

    @staticmethod
    def _jerkers(state: State) -> list[int]:
        attack, away = state.attack, state.away
        jerkers: list[int] = []
        if attack is None or not attack.jerk_open:
            return jerkers
        owner, target = attack.owner, attack.target
        for seat, hand in enumerate(state.hands):
            if (
                seat != owner
                and (not away[seat] or seat == target)
                and not BROWN_CODES.isdisjoint(hand)
            ):
                jerkers.append(seat)
        return jerkers

    @remembers_last_answer
    def legal_moves(self, state: State, seat: int) -> list[JSON]:
        phase = state.phase
        # Out of turn, a seat can only toss in or jerk, which the branches below look at for
        # this seat alone (asking `may_act` would look at every seat's hand).
        if phase not in (TURN, ATTACK) and seat not in self.to_act(state):
            return []
        hand = state.hands[seat]
        if phase == OPENING:
            card = CARD[state.top or ""]
            return [{"type": "start", **choice} for choice in choices(state, seat, card)]
        if phase == DRAWN:
            # The drawn card alone, as the shared move when it asks for no choices.
            shared = SHEDDING_MOVES["play"].get(state.drawn or "")
            if shared is not None:
                return [shared[0]]
            card = CARD[state.drawn or ""]
            return [{"type": "play", "cards": [card.code], **c} for c in choices(state, seat, card)]
        if phase == RESOLVE:
            return self._step_moves(state)
        moves: list[JSON] = []
        if phase == TURN and seat == state.turn:
            playable = _matching(state.top, state.colour).intersection(hand)
            if playable:
                return self._plays(state, seat, "play", playable)
            moves.append(DRAW)
            if hand and GREY_CODES.issuperset(hand):
                moves.append({"type": "exchange_greys"})
            return moves
        attack = state.attack
        if attack is not None and seat == attack.target:
            offensive = CODES_OF_SYMBOL[attack.symbol].intersection(hand)
            moves += self._plays(state, seat, "pass", offensive)
            moves += self._defences(state, seat)
            moves.append(ACCEPT)
            if state.tasks and attack.symbol in DRAW_ATTACKS:
                moves.append({"type": "attempt"})
        elif state.toss is not None and seat in self._tossers(state, self._mover(state)):
            moves += self._plays(state, seat, "toss", {state.toss})
        if attack is not None and seat in self._jerkers(state):
            moves += self._jerks(state, seat)
        return moves

    def _plays(self, state: State, seat: int, kind: str, cards: Set[str]) -> list[JSON]:
        moves: list[JSON] = []
        hand = state.hands[seat]
        shared = SHEDDING_MOVES[kind]
        for code in sorted(cards):
            if code in shared:  # most cards: no choices to ask for, so no `choices` call
                alone, both = shared[code]
                moves.append(alone)
                if both is not None and hand.count(code) >= 2:
                    moves.append(both)
                continue
            card = CARD[code]
            options = choices(state, seat, card)
            moves += [{"type": kind, "cards": [code], **choice} for choice in options]
            if card.pairable and hand.count(code) >= 2:
                moves += [{"type": kind, "cards": [code, code], **choice} for choice in options]
        return moves

    @staticmethod
    def _defences(state: State, seat: int) -> list[JSON]:
        moves: list[JSON] = []
        for code in sorted(GREY_CODES.intersection(state.hands[seat])):
            if CARD[code].symbol == YOU:
                moves += [
                    {"type": "defend", "card": code, "target": other}
                    for other in range(state.players)
                    if other != seat
                ]
            else:
                moves.append({"type": "defend", "card": code})
        return moves

    @staticmethod
    def _jerks(state: State, seat: int) -> list[JSON]:
        moves: list[JSON] = []
        for code in sorted(BROWN_CODES.intersection(state.hands[seat])):
            if CARD[code].symbol == CAPTURE:
                moves += [
                    {"type": "jerk", "card": code, "target": other}
                    for other in range(state.players)
                    if other != seat
                ]
            else:
                moves.append({"type": "jerk", "card": code})
        return moves

    @staticmethod
    def _step_moves(state: State) -> list[JSON]:
        step = state.steps[0]
        if step.kind == NAME:
            free = [n for n in range(1, 10) if n not in state.named]
            if free:
                return [{"type": "name", "number": number} for number in free]
            return [{"type": "name", "colour": colour} for colour in COLOURS]
        if step.kind == TASK:
            return [{"type": "accept"}, {"type": "attempt"}]
        return [{"type": "report", "success": True}, {"type": "report", "success": False}]

    # -- deciding -------------------------------------------------------------------------------

    def step(self, state: State, seat: int, move: JSON, rng: Chance) -> tuple[list[Event], State]:
        legal = self.legal_moves(state, seat)
        if not listed(move, legal):
            move = self._checked(state, seat, move, legal)
        events = FoldingDecision(EVOLVERS, state)
        kind = move["type"]
        if kind in SHEDDING_MOVES:
            cards = move["cards"]
            how = "drawn" if state.phase == DRAWN else kind
            # The event's own list: the move's is shared by every state's legal moves.
            played = {"seat": seat, "cards": [*cards], "how": how}
            # Only these cards' moves make choices (a listed move, or one equal to it): the others
            # need not be searched for them.
            if cards[0] in CHOOSING:
                played |= _chosen(move)
            events.add("CardsPlayed", played)
            if move.get("discard_half"):
                self._discard_half(events, seat, rng)
        elif kind == "start":
            data = _chosen(move)
            events.add("StartCardResolved", {"seat": seat, **data})
            if move.get("discard_half"):
                self._discard_half(events, seat, rng)
        elif kind == "draw":
            if not any(state.draw) and state.discard_size:
                events.add("DiscardsReshuffled", {"count": state.discard_size})
            index = _pick(events.state.draw, rng)
            card = None if index is None else CODES[index]
            events.add("CardDrawn", {"seat": seat, "card": card})
        elif kind == "exchange_greys":
            shown = list(state.hands[seat])
            drawn = _sample(_count(state.draw, shown, 1), len(shown), rng)
            events.add("GreysExchanged", {"seat": seat, "shown": shown, "drawn": drawn})
        elif kind == "defend":
            target = self._defence_target(state, seat, move, rng)
            events.add("DefencePlayed", {"seat": seat, "card": move["card"], "target": target})
        elif kind == "jerk":
            self._jerk(events, seat, move, rng)
        elif kind == "accept":
            events.add("AttackAccepted", {"seat": seat})
            attack = state.attack
            if attack is not None and attack.symbol in DRAW_ATTACKS:
                self._draw(events, seat, attack.amount, rng, "attack")
        elif kind == "attempt":
            events.add("TaskAttempted", {"seat": seat})
        elif kind == "report":
            subject, attack = state.steps[0].subject, state.attack
            events.add(
                "TaskReported", {"seat": seat, "subject": subject, "success": move["success"]}
            )
            if not move["success"] and attack is not None:
                self._draw(events, subject, 2 * attack.amount, rng, "task_failed")
        else:
            events.add("MagnetNamed", self._magnet(state, seat, move))
        # A round ends on a turn once a hand is empty: asked here, where every move passes, rather
        # than by a call to `_end_round` that mostly finds nothing to do.
        if events.state.phase == TURN and not all(events.state.hands):
            self._end_round(events, rng)
        return events.outcome()

    def _discard_half(self, events: Decision[State], seat: int, rng: Chance) -> None:
        hand = events.state.hands[seat]
        if len(hand) // 2:
            cards = sorted(rng.sample(hand, len(hand) // 2))
            events.add("HalfHandDiscarded", {"seat": seat, "cards": cards})

    @staticmethod
    def _draw(events: Decision[State], seat: int, count: int, rng: Chance, reason: str) -> None:
        """`seat` draws `count` cards; an empty draw pile is refilled from the discard pile."""
        while count:
            draw = events.state.draw
            if not any(draw):
                if not events.state.discard_size:
                    return
                events.add("DiscardsReshuffled", {"count": events.state.discard_size})
                continue
            cards = _sample(draw, count, rng)
            events.add("CardsDrawn", {"seat": seat, "cards": cards, "reason": reason})
            count -= len(cards)

    @staticmethod
    def _defence_target(state: State, seat: int, move: Mapping[str, JSON], rng: Chance) -> int:
        attack = state.attack
        assert attack is not None
        symbol = CARD[move["card"]].symbol
        if symbol == YOU:
            target: int = move["target"]
            return target
        if symbol == UNLUCKY:
            return rng.randrange(state.players)
        if symbol == MIRROR:
            if attack.passed and attack.owner != seat:
                return attack.owner
            return next_target(replace(state, direction=-state.direction), seat)
        return next_target(state, seat)

    def _jerk(
        self, events: Decision[State], seat: int, move: Mapping[str, JSON], rng: Chance
    ) -> None:
        target = {"target": move["target"]} if "target" in move else {}
        attack = events.state.attack
        events.add("JerkPlayed", {"seat": seat, "card": move["card"], **target})
        if CARD[move["card"]].symbol != NOT_ME or attack is None:
            return
        if attack.symbol in DRAW_ATTACKS and not events.state.tasks:
            for victim in _seats_from(events.state, attack.target):
                if victim != seat:
                    self._draw(events, victim, attack.amount, rng, "attack")

    @staticmethod
    def _magnet(state: State, seat: int, move: Mapping[str, JSON]) -> dict[str, JSON]:
        number, colour = move.get("number"), move.get("colour")

        def wanted(card: Card) -> bool:
            if number is not None:
                return card.group == NUMBER and card.symbol == str(number)
            return colour in card.colours

        taken = [
            {"seat": other, "cards": [c for c in state.hands[other] if wanted(CARD[c])]}
            for other in range(state.players)
            if other != seat
        ]
        named: dict[str, JSON] = {"number": number} if number is not None else {"colour": colour}
        return {"seat": seat, **named, "taken": [t for t in taken if t["cards"]]}

    def _end_round(self, events: Decision[State], rng: Chance) -> None:
        """The round ends (a hand is empty on a turn): score it, and deal the next unless the game
        is over."""
        state = events.state
        round_points = [points(hand) for hand in state.hands]
        scores = [score + add for score, add in zip(state.scores, round_points, strict=True)]
        final = max(scores) >= state.score_limit
        # Read before the round's end is folded into `state`, the move's own copy.
        round_, dealer = state.round, (state.dealer + 1) % state.players
        events.add(
            "RoundEnded",
            {"round": round_, "points": round_points, "scores": scores, "final": final},
        )
        if not final:
            for event in self._deal(events.state, round_ + 1, dealer, rng):
                events.add(event.type, event.data)

    # -- refusing -------------------------------------------------------------------------------

    def _checked(self, state: State, seat: int, move: JSON, legal: list[JSON]) -> dict[str, JSON]:
        """`move` parsed, if it is one of `legal`: a malformed move is refused for its shape,
        and a well-formed one must equal a listed move field by field."""
        parsed = self._parse(move)
        if parsed not in legal:
            if seat not in self.may_act(state):
                raise self._out_of_turn(state, seat)
            raise self._illegal(state, seat, parsed)
        return parsed

    @staticmethod
    def _parse(move: JSON) -> dict[str, JSON]:
        kind = move.get("type") if isinstance(move, Mapping) else None
        if not isinstance(kind, str) or kind not in MOVE_FIELDS:
            shapes = ", ".join(sorted(MOVE_FIELDS))
            raise RuleError("move-format", f'a Wobble move is {{"type": ...}}, one of: {shapes}')
        required, optional = MOVE_FIELDS[move["type"]]
        fields = set(move) - {"type"}
        if not required <= fields or not fields <= required | optional:
            raise RuleError(
                "move-format",
                f"a {move['type']!r} move has the fields {sorted(required)}"
                + (f" and may have {sorted(optional)}" if optional else ""),
            )
        for name, value in move.items():
            if name != "type":
                FIELD_CHECKS[name](name, value)
        # A dict is checked as it is: a move picked from `legal_moves` is then found in that list
        # by identity, without comparing it field by field with the moves before it.
        return move if type(move) is dict else dict(move)

    @staticmethod
    def _out_of_turn(state: State, seat: int) -> RuleError:
        if not 0 <= seat < state.players:
            return RuleError("out-of-turn", f"there is no seat {seat}")
        if state.phase == OVER:
            return RuleError("game-over", "the game is over")
        if state.phase == TURN and state.toss is not None:
            return RuleError(
                "out-of-turn",
                f"seat {seat} may act out of turn only to toss in the identical {state.toss}",
            )
        if state.phase == ATTACK:
            return RuleError(
                "out-of-turn",
                f"seat {seat} may act now only with a Jerk card (not against its own card) "
                f"or the identical card while the toss-in window is open",
            )
        return RuleError("out-of-turn", f"seat {seat} may not act now")

    def _illegal(self, state: State, seat: int, move: Mapping[str, JSON]) -> RuleError:
        kind = move["type"]
        hand = state.hands[seat]
        cards = move.get("cards") or ([move["card"]] if "card" in move else [])
        attack = state.attack
        for code in set(cards):
            if hand.count(code) < cards.count(code):
                return RuleError(
                    "card-in-hand", f"seat {seat} does not hold {cards.count(code)} x {code}"
                )
        if len(cards) == 2 and (cards[0] != cards[1] or not CARD[cards[0]].pairable):
            return RuleError(
                "identical-pair",
                "only two identical number or action cards (not 0, Half Hand, Card Exchange, "
                "Color Swap) are played together",
            )
        if state.phase == OPENING:
            return RuleError("starting-card", f"the dealer resolves the starting card {state.top}")
        if state.phase == DRAWN:
            return RuleError("play-drawn-card", f"the drawn card {state.drawn} must be played now")
        if state.phase == RESOLVE:
            step = state.steps[0]
            if kind == "name" and move.get("number") in state.named:
                return RuleError("magnet-named", f"{move['number']} was already named this round")
            if kind == "name" and move.get("number") is None and len(state.named) < 9:
                return RuleError("magnet-numbers-first", "name a number 1..9 not yet named")
            return RuleError("pending-step", f"seat {seat} must {step.kind} now")
        if kind == "play" and seat == state.turn and state.phase == TURN:
            card = CARD[cards[0]]
            if card.group in (GREY, BROWN):
                return RuleError("grey-brown-only-on-attack", "grey and brown cards answer attacks")
            if not matches(state, card):
                return RuleError(
                    "matching",
                    f"{card.code} matches neither the colour {state.colour} nor the symbol of "
                    f"{state.top}",
                )
            return RuleError(
                "card-choice", f"{card.code} is played with one of {choices(state, seat, card)}"
            )
        if kind in ("play", "draw", "exchange_greys") and seat != state.turn:
            return RuleError(
                "out-of-turn", "out of turn a seat may only toss in, pass, defend, accept or jerk"
            )
        if kind in ("draw", "exchange_greys") and state.phase == TURN:
            if kind == "exchange_greys" and any(CARD[c].group != GREY for c in hand):
                return RuleError("grey-exchange", "only a hand of grey cards only may be exchanged")
            return RuleError("forced-play", "a player who can play must play")
        if kind == "toss":
            if state.toss is None:
                return RuleError("toss-in-window", "the toss-in window is closed")
            if cards[0] != state.toss:
                return RuleError(
                    "toss-in-identical", f"only the identical {state.toss} is tossed in"
                )
            return RuleError(
                "card-choice",
                f"{state.toss} is played with one of {choices(state, seat, CARD[state.toss])}",
            )
        if kind == "jerk":
            if attack is None:
                return RuleError("jerk-on-attack", "Jerk cards are played only on an open attack")
            if CARD[cards[0]].group != BROWN:
                return RuleError("jerk-brown", "a Jerk card is brown")
            if seat == attack.owner:
                return RuleError("jerk-not-own-card", "no Jerk on your own offensive card")
            if not attack.jerk_open:
                return RuleError("one-jerk-per-card", "this offensive card has had its Jerk card")
            return RuleError("capture-target", "Capture names another player as the new target")
        if attack is None or seat != attack.target:
            return RuleError("no-attack", f"a {kind!r} move answers an attack aimed at you")
        if kind == "pass":
            return RuleError(
                "pass-same-symbol", f"pass the attack on with a {attack.symbol} card (any colour)"
            )
        if kind == "defend":
            if CARD[cards[0]].group != GREY:
                return RuleError("defence-grey", "defences are the grey cards")
            return RuleError("you-target", "You! names another player as the new target")
        if kind == "attempt":
            return RuleError("tasks", 'tasks are attempted only on +3/+5 with option tasks="table"')
        return RuleError(
            "attack-open", f"answer the {attack.symbol} attack: pass, defend or accept"
        )

    # -- what a seat may see --------------------------------------------------------------------

    def view(self, state: State, seat: int | None) -> dict[str, JSON]:
        attack = state.attack
        discarded = _sorted_multiset(state.discard)
        view: dict[str, JSON] = {
            "round": state.round,
            "dealer": state.dealer,
            "seating": list(state.ring),
            "direction": state.direction,
            "phase": state.phase,
            "turn": state.turn,
            "top": state.top,
            "colour": state.colour,
            "hand_sizes": list(map(len, state.hands)),
            "draw_pile": state.draw_size,
            # What the face-up part of the pile holds is counted as it is listed.
            "discard_pile": len(discarded) + sum(state.buried),
            "discarded": discarded,
            "attack": None
            if attack is None
            else {
                "symbol": attack.symbol,
                "amount": attack.amount,
                "owner": attack.owner,
                "target": attack.target,
                "directed_by": attack.directed_by,
                "passed": attack.passed,
                "jerk_allowed": attack.jerk_open,
                "doubled": attack.doubled,
                "dealt": attack.dealt,
            },
            "pending": [
                {"kind": step.kind, "seat": step.seat, "subject": step.subject}
                for step in state.steps
            ],
            "toss_in": None if state.toss is None else {"card": state.toss, "by": state.toss_by},
            "named": list(state.named),
            "lost_turns": list(state.lost),
            "away": [sum(waits) for waits in state.away],
            "waiting_for": [
                [] if state.afk_counts_any_turns else list(waits) for waits in state.away
            ],
            "scores": list(state.scores),
        }
        if seat is not None:
            view["hand"] = list(state.hands[seat]) if state.hands else []
            view["drawn"] = state.drawn if seat == state.turn else None
        return view

    def redact(self, event: Event, seat: int | None) -> Event | None:
        data = event.data
        if event.type in ("CardsDealt", "CardsDrawn", "HalfHandDiscarded") and data["seat"] != seat:
            return Event(event.type, {**data, "cards": None, "count": len(data["cards"])})
        if event.type == "CardDrawn" and data["seat"] != seat:
            return Event(event.type, {"seat": data["seat"], "card": None})
        if event.type == "GreysExchanged" and data["seat"] != seat:
            return Event(event.type, {**data, "drawn": None, "count": len(data["drawn"])})
        if event.type == "MagnetNamed" and data["seat"] != seat:
            taken = [
                t
                if t["seat"] == seat
                else {"seat": t["seat"], "cards": None, "count": len(t["cards"])}
                for t in data["taken"]
            ]
            return Event(event.type, {**data, "taken": taken})
        return event

    def result(self, state: State) -> Result | None:
        if state.phase != OVER:
            return None
        return Result(
            winners=winners_by(state.scores, highest=False),
            scores=state.scores,
            details={"rounds": state.round + 1},
        )

    def scores(self, state: State) -> tuple[int, ...]:
        return state.scores

    def conceal(self, state: State, seat: int | None, rng: Random) -> State:
        hidden = [other for other in range(state.players) if other != seat]
        hands = [list(hand) for hand in state.hands]
        kept = state.drawn if state.phase == DRAWN and state.turn in hidden else None
        if kept is not None and state.turn is not None:
            hands[state.turn].remove(kept)
        pool = [card for other in hidden for card in hands[other]]
        pool += _multiset(state.draw) + _multiset(state.buried)
        rng.shuffle(pool)
        for other in hidden:
            size = len(hands[other])
            hands[other], pool = pool[:size], pool[size:]
        if kept is not None and state.turn is not None:
            hands[state.turn].append(kept)
        draw_size = state.draw_size
        return replace(
            state,
            hands=tuple(tuple(sorted(hand)) for hand in hands),
            draw=_count(NO_CARDS, pool[:draw_size], 1),
            buried=_count(NO_CARDS, pool[draw_size:], 1),
        )

    # -- planning on what a seat sees -----------------------------------------------------------

    def sample(
        self,
        players: int,
        options: Mapping[str, JSON],
        view: Mapping[str, JSON],
        seat: int,
        rng: Random,
    ) -> State:
        """The other hands, the draw pile and the face-down cards drawn from the unseen cards:
        the deck less the own hand, the top card and the face-up discards."""
        public = self._public(players, options, view)
        hand = tuple(view["hand"])
        # Both piles count every card of `CARDS`, so they pair up one to one.
        unseen = list(map(sub, public.deck, public.discard))
        for card in (*hand, *([public.top] if public.top is not None else [])):
            unseen[INDEX[card]] -= 1
        pool = _multiset(unseen)
        hands: list[tuple[str, ...]] = [()] * players
        hands[seat] = hand
        drawn = view["drawn"]
        drawer = public.turn if public.phase == DRAWN and public.turn != seat else None
        if drawer is not None:
            drawn, hands[drawer], pool = _drawer_hand(public, pool, view["hand_sizes"][drawer], rng)
        hidden = [other for other in range(players) if other not in (seat, drawer)]
        sizes = [view["hand_sizes"][other] for other in hidden]
        buried_size = view["discard_pile"] - len(view["discarded"])
        picked = rng.sample(pool, sum(sizes) + buried_size)
        start = 0
        for other, size in zip(hidden, sizes, strict=True):
            hands[other] = tuple(sorted(picked[start : start + size]))
            start += size
        buried = picked[start:]
        # The draw pile holds whatever unseen card no hand and no Half Hand took.
        for card in chain(picked, hands[drawer] if drawer is not None else ()):
            unseen[INDEX[card]] -= 1
        return replace(
            public,
            hands=tuple(hands),
            draw=tuple(unseen),
            buried=_count(NO_CARDS, buried, 1),
            drawn=drawn,
        )

    def _public(self, players: int, options: Mapping[str, JSON], view: Mapping[str, JSON]) -> State:
        """The state as far as `view` shows it: empty hands, nothing in the draw pile."""
        attack, toss, pending = view["attack"], view["toss_in"], view["pending"]
        return replace(
            self.initial_state(players, options),
            first_dealer=(view["dealer"] - view["round"]) % players,
            scores=tuple(view["scores"]),
            ring=tuple(view["seating"]),
            round=view["round"],
            dealer=view["dealer"],
            direction=view["direction"],
            discard=_count(NO_CARDS, view["discarded"], 1),
            top=view["top"],
            colour=view["colour"],
            phase=view["phase"],
            turn=view["turn"],
            attack=None
            if attack is None
            else Attack(
                attack["symbol"],
                attack["amount"],
                attack["owner"],
                attack["target"],
                attack["directed_by"],
                attack["passed"],
                attack["jerk_allowed"],
                attack["doubled"],
                attack["dealt"],
            ),
            steps=tuple(Step(step["kind"], step["seat"], step["subject"]) for step in pending),
            toss=None if toss is None else toss["card"],
            toss_by=None if toss is None else toss["by"],
            named=tuple(view["named"]),
            lost=tuple(view["lost_turns"]),
            away=(
                tuple((turns,) if turns else () for turns in view["away"])
                if self._afk_counts_any_turns
                else tuple(map(tuple, view["waiting_for"]))
            ),
        )

    def evaluate(self, state: State) -> tuple[float, ...]:
        result = self.result(state)
        if result is not None:
            return result.shares()
        hands = state.hands or ((),) * state.players
        # The smaller a hand, the likelier its seat goes out first and scores nothing this round.
        going_out = [exp(-GOING_OUT * len(hand)) for hand in hands]
        odds = sum(going_out)
        projected = [
            score + HAND_WEIGHT * points(hand) * (1 - chance / odds)
            for score, hand, chance in zip(state.scores, hands, going_out, strict=True)
        ]
        # Rounds to come can still turn the standing: the less is left, the more a lead counts.
        left = max(state.score_limit - max(projected), 0)
        temperature = ROUND_SPREAD + GAME_SPREAD * sqrt(left)
        best = min(projected)
        weights = [exp((best - mine) / temperature) for mine in projected]
        total = sum(weights)
        return tuple(weight / total for weight in weights)


def _drawer_hand(
    state: State, pool: list[str], size: int, rng: Random
) -> tuple[str, tuple[str, ...], list[str]]:
    """The card the seat to move drew and must play, its hand, and what is left of `pool`.

    It drew because nothing in its hand matched, so all its other cards are drawn from the
    unseen cards that do not match either.
    """
    fits = [matches(state, CARD[card]) for card in pool]
    matching = [card for card, fit in zip(pool, fits, strict=True) if fit]
    misses = [card for card, fit in zip(pool, fits, strict=True) if not fit]
    drawn = matching.pop(rng.randrange(len(matching)))
    kept = set(rng.sample(range(len(misses)), size - 1))
    hand = tuple(sorted([drawn, *(misses[index] for index in kept)]))
    rest = [card for index, card in enumerate(misses) if index not in kept]
    return drawn, hand, matching + rest


RULES = Wobble()
