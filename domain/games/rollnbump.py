"""Roll'n Bump: roll up to three times, claim face-up cards with dice, bump weaker claims.

Rules as enforced: `docs/rules/rollnbump.md`. Cards are numbers 0..47 (`colour * 12 + kind`);
the wire shows them as ids such as `"red-pair"` only once they are face up. The stacks keep just
their face-up card and how many cards lie face down under it: the next card a stack turns up is
drawn by `decide` from every card not yet seen (face-down and unused cards are alike to everyone),
so no hidden order exists in the state and nothing in it is secret.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import combinations, combinations_with_replacement
from math import exp
from random import Random

from domain.chance import Chance
from domain.frozen import with_item
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
    listed,
    remembers_last_answer,
)
from domain.seating import choose_first_seat, winners_by

COLOURS = ("red", "yellow", "blue", "black")
KINDS = (
    *(f"single-{number}" for number in range(1, 7)),
    "pair",
    "triple",
    "quad",
    "run-3",
    "run-4",
    "run-5",
)
PAIR, QUAD, RUN_3 = KINDS.index("pair"), KINDS.index("quad"), KINDS.index("run-3")
CARDS_PER_COLOUR = len(KINDS)
CARD_IDS = tuple(f"{colour}-{kind}" for colour in COLOURS for kind in KINDS)
CARD_NUMBERS = {card_id: number for number, card_id in enumerate(CARD_IDS)}
ALL_CARDS = (1 << len(CARD_IDS)) - 1
"""Bit mask of every card: the cards nobody has seen yet start as all of them."""

STACKS: Mapping[int, tuple[int, int]] = {2: (6, 6), 3: (9, 4), 4: (9, 4), 5: (12, 3)}
"""Players -> (number of stacks, cards per stack)."""
EMPTY_STACKS_TO_END: Mapping[int, int] = {2: 1, 3: 1, 4: 1, 5: 2}
DICE = 5
FIRST_ROUND_DICE = (3, 4)
"""Dice of the first and second turn of the game; every later turn rolls all five."""
ROLLS = 3
FACES = range(1, 7)
WHITE_DIE_MEAN = sum(FACES) / len(FACES)
"""The white die's scoring roll on average: what holding it at the end is worth."""

POINT_KEYS = ("single", "pair", "triple", "quad", "run-3", "run-4", "run-5", "joker")
DEFAULT_POINTS: Mapping[str, int] = {
    "single": 1,
    "pair": 2,
    "triple": 4,
    "quad": 8,
    "run-3": 2,
    "run-4": 4,
    "run-5": 6,
    "joker": 15,
}
MAX_POINTS = 100
JOKER = len(KINDS)
"""Index of the joker in a `State.points` tuple, after the twelve kinds."""

EVAL_TEMPERATURE_END = 3.0
EVAL_TEMPERATURE_SPAN = 4.0
"""`evaluate`'s softmax temperature in points: END when the game is about to end, plus SPAN
times the share of the game still to play."""
EVAL_CLAIM_SURVIVAL = 0.7
"""How likely `evaluate` takes a claim to outlast one opponent's turn."""

STEP_ROLL, STEP_CLAIM = "roll", "claim"
ROLL, CLAIM, CLAIM_WHITE_SPOT, CLAIM_JOKER, USE_WHITE_DIE, END_TURN = (
    "roll",
    "claim",
    "claim_white_spot",
    "claim_joker",
    "use_white_die",
    "end_turn",
)
MOVE_FIELDS: Mapping[str, frozenset[str]] = {
    ROLL: frozenset({"type", "keep", "keep_white"}),
    CLAIM: frozenset({"type", "stack", "dice"}),
    CLAIM_WHITE_SPOT: frozenset({"type", "dice"}),
    CLAIM_JOKER: frozenset({"type", "dice", "colour"}),
    USE_WHITE_DIE: frozenset({"type", "die"}),
    END_TURN: frozenset({"type"}),
}
MOVE_SHAPE = f'a move is {{"type": one of {list(MOVE_FIELDS)}, ...}} with that type\'s fields'


def set_bonus(cards: int) -> int:
    """The set bonus for `cards` cards of one colour: 0 for one card, n*(n+1)/2 from two on."""
    return cards * (cards + 1) // 2 if cards >= 2 else 0


def parse_points(text: str) -> dict[str, int]:
    """The `card_points` option: comma-separated `kind=points`; unnamed kinds keep the default."""
    points = dict(DEFAULT_POINTS)
    named: set[str] = set()
    for item in text.split(","):
        kind, equals, number = item.strip().partition("=")
        kind = kind.strip()
        if not equals or kind not in DEFAULT_POINTS:
            raise OptionError("card_points", f"needs kind=points items with kinds {POINT_KEYS}")
        if kind in named:
            raise OptionError("card_points", f"names {kind} twice")
        number = number.strip()
        if not (number.isascii() and number.isdigit()) or int(number) > MAX_POINTS:
            raise OptionError("card_points", f"points must be whole numbers 0 to {MAX_POINTS}")
        named.add(kind)
        points[kind] = int(number)
    return points


@dataclass(frozen=True)
class CardPointsOption(Option):
    """A string option whose value must parse as `kind=points` items."""

    def check(self, value: JSON) -> None:
        super().check(value)
        parse_points(value)


CARD_POINTS = CardPointsOption(
    name="card_points",
    default=",".join(f"{kind}={DEFAULT_POINTS[kind]}" for kind in POINT_KEYS),
    kind=str,
    description="Victory points per card kind, as comma-separated kind=points (0 to 100) with "
    f"kinds {', '.join(POINT_KEYS)}; a kind left out keeps its default.",
)


def kind_points(options: Mapping[str, JSON]) -> tuple[int, ...]:
    """Points per kind (index `kind`), then the joker's (index `JOKER`), from the options."""
    return _kind_points(options.get(CARD_POINTS.name, CARD_POINTS.default))


@cache
def _kind_points(text: str) -> tuple[int, ...]:
    points = parse_points(text)
    singles = points["single"]
    return (
        *(singles if kind < PAIR else points[KINDS[kind]] for kind in range(JOKER)),
        points["joker"],
    )


MOST_CARDS = max(stacks * size for stacks, size in STACKS.values())
"""Every player count deals 36 cards into stacks: no seat can win more."""


BEST_SETS = 2 * set_bonus(CARDS_PER_COLOUR) + set_bonus(CARDS_PER_COLOUR + 1)
"""The highest set bonus any seat can reach: three full colours, one with the joker (247). A
bonus grows faster than its cards, so the most cards (36) go into as few colours as they fill.
`tests/games/test_rollnbump.py` checks it against every split of the cards over the colours, a
search that took a fifth of a second in every process that imported the game."""

INFO = GameInfo(
    id="rollnbump",
    title="Roll'n Bump",
    min_players=2,
    max_players=5,
    options=(FIRST_SEAT, CARD_POINTS),
    score_range=(0, (MOST_CARDS + 1) * MAX_POINTS + BEST_SETS + max(FACES)),
    summary="Roll five dice up to three times, place them on face-up cards whose pattern they "
    "show and bump weaker claims; cards still under your dice at your next turn are yours. "
    "Points per card plus a bonus per colour set; most points wins.",
)


@dataclass(frozen=True)
class Claim:
    """Dice of `seat` lying on a card or on the white-die spot."""

    seat: int
    dice: tuple[int, ...]


@dataclass(frozen=True)
class State:
    players: int
    points: tuple[int, ...]
    """Points per kind (index `kind`), then the joker's (index `JOKER`)."""
    tops: tuple[int | None, ...] = ()
    """The face-up card of each stack; None once the stack is empty."""
    face_down: tuple[int, ...] = ()
    claims: tuple[Claim | None, ...] = ()
    unseen: int = ALL_CARDS
    """Bit mask of the cards nobody has seen: face down in a stack or out of the game."""
    won: tuple[tuple[int, ...], ...] = ()
    white_spot: Claim | None = None
    white_holder: int | None = None
    white_value: int | None = None
    """The white die's value while its holder has rolled it this turn, or its scoring roll."""
    joker_holder: int | None = None
    joker_colour: int | None = None
    turn: int | None = None
    turns: int = 0
    dice_count: int = 0
    dice: tuple[int, ...] = ()
    """The unplaced dice of the seat to move, sorted."""
    rolls: int = 0
    claiming: bool = False
    """The seat to move has claimed or used the white die: its rolling is over."""
    over: bool = False

    def colour_counts(self, seat: int) -> list[int]:
        """Cards per colour `seat` holds, the joker included."""
        counts = [0] * len(COLOURS)
        for card in self.won[seat]:
            counts[card // CARDS_PER_COLOUR] += 1
        if self.joker_holder == seat and self.joker_colour is not None:
            counts[self.joker_colour] += 1
        return counts

    def score_parts(self, seat: int) -> dict[str, int]:
        """Card points, joker, set bonus and the white die's scoring roll of `seat`."""
        scored_white = self.over and self.white_holder == seat and self.white_value is not None
        return {
            "cards": sum(self.points[card % CARDS_PER_COLOUR] for card in self.won[seat]),
            "joker": self.points[JOKER] if self.joker_holder == seat else 0,
            "sets": sum(set_bonus(count) for count in self.colour_counts(seat)),
            "white_die": (self.white_value or 0) if scored_white else 0,
        }

    def score(self, seat: int) -> int:
        """The sum of `score_parts`, without building them: every view and evaluation asks."""
        holds_joker = self.joker_holder == seat
        total = _cards_and_sets(
            self.points, self.won[seat], self.joker_colour if holds_joker else None
        )
        if holds_joker:
            total += self.points[JOKER]
        if self.over and self.white_holder == seat and self.white_value is not None:
            total += self.white_value
        return total


@lru_cache(maxsize=4096)
def _cards_and_sets(points: tuple[int, ...], won: tuple[int, ...], joker_colour: int | None) -> int:
    """The points of the cards `won` and their set bonus, the joker counted in `joker_colour`
    (`score_parts`' cards and sets). A seat's cards change only when it collects."""
    counts = [0] * len(COLOURS)
    for card in won:
        counts[card // CARDS_PER_COLOUR] += 1
    if joker_colour is not None:
        counts[joker_colour] += 1
    cards = sum(points[card % CARDS_PER_COLOUR] for card in won)
    return cards + sum(set_bonus(count) for count in counts)


# --- dice patterns -------------------------------------------------------------------------------


def _counts(dice: Sequence[int]) -> tuple[int, ...]:
    """How many of `dice` show each face; index 0 unused."""
    counts = [0] * 7
    for die in dice:
        counts[die] += 1
    return tuple(counts)


@cache
def sub_multisets(dice: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Every sub-multiset of `dice`, each sorted, the empty one included, in sorted order."""
    # Combinations of sorted dice come out sorted; the set drops those picking equal faces from
    # other places. In C, this is a fraction of building each one face by face. A state's dice
    # are sorted, but a test may build one whose are not, and `SPOT_MOVES` knows sorted sets.
    ordered = sorted(dice)
    found = {claim for size in range(len(dice) + 1) for claim in combinations(ordered, size)}
    return tuple(sorted(found))


def fits(kind: int, dice: tuple[int, ...]) -> bool:
    """Whether the sorted `dice` show exactly what a card of `kind` asks for."""
    if kind < PAIR:
        return len(dice) >= 1 and dice[0] == dice[-1] == kind + 1
    if kind <= QUAD:
        return len(dice) == kind - PAIR + 2 and dice[0] == dice[-1]
    length = kind - RUN_3 + 3
    return len(dice) == length and dice == tuple(range(dice[0], dice[0] + length))


def strength(kind: int, dice: tuple[int, ...]) -> int:
    """What a claim is worth against a bump: dice on a single card, pips on the others."""
    return len(dice) if kind < PAIR else sum(dice)


Claims = tuple[tuple[int, ...], ...]
"""Sets of dice placed together, each sorted."""


@cache
def _fitting(dice: tuple[int, ...]) -> tuple[tuple[Claims, tuple[int, ...]], ...]:
    """For each kind (index `kind`), the sets of the sorted `dice` that fit a card of it, weakest
    first, and their strengths."""
    # All kinds at once: `legal_moves` looks up its dice once rather than once per stack, and
    # there are at most 462 sorted hands of up to five dice to remember. Plain pairs: a named
    # tuple's constructor is Python code, and it made up a quarter of building a hand's entry.
    counts = _counts(dice)
    by_kind = []
    for kind in range(JOKER):
        claims = _claims_of(kind, counts)
        strengths = tuple([strength(kind, claim) for claim in claims]) if claims else ()
        by_kind.append((claims, strengths))
    return tuple(by_kind)


def claims_for(kind: int, dice: tuple[int, ...]) -> Claims:
    """Every set of `dice` that fits a card of `kind`, sorted."""
    claims, _ = _fitting(dice)[kind]
    return claims


def _claims_of(kind: int, counts: tuple[int, ...]) -> Claims:
    """`claims_for(kind, dice)` of the dice with the face `counts`."""
    # List comprehensions and slices rather than generators: a new hand of dice builds all
    # twelve kinds, and random playouts meet a few hundred hands.
    if kind < PAIR:
        face = kind + 1
        return tuple([(face,) * size for size in range(1, counts[face] + 1)])
    if kind <= QUAD:
        size = kind - PAIR + 2
        return tuple([(face,) * size for face in FACES if counts[face] >= size])
    length = kind - RUN_3 + 3
    return tuple(
        [
            tuple(range(low, low + length))
            for low in range(1, 8 - length)
            if all(counts[low : low + length])
        ]
    )


# The moves below are built once and shared by every `legal_moves` answer listing them (the rules
# contract lets it), rather than built anew in every answer.

FIRST_ROLL_MOVE: JSON = {"type": ROLL, "keep": [], "keep_white": False}
"""A turn's first roll: all its dice."""
END_TURN_MOVE: JSON = {"type": END_TURN}

SPOT_MOVES: Mapping[tuple[int, ...], JSON] = {
    claim: {"type": CLAIM_WHITE_SPOT, "dice": [*claim]}
    for size in range(1, DICE + 1)
    for claim in combinations_with_replacement(FACES, size)
}
"""Placing each sorted set of dice on the white-die spot."""

CLAIM_MOVES: Sequence[Mapping[tuple[int, ...], JSON]] = tuple(
    {
        claim: {"type": CLAIM, "stack": stack, "dice": [*claim]}
        for kind in range(JOKER)
        # The face counts of five dice of every face: every set of dice that fits the kind.
        for claim in _claims_of(kind, (0, *(DICE,) * len(FACES)))
    }
    for stack in range(max(stacks for stacks, _ in STACKS.values()))
)
"""Placing each sorted set of dice that fits some card on each stack: by stack, then dice."""


@cache
def _spot_pips(dice: tuple[int, ...]) -> tuple[tuple[int, JSON], ...]:
    """The pips of each set of `dice` but the empty one (`sub_multisets` order, where it comes
    first) and placing it on the white-die spot, summed once per hand rather than in every
    answer listing them."""
    return tuple([(sum(claim), SPOT_MOVES[claim]) for claim in sub_multisets(dice)[1:]])


def _spot_moves(dice: tuple[int, ...], to_beat: int) -> list[JSON]:
    """Placing each set of `dice` (`sub_multisets` order) whose pips beat `to_beat` on the
    white-die spot."""
    return [move for pips, move in _spot_pips(dice) if pips > to_beat]


@cache
def _reroll_moves(dice: tuple[int, ...], holds_white: bool) -> tuple[JSON, ...]:
    """Every re-roll of the sorted `dice`: keeping any of them but not all, unless the white die
    is rolled (if `holds_white`). Half of all the moves listed are these."""
    white_choices = (False, True) if holds_white else (False,)
    return tuple(
        {"type": ROLL, "keep": [*keep], "keep_white": keep_white}
        for keep in sub_multisets(dice)
        for keep_white in white_choices
        if len(keep) < len(dice) or (holds_white and not keep_white)
    )


def dice_without(dice: tuple[int, ...], used: Sequence[int]) -> tuple[int, ...]:
    """`dice` less one die of each value in `used`."""
    remaining = list(dice)
    for die in used:
        remaining.remove(die)
    return tuple(remaining)


def _contains(dice: tuple[int, ...], wanted: Sequence[int]) -> bool:
    """Whether `dice` hold every die of `wanted`, as multisets."""
    # Crossing off die by die: counting faces took a tenth of every claim's step.
    have = list(dice)
    for die in wanted:
        if die not in have:
            return False
        have.remove(die)
    return True


# --- moves ---------------------------------------------------------------------------------------


def _is_int(value: JSON) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


DICE_FORMAT = "dice are a list of face values 1 to 6"


def _dice_list(value: JSON, *, allow_empty: bool) -> tuple[int, ...]:
    # A loop rather than `all` over a generator: this checks every move that places dice.
    if not isinstance(value, list):
        raise RuleError("move-format", DICE_FORMAT)
    for die in value:
        if not _is_int(die) or not 1 <= die <= 6:
            raise RuleError("move-format", DICE_FORMAT)
    if not value and not allow_empty:
        raise RuleError("move-format", "a claim places at least one die")
    if value != sorted(value):
        raise RuleError("move-format", "dice are listed in ascending order")
    return tuple(value)


def _parse(move: JSON) -> Mapping[str, JSON]:
    """`move` after its shape is checked: a known type and exactly that type's fields."""
    # A dict is a Mapping: checking that first skips the slower abstract-class check.
    if not isinstance(move, dict) and not isinstance(move, Mapping):
        raise RuleError("move-format", MOVE_SHAPE)
    kind = move.get("type")
    if not isinstance(kind, str) or kind not in MOVE_FIELDS:
        raise RuleError("move-format", MOVE_SHAPE)
    fields = MOVE_FIELDS[kind]
    if move.keys() != fields:
        raise RuleError("move-format", f"a {kind} move has the fields {sorted(fields)}")
    return move


def _check(state: State, seat: int, move: JSON) -> None:
    """Raises the `RuleError` naming the rule `move` breaks, if it breaks one."""
    move = _parse(move)
    if seat != state.turn:
        raise RuleError("turn-order", f"seat {seat} is not the seat to move")
    kind = move["type"]
    if kind == ROLL:
        _check_roll(state, seat, move)
    elif state.rolls == 0:
        raise RuleError("roll-first", "a turn begins by rolling all your dice")
    elif kind == CLAIM:
        _check_claim(state, seat, move)
    elif kind == CLAIM_WHITE_SPOT:
        _check_claim_white_spot(state, seat, move)
    elif kind == CLAIM_JOKER:
        _check_claim_joker(state, seat, move)
    elif kind == USE_WHITE_DIE:
        _check_use_white_die(state, seat, move)


def _check_roll(state: State, seat: int, move: Mapping[str, JSON]) -> None:
    keep = _dice_list(move["keep"], allow_empty=True)
    keep_white = move["keep_white"]
    if not isinstance(keep_white, bool):
        raise RuleError("move-format", "keep_white is true or false")
    if state.claiming:
        raise RuleError("roll-before-claiming", "once you have claimed, rolling is over")
    if state.rolls >= ROLLS:
        raise RuleError("three-rolls", f"a turn has at most {ROLLS} rolls")
    holds_white = state.white_holder == seat
    if keep_white and not holds_white:
        raise RuleError("white-die-held", "you do not hold the white die")
    if state.rolls == 0:
        if keep or keep_white:
            raise RuleError("first-roll-all-dice", "the first roll of a turn rolls all dice")
        return
    if not _contains(state.dice, keep):
        raise RuleError("dice-in-hand", f"you rolled {list(state.dice)}, not {keep}")
    if len(keep) == len(state.dice) and (keep_white or not holds_white):
        raise RuleError("roll-some-dice", "a re-roll must roll at least one die")


def _check_claim(state: State, seat: int, move: Mapping[str, JSON]) -> None:
    stack = move["stack"]
    if not _is_int(stack) or stack < 0:
        raise RuleError("move-format", "stack is a stack number from 0")
    dice = _dice_list(move["dice"], allow_empty=False)
    if stack >= len(state.tops):
        raise RuleError("no-such-stack", f"there are stacks 0 to {len(state.tops) - 1}")
    card = state.tops[stack]
    if card is None:
        raise RuleError("stack-empty", f"stack {stack} has no card left")
    if not _contains(state.dice, dice):
        raise RuleError("dice-in-hand", f"your unplaced dice are {list(state.dice)}")
    kind = card % CARDS_PER_COLOUR
    if not fits(kind, dice):
        raise RuleError("card-pattern", f"{list(dice)} is not a {KINDS[kind]}")
    held = state.claims[stack]
    if held is not None:
        if held.seat == seat:
            raise RuleError("own-card", f"your dice already lie on stack {stack}")
        if strength(kind, dice) <= strength(kind, held.dice):
            measure = "more dice" if kind < PAIR else "a higher pip total"
            raise RuleError("bump-higher", f"bumping {list(held.dice)} needs {measure}")


def _check_claim_white_spot(state: State, seat: int, move: Mapping[str, JSON]) -> None:
    dice = _dice_list(move["dice"], allow_empty=False)
    if not _contains(state.dice, dice):
        raise RuleError("dice-in-hand", f"your unplaced dice are {list(state.dice)}")
    if state.white_holder is not None:
        raise RuleError(
            "white-die-held", f"seat {state.white_holder} holds the white die: it is not there"
        )
    spot = state.white_spot
    if spot is not None:
        if spot.seat == seat:
            raise RuleError("own-card", "your dice already lie on the white-die spot")
        if sum(dice) <= sum(spot.dice):
            raise RuleError("bump-higher", f"bumping {list(spot.dice)} needs a higher sum")


def _check_claim_joker(state: State, seat: int, move: Mapping[str, JSON]) -> None:
    dice = _dice_list(move["dice"], allow_empty=False)
    colour = move["colour"]
    if colour not in COLOURS:
        raise RuleError("move-format", f"colour is one of {list(COLOURS)}")
    if not _contains(state.dice, dice):
        raise RuleError("dice-in-hand", f"your unplaced dice are {list(state.dice)}")
    if len(dice) != DICE or dice[0] != dice[-1]:
        raise RuleError("joker-five-of-a-kind", "the joker needs five dice of one number")
    if state.joker_holder is not None:
        raise RuleError("joker-taken", f"seat {state.joker_holder} has taken the joker")
    if state.colour_counts(seat)[COLOURS.index(colour)] >= CARDS_PER_COLOUR:
        raise RuleError("joker-colour", f"you already hold all {CARDS_PER_COLOUR} {colour}")


def _check_use_white_die(state: State, seat: int, move: Mapping[str, JSON]) -> None:
    die = move["die"]
    if not _is_int(die) or not 1 <= die <= 6:
        raise RuleError("move-format", "die is the face value 1 to 6 of the die to change")
    if state.white_holder != seat:
        raise RuleError("white-die-held", "you do not hold the white die")
    if die not in state.dice:
        raise RuleError("dice-in-hand", f"your unplaced dice are {list(state.dice)}")
    if die == state.white_value:
        raise RuleError("white-die-changes", f"the white die shows {die} too: nothing changes")


# --- evolve --------------------------------------------------------------------------------------


def _on_stacks_dealt(state: State, data: Mapping[str, JSON]) -> Changes:
    tops = tuple(CARD_NUMBERS[card] for card in data["tops"])
    unseen = state.unseen
    for card in tops:
        unseen &= ~(1 << card)
    return {"tops": tops, "face_down": (data["face_down"],) * len(tops), "unseen": unseen}


def _on_turn_started(state: State, data: Mapping[str, JSON]) -> Changes:
    return {
        "turn": data["seat"],
        "turns": state.turns + 1,
        "dice_count": data["dice"],
        "dice": (),
        "rolls": 0,
        "claiming": False,
        "white_value": None,
    }


def _on_dice_rolled(state: State, data: Mapping[str, JSON]) -> Changes:
    return {
        "dice": tuple(sorted((*data["kept"], *data["rolled"]))),
        "white_value": data["white"],
        "rolls": data["roll"],
    }


def _on_card_claimed(state: State, data: Mapping[str, JSON]) -> Changes:
    claim = Claim(data["seat"], tuple(data["dice"]))
    return {
        "claims": with_item(state.claims, data["stack"], claim),
        "dice": dice_without(state.dice, data["dice"]),
        "claiming": True,
    }


def _on_white_spot_claimed(state: State, data: Mapping[str, JSON]) -> Changes:
    return {
        "white_spot": Claim(data["seat"], tuple(data["dice"])),
        "dice": dice_without(state.dice, data["dice"]),
        "claiming": True,
    }


def _on_joker_taken(state: State, data: Mapping[str, JSON]) -> Changes:
    return {
        "joker_holder": data["seat"],
        "joker_colour": COLOURS.index(data["colour"]),
        "dice": dice_without(state.dice, data["dice"]),
        "claiming": True,
    }


def _on_white_die_used(state: State, data: Mapping[str, JSON]) -> Changes:
    """One die of the hand turns into the white die's value; the white die goes back to the
    middle."""
    dice = (*dice_without(state.dice, [data["replaced"]]), data["value"])
    return {
        "dice": tuple(sorted(dice)),
        "white_holder": None,
        "white_value": None,
        "claiming": True,
    }


def _on_turn_ended(state: State, data: Mapping[str, JSON]) -> Changes:
    return {"turn": None, "dice": (), "white_value": None}


def _on_collected(state: State, data: Mapping[str, JSON]) -> Changes:
    """The seat takes back its dice: the cards under them become its, the white die too if its
    dice lay on the spot. Nothing changes in almost half of all collections."""
    seat = data["seat"]
    changes: Changes = {}
    if data["cards"]:
        tops, claims = list(state.tops), list(state.claims)
        cards = []
        for taken in data["cards"]:
            stack = taken["stack"]
            cards.append(CARD_NUMBERS[taken["card"]])
            tops[stack] = claims[stack] = None
        changes["tops"], changes["claims"] = tuple(tops), tuple(claims)
        changes["won"] = with_item(state.won, seat, tuple(sorted((*state.won[seat], *cards))))
    if data["white_die"]:
        changes["white_spot"], changes["white_holder"] = None, seat
    return changes


def _on_card_revealed(state: State, data: Mapping[str, JSON]) -> Changes:
    stack, card = data["stack"], CARD_NUMBERS[data["card"]]
    return {
        "tops": with_item(state.tops, stack, card),
        "face_down": with_item(state.face_down, stack, state.face_down[stack] - 1),
        "unseen": state.unseen & ~(1 << card),
    }


def _on_white_die_rolled(state: State, data: Mapping[str, JSON]) -> Changes:
    return {"white_value": data["value"]}


def _on_game_ended(state: State, data: Mapping[str, JSON]) -> Changes:
    return {"turn": None, "over": True}


EVOLVERS: Evolvers[State] = {
    "StacksDealt": _on_stacks_dealt,
    "TurnStarted": _on_turn_started,
    "DiceRolled": _on_dice_rolled,
    "CardClaimed": _on_card_claimed,
    "WhiteSpotClaimed": _on_white_spot_claimed,
    "JokerTaken": _on_joker_taken,
    "WhiteDieUsed": _on_white_die_used,
    "TurnEnded": _on_turn_ended,
    "Collected": _on_collected,
    "CardRevealed": _on_card_revealed,
    "WhiteDieRolled": _on_white_die_rolled,
    "GameEnded": _on_game_ended,
}
"""What each event changes in a state: `evolve` copies the state with it, and a move's
`FoldingDecision` writes it into the one copy it makes for the move (3.5 events on average
when a turn ends, one for every other move)."""


NOBODY: frozenset[int] = frozenset()
ONLY_SEAT = tuple(frozenset({seat}) for seat in range(INFO.max_players))
"""`to_act`'s answers, built once rather than at every action (frozensets never change)."""


class RollnBump(DecidesBySteps):
    """Roll'n Bump behind the rules contract."""

    info = INFO

    def initial_state(self, players: int, options: Mapping[str, JSON]) -> State:
        stacks, _ = STACKS[players]
        return State(
            players=players,
            points=kind_points(options),
            tops=(None,) * stacks,
            face_down=(0,) * stacks,
            claims=(None,) * stacks,
            won=((),) * players,
        )

    def setup(self, players: int, options: Mapping[str, JSON], rng: Chance) -> list[Event]:
        stacks, size = STACKS[players]
        # Shuffling the 48 cards and turning up each stack's top card shows a uniform sample.
        tops = rng.sample(range(len(CARD_IDS)), stacks)
        first = choose_first_seat(players, options, rng)
        return [
            Event("StacksDealt", {"tops": [CARD_IDS[c] for c in tops], "face_down": size - 1}),
            Event("TurnStarted", {"seat": first, "dice": FIRST_ROUND_DICE[0]}),
        ]

    # -- evolve ------------------------------------------------------------------------------------

    def evolve(self, state: State, event: Event) -> State:
        return evolved("rollnbump", EVOLVERS, state, event)

    # -- who may move, and how -------------------------------------------------------------------

    def to_act(self, state: State) -> frozenset[int]:
        return NOBODY if state.turn is None else ONLY_SEAT[state.turn]

    may_act = to_act  # nobody acts out of turn

    @remembers_last_answer
    def legal_moves(self, state: State, seat: int) -> list[JSON]:
        if seat != state.turn:
            return []
        if state.rolls == 0:
            return [FIRST_ROLL_MOVE]
        moves: list[JSON] = []
        dice = state.dice
        holds_white = state.white_holder == seat
        if not state.claiming and state.rolls < ROLLS:
            moves += _reroll_moves(dice, holds_white)
        if not dice:
            # Every die placed: no claim, joker or swap is left (a sixth of a playout's calls).
            moves.append(END_TURN_MOVE)
            return moves
        by_kind = _fitting(dice)
        for stack, card in enumerate(state.tops):
            if card is None:
                continue
            kind = card % CARDS_PER_COLOUR
            claims, strengths = by_kind[kind]
            if not claims:
                continue  # most cards take none of the dice
            held = state.claims[stack]
            if held is not None:
                if held.seat == seat:
                    continue
                # Only the stronger claims bump; `claims` lists them weakest first.
                claims = claims[bisect_right(strengths, strength(kind, held.dice)) :]
            on_stack = CLAIM_MOVES[stack]
            for claim in claims:
                moves.append(on_stack[claim])
        spot = state.white_spot
        if state.white_holder is None and (spot is None or spot.seat != seat):
            to_beat = 0 if spot is None else sum(spot.dice)
            moves += _spot_moves(dice, to_beat)
        if state.joker_holder is None and len(dice) == DICE and dice[0] == dice[-1]:
            counts = state.colour_counts(seat)
            moves += [
                {"type": CLAIM_JOKER, "dice": [*dice], "colour": colour}
                for colour, count in zip(COLOURS, counts, strict=True)
                if count < CARDS_PER_COLOUR
            ]
        if holds_white:
            moves += [
                {"type": USE_WHITE_DIE, "die": die}
                for die in sorted(set(dice))
                if die != state.white_value
            ]
        moves.append(END_TURN_MOVE)
        return moves

    # -- decide ------------------------------------------------------------------------------------

    def step(self, state: State, seat: int, move: JSON, rng: Chance) -> tuple[list[Event], State]:
        if not listed(move, self.legal_moves(state, seat)):
            _check(state, seat, move)
        log = FoldingDecision(EVOLVERS, state)
        kind = move["type"]
        if kind == ROLL:
            log.add("DiceRolled", self._roll(state, seat, move, rng))
        elif kind == CLAIM:
            log.add("CardClaimed", self._claim(state, seat, move))
        elif kind == CLAIM_WHITE_SPOT:
            log.add(
                "WhiteSpotClaimed",
                {"seat": seat, "dice": [*move["dice"]], "bumped": _claim_json(state.white_spot)},
            )
        elif kind == CLAIM_JOKER:
            log.add("JokerTaken", {"seat": seat, "dice": [*move["dice"]], "colour": move["colour"]})
        elif kind == USE_WHITE_DIE:
            log.add(
                "WhiteDieUsed", {"seat": seat, "replaced": move["die"], "value": state.white_value}
            )
        else:
            self._end_turn(log, seat, rng)
        return log.events, log.state  # `log.outcome()` without a method call at every move

    @staticmethod
    def _roll(state: State, seat: int, move: Mapping[str, JSON], rng: Chance) -> dict[str, JSON]:
        """The `DiceRolled` data of `seat`'s roll `move`."""
        keep = move["keep"]
        count = len(state.dice) - len(keep) if state.rolls else state.dice_count
        # `choice(FACES)` draws what `randint(1, 6)` does, from the same randomness (the `Chance`
        # contract defines both by `randrange(6)`), with fewer calls in `random.Random`.
        rolled = sorted([rng.choice(FACES) for _ in range(count)])
        white = None
        if state.white_holder == seat:
            white = state.white_value if move["keep_white"] else rng.choice(FACES)
        return {
            "seat": seat,
            "roll": state.rolls + 1,
            "kept": [*keep],
            "rolled": rolled,
            "white": white,
        }

    @staticmethod
    def _claim(state: State, seat: int, move: Mapping[str, JSON]) -> dict[str, JSON]:
        """The `CardClaimed` data of `seat`'s claim `move`."""
        stack = move["stack"]
        card = state.tops[stack]
        assert card is not None, "a legal claim names a stack with a card"
        return {
            "seat": seat,
            "stack": stack,
            "card": CARD_IDS[card],
            "dice": [*move["dice"]],
            "bumped": _claim_json(state.claims[stack]),
        }

    @staticmethod
    def _end_turn(log: FoldingDecision[State], seat: int, rng: Chance) -> None:
        """`seat` ends its turn: the next seat collects, a card is turned up on each stack it
        took one from, and its turn starts, unless enough stacks are empty to end the game."""
        # `log.state` is the move's one copy: each read shows every event added before it.
        players = log.state.players
        log.add("TurnEnded", {"seat": seat})
        nxt = (seat + 1) % players
        collected = _collection(log.state, nxt)
        log.add("Collected", collected)
        for taken in collected["cards"]:
            stack = taken["stack"]
            if log.state.face_down[stack]:
                log.add("CardRevealed", {"stack": stack, "card": _draw(log.state, rng)})
        tops, turns = log.state.tops, log.state.turns
        if tops.count(None) < EMPTY_STACKS_TO_END[players]:
            dice = FIRST_ROUND_DICE[turns] if turns < len(FIRST_ROUND_DICE) else DICE
            log.add("TurnStarted", {"seat": nxt, "dice": dice})
            return
        # The end: everybody else collects as in step 1 (no card is turned up any more, it could
        # change nothing), then the white die is rolled for points.
        empty = [stack for stack, card in enumerate(tops) if card is None]
        for step in range(1, players):
            final = _collection(log.state, (nxt + step) % players)
            if final["cards"] or final["white_die"]:
                log.add("Collected", final)
        holder = log.state.white_holder
        if holder is not None:
            log.add("WhiteDieRolled", {"seat": holder, "value": rng.randint(1, 6)})
        log.add("GameEnded", {"empty_stacks": empty})

    # -- what a seat sees ------------------------------------------------------------------------

    def view(self, state: State, seat: int | None) -> dict[str, JSON]:
        # Nothing in the state is hidden: the stacks' order is not in it (see the module doc).
        return {
            "stacks": [
                {
                    "card": None if card is None else CARD_IDS[card],
                    "face_down": face_down,
                    "claim": _claim_json(claim),
                }
                for card, face_down, claim in zip(
                    state.tops, state.face_down, state.claims, strict=True
                )
            ],
            "white_spot": _claim_json(state.white_spot),
            "white_die": {"holder": state.white_holder, "value": state.white_value},
            "joker": {
                "holder": state.joker_holder,
                "colour": None if state.joker_colour is None else COLOURS[state.joker_colour],
            },
            "won": [[CARD_IDS[card] for card in cards] for cards in state.won],
            "scores": list(self.scores(state)),
            "turn": state.turn,
            "dice_count": state.dice_count,
            "dice": list(state.dice),
            "rolls": state.rolls,
            "step": STEP_CLAIM if state.claiming else STEP_ROLL,
            "unseen_cards": state.unseen.bit_count(),
        }

    def redact(self, event: Event, seat: int | None) -> Event | None:
        # Every event shows only cards already face up and dice everybody saw rolled.
        return event

    def result(self, state: State) -> Result | None:
        if not state.over:
            return None
        parts = [state.score_parts(seat) for seat in range(state.players)]
        scores = tuple(sum(part.values()) for part in parts)
        return Result(
            winners=winners_by(scores, highest=True), scores=scores, details={"parts": parts}
        )

    def scores(self, state: State) -> tuple[int, ...]:
        # The view's scores: the white die's roll counts once the game is over, as in `result`.
        return tuple(state.score(seat) for seat in range(state.players))

    def evaluate(self, state: State) -> tuple[float, ...]:
        if (result := self.result(state)) is not None:
            return result.shares()
        standing = [_expected_score(state, seat) for seat in range(state.players)]
        # The fewer cards the game has left, the less the standing can still change.
        temperature = EVAL_TEMPERATURE_END + EVAL_TEMPERATURE_SPAN * _game_left(state)
        best = max(standing)
        weights = [exp((score - best) / temperature) for score in standing]
        total = sum(weights)
        return tuple(weight / total for weight in weights)

    def conceal(self, state: State, seat: int | None, rng: Random) -> State:
        # Face-down cards are drawn only when turned up, so there is nothing to re-draw.
        return state

    def sample(
        self,
        players: int,
        options: Mapping[str, JSON],
        view: Mapping[str, JSON],
        seat: int,
        rng: Random,
    ) -> State:
        # The view shows the whole state (see the module doc), so nothing is drawn: every card
        # ever turned up is face up or won, the rest are unseen. Only the turn counter is not
        # shown; the rules need just whether this is the first or second turn, which
        # `dice_count` tells, so the sample takes the fewest turns the view allows.
        stacks = view["stacks"]
        tops = tuple(
            None if stack["card"] is None else CARD_NUMBERS[stack["card"]] for stack in stacks
        )
        won = tuple(tuple(CARD_NUMBERS[card] for card in cards) for cards in view["won"])
        unseen = ALL_CARDS
        for card in (*tops, *(card for cards in won for card in cards)):
            if card is not None:
                unseen &= ~(1 << card)
        white_die, joker = view["white_die"], view["joker"]
        dice_count = view["dice_count"]
        first_round = FIRST_ROUND_DICE.index(dice_count) if dice_count in FIRST_ROUND_DICE else None
        return State(
            players=players,
            points=kind_points(options),
            tops=tops,
            face_down=tuple(stack["face_down"] for stack in stacks),
            claims=tuple(_claim_of(stack["claim"]) for stack in stacks),
            unseen=unseen,
            won=won,
            white_spot=_claim_of(view["white_spot"]),
            white_holder=white_die["holder"],
            white_value=white_die["value"],
            joker_holder=joker["holder"],
            joker_colour=None if joker["colour"] is None else COLOURS.index(joker["colour"]),
            turn=view["turn"],
            turns=len(FIRST_ROUND_DICE) + 1 if first_round is None else first_round + 1,
            dice_count=dice_count,
            dice=tuple(view["dice"]),
            rolls=view["rolls"],
            claiming=view["step"] == STEP_CLAIM,
            over=view["turn"] is None,
        )


def _claim_json(claim: Claim | None) -> JSON:
    return None if claim is None else {"seat": claim.seat, "dice": list(claim.dice)}


def _game_left(state: State) -> float:
    """How much of the game is left, 1 at the start to 0 at the end: the cards left in the stack
    whose emptying ends the game, over the cards a stack starts with."""
    depths = sorted(
        down + (card is not None) for card, down in zip(state.tops, state.face_down, strict=True)
    )
    return depths[EMPTY_STACKS_TO_END[state.players] - 1] / STACKS[state.players][1]


def _expected_score(state: State, seat: int) -> float:
    """`seat`'s score if the game ended now, plus what its dice are likely to win: each card
    under them counts as far as the claim is likely to survive the turns before `seat`
    collects it, and the white die (held or claimed) as the mean of its scoring roll."""
    counts = state.colour_counts(seat)
    sets = sum(set_bonus(count) for count in counts)
    score = state.score(seat)
    # Every seat from the one to move up to `seat` may still bump `seat`'s dice; all the
    # others may bump the dice the seat to move places now.
    to_move = seat if state.turn is None else state.turn
    bumpers = (seat - to_move) % state.players or state.players - 1
    survival = EVAL_CLAIM_SURVIVAL**bumpers
    claimed = 0.0
    for card, claim in zip(state.tops, state.claims, strict=True):
        if claim is not None and claim.seat == seat and card is not None:
            claimed += state.points[card % CARDS_PER_COLOUR]
            counts[card // CARDS_PER_COLOUR] += 1
    claimed += sum(set_bonus(count) for count in counts) - sets
    if state.white_spot is not None and state.white_spot.seat == seat:
        claimed += WHITE_DIE_MEAN
    held = WHITE_DIE_MEAN if state.white_holder == seat else 0
    return score + held + survival * claimed


def _claim_of(claim: JSON) -> Claim | None:
    """The `Claim` a view shows as `_claim_json`."""
    return None if claim is None else Claim(claim["seat"], tuple(claim["dice"]))


def _collection(state: State, seat: int) -> dict[str, JSON]:
    """The `Collected` data of `seat` taking back its dice: the cards under them and, from the
    spot, the white die."""
    tops = state.tops
    # Only the claims are walked; a top is looked up for the seat's own alone.
    cards = [
        {"stack": stack, "card": CARD_IDS[card]}
        for stack, claim in enumerate(state.claims)
        if claim is not None and claim.seat == seat and (card := tops[stack]) is not None
    ]
    spot = state.white_spot
    return {"seat": seat, "cards": cards, "white_die": spot is not None and spot.seat == seat}


def _draw(state: State, rng: Chance) -> str:
    """A card drawn uniformly from those nobody has seen."""
    return CARD_IDS[rng.choice(_cards_in(state.unseen))]


@lru_cache(maxsize=1024)
def _cards_in(mask: int) -> tuple[int, ...]:
    """The cards of the bit mask `mask`, in order. Playouts from one table turn up cards from the
    same few masks again and again."""
    # Eight cards at a time: testing all 48 bits one by one cost three times as much, and random
    # playouts meet a new mask at almost every card turned up.
    cards: tuple[int, ...] = ()
    for byte, cards_by_value in enumerate(_CARDS_OF_BYTE):
        cards += cards_by_value[mask >> 8 * byte & 0xFF]
    return cards


_CARDS_OF_BYTE = tuple(
    tuple(tuple(8 * byte + bit for bit in range(8) if value >> bit & 1) for value in range(256))
    for byte in range((len(CARD_IDS) + 7) // 8)
)
"""For each byte of a card mask (lowest first) and each value it may have, the cards it holds."""


RULES = RollnBump()
