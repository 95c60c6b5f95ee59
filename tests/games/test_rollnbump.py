"""Roll'n Bump rule tests: hand-built positions pinned against `docs/rules/rollnbump.md`.

Sections follow the rules file paragraph by paragraph. Every test talks to the engine through
`RULES`; events are folded with `RULES.evolve`, chance comes from seeded `random.Random`s.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from functools import partial, reduce
from itertools import product
from random import Random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.games.rollnbump import (
    ALL_CARDS,
    BEST_SETS,
    CARD_IDS,
    CARD_NUMBERS,
    CARDS_PER_COLOUR,
    COLOURS,
    DEFAULT_POINTS,
    MOST_CARDS,
    RULES,
    STACKS,
    Claim,
    State,
    parse_points,
    set_bonus,
)
from domain.rules import Event, OptionError, Result
from tests.games.refusals import refused_rule

SEED = 4242


def position(
    tops: Sequence[str | None],
    *,
    players: int = 3,
    face_down: Sequence[int] | None = None,
    claims: Mapping[int, tuple[int, Sequence[int]]] | None = None,
    won: Sequence[Sequence[str]] | None = None,
    dice: Sequence[int] = (),
    rolls: int = 1,
    turn: int | None = 0,
    turns: int = 10,
    dice_count: int = 5,
    white_spot: tuple[int, Sequence[int]] | None = None,
    white_holder: int | None = None,
    white_value: int | None = None,
    joker: tuple[int, str] | None = None,
    claiming: bool = False,
    options: Mapping[str, Any] | None = None,
) -> State:
    """A running game: `tops` are the face-up cards by stack, `claims` map stack -> (seat, dice).

    Every card neither face up nor won counts as unseen; by default every stack has three
    face-down cards, it is turn `turns` (past the first round) and seat 0 has rolled once.
    """
    start = RULES.initial_state(players, RULES.info.resolve_options(players, options or {}))
    top_numbers = tuple(None if card is None else CARD_NUMBERS[card] for card in tops)
    won_numbers = tuple(
        tuple(sorted(CARD_NUMBERS[card] for card in cards))
        for cards in (won if won is not None else [()] * players)
    )
    seen = [card for card in top_numbers if card is not None]
    seen += [card for cards in won_numbers for card in cards]
    unseen = ALL_CARDS
    for card in seen:
        unseen &= ~(1 << card)
    claim_list: list[Claim | None] = [None] * len(tops)
    for stack, (seat, claimed) in (claims or {}).items():
        claim_list[stack] = Claim(seat, tuple(claimed))
    return State(
        players=players,
        points=start.points,
        tops=top_numbers,
        face_down=tuple(face_down) if face_down is not None else (3,) * len(tops),
        claims=tuple(claim_list),
        unseen=unseen,
        won=won_numbers,
        white_spot=None if white_spot is None else Claim(white_spot[0], tuple(white_spot[1])),
        white_holder=white_holder,
        white_value=white_value,
        joker_holder=None if joker is None else joker[0],
        joker_colour=None if joker is None else COLOURS.index(joker[1]),
        turn=turn,
        turns=turns,
        dice_count=dice_count,
        dice=tuple(sorted(dice)),
        rolls=rolls,
        claiming=claiming,
    )


def fold(state: State, events: Iterable[Event]) -> State:
    return reduce(RULES.evolve, events, state)


def act(
    state: State, seat: int, move: Mapping[str, Any], seed: int = SEED
) -> tuple[State, list[Event]]:
    """Decide `move` and fold its events."""
    events = RULES.decide(state, seat, move, Random(seed))
    return fold(state, events), events


broken_rule = partial(refused_rule, RULES, SEED)


def of_type(events: Iterable[Event], kind: str) -> list[dict[str, Any]]:
    return [dict(event.data) for event in events if event.type == kind]


def moves_of(state: State, kind: str, seat: int = 0) -> list[dict[str, Any]]:
    """The legal moves of `seat` of one type."""
    return [m for m in RULES.legal_moves(state, seat) if m["type"] == kind]


def claim(stack: int, *dice: int) -> dict[str, Any]:
    return {"type": "claim", "stack": stack, "dice": list(dice)}


def spot(*dice: int) -> dict[str, Any]:
    return {"type": "claim_white_spot", "dice": list(dice)}


def roll(*keep: int, keep_white: bool = False) -> dict[str, Any]:
    return {"type": "roll", "keep": list(keep), "keep_white": keep_white}


END = {"type": "end_turn"}


def dealt(players: int, seed: int, **options: Any) -> tuple[list[Event], State]:
    resolved = RULES.info.resolve_options(players, options)
    events = RULES.setup(players, resolved, Random(seed))
    return events, fold(RULES.initial_state(players, resolved), events)


def finished(state: State) -> Result:
    result = RULES.result(state)
    assert result is not None
    return result


# --- components ----------------------------------------------------------------------------------


def test_48_cards_four_colours_twelve_kinds() -> None:
    assert len(CARD_IDS) == len(set(CARD_IDS)) == 48
    assert COLOURS == ("red", "yellow", "blue", "black")
    kinds = [f"single-{n}" for n in range(1, 7)]
    kinds += ["pair", "triple", "quad", "run-3", "run-4", "run-5"]
    assert {f"{colour}-{kind}" for colour in COLOURS for kind in kinds} == set(CARD_IDS)


def test_two_to_five_players() -> None:
    assert (RULES.info.min_players, RULES.info.max_players) == (2, 5)
    assert RULES.info.title == "Roll'n Bump"


# Cards each seat holds and the card points they are worth by default (rollnbump.md).
DEFAULT_CARD_POINTS = [
    pytest.param(["red-single-1"], 1, id="single-1"),
    pytest.param(["red-single-6"], 1, id="single-6"),
    pytest.param(["red-pair"], 2, id="pair"),
    pytest.param(["red-run-3"], 2, id="run-3"),
    pytest.param(["red-triple"], 4, id="triple"),
    pytest.param(["red-run-4"], 4, id="run-4"),
    pytest.param(["red-run-5"], 6, id="run-5"),
    pytest.param(["red-quad"], 8, id="quad"),
]


def game_over(
    won: Sequence[Sequence[str]],
    *,
    joker: tuple[int, str] | None = None,
    white: tuple[int, int] | None = None,
    options: Mapping[str, Any] | None = None,
) -> State:
    """A finished game in which each seat won `won`; `white` is (holder, scoring roll)."""
    state = position(
        ["blue-pair"],
        players=len(won),
        face_down=[0],
        won=won,
        joker=joker,
        white_holder=None if white is None else white[0],
        options=options,
    )
    events = (
        [] if white is None else [Event("WhiteDieRolled", {"seat": white[0], "value": white[1]})]
    )
    return fold(state, [*events, Event("GameEnded", {"empty_stacks": []})])


@pytest.mark.parametrize(("cards", "points"), DEFAULT_CARD_POINTS)
def test_default_card_points(cards: list[str], points: int) -> None:
    result = finished(game_over([cards, []]))
    assert result.scores == (points, 0)
    assert result.details["parts"][0] == {"cards": points, "joker": 0, "sets": 0, "white_die": 0}


def test_the_joker_is_worth_15() -> None:
    result = finished(game_over([[], []], joker=(1, "black")))
    assert result.scores == (0, 15)
    assert result.details["parts"][1]["joker"] == 15


def test_card_points_option_changes_the_points() -> None:
    options = {"card_points": "single=3, quad=20,joker=0"}
    result = finished(
        game_over([["red-single-2", "red-quad"], ["blue-pair"]], joker=(1, "red"), options=options)
    )
    # seat 0: 3 + 20 and 3 for two reds; seat 1: pair keeps its default 2, joker 0, two cards
    # in two colours make no set.
    assert result.scores == (3 + 20 + 3, 2)


def test_card_points_default_names_every_kind() -> None:
    (option,) = [o for o in RULES.info.options if o.name == "card_points"]
    assert option.default == "single=1,pair=2,triple=4,quad=8,run-3=2,run-4=4,run-5=6,joker=15"
    assert parse_points(option.default) == DEFAULT_POINTS


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("", id="empty"),
        pytest.param("pair", id="no-points"),
        pytest.param("pair=two", id="not-a-number"),
        pytest.param("pair=-1", id="negative"),
        pytest.param("pair=101", id="too-many"),
        pytest.param("pair=2,pair=3", id="twice"),
        pytest.param("single-3=2", id="unknown-kind"),
        pytest.param(3, id="not-a-string"),
        pytest.param(None, id="null"),
    ],
)
def test_card_points_option_is_checked(value: object) -> None:
    with pytest.raises(OptionError) as error:
        RULES.info.resolve_options(3, {"card_points": value})
    assert error.value.option == "card_points"


def test_score_range_covers_the_best_possible_score() -> None:
    # 36 quads worth 100, the joker worth 100, two colours of 12 and one of 12 plus the joker
    # (a 13-card set: 91), a white 6.
    assert RULES.info.score_range == (0, 37 * 100 + 2 * 78 + 91 + 6)


def test_the_best_set_bonus_is_the_best_split_of_the_most_cards_over_the_colours() -> None:
    """Every split of the cards a seat can win over the colours (at most 12 each), the joker
    raising any one colour by one: it joins a colour while that holds fewer than 12, and the
    colour's 12th card may still follow, so a colour can count 13 (12 cards and the joker)."""
    best = max(
        sum(set_bonus(count + (colour == joker)) for colour, count in enumerate(counts))
        for counts in product(range(CARDS_PER_COLOUR + 1), repeat=len(COLOURS))
        if sum(counts) <= MOST_CARDS
        for joker in range(len(COLOURS))
    )
    assert BEST_SETS == best == 247


def test_the_rule_books_set_bonus_example() -> None:
    """docs/rules/rollnbump.md, "A set bonus": five red cards earn 15, two yellow ones with the
    joker placed in yellow earn 6."""
    reds = ["red-single-1", "red-single-2", "red-single-3", "red-pair", "red-triple"]
    state = game_over([[*reds, "yellow-single-4", "yellow-pair"], []], joker=(0, "yellow"))
    assert state.colour_counts(0) == [5, 3, 0, 0]  # red, yellow (the joker's), blue, black
    assert finished(state).details["parts"][0]["sets"] == 15 + 6


def test_a_colour_of_twelve_cards_and_the_joker_is_a_thirteen_card_set() -> None:
    # The joker joins red while red holds 11; red's 12th card is won later.
    state = replace(
        RULES.initial_state(2, {}),
        won=(tuple(range(36)), ()),
        joker_holder=0,
        joker_colour=0,
    )
    assert state.colour_counts(0) == [13, 12, 12, 0]
    assert state.score_parts(0)["sets"] == 91 + 2 * 78
    assert RULES.scores(state)[0] <= RULES.info.score_range[1]


# --- setup ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("players", "stacks", "size"), [(2, 6, 6), (3, 9, 4), (4, 9, 4), (5, 12, 3)]
)
def test_stacks_per_player_count(players: int, stacks: int, size: int) -> None:
    events, state = dealt(players, SEED)
    (deal,) = of_type(events, "StacksDealt")
    assert len(deal["tops"]) == len(set(deal["tops"])) == stacks
    assert deal["face_down"] == size - 1
    assert state.face_down == (size - 1,) * stacks
    assert all(card is not None for card in state.tops)
    assert state.unseen.bit_count() == 48 - stacks
    assert state.claims == (None,) * stacks
    view = RULES.view(state, None)
    assert [s["card"] for s in view["stacks"]] == deal["tops"]
    assert view["unseen_cards"] == 48 - stacks


def test_joker_and_white_die_start_in_the_middle() -> None:
    _, state = dealt(4, SEED)
    view = RULES.view(state, 2)
    assert view["joker"] == {"holder": None, "colour": None}
    assert view["white_die"] == {"holder": None, "value": None}
    assert view["white_spot"] is None


@pytest.mark.parametrize(("players", "first"), [(2, 1), (3, 0), (5, 4)])
def test_first_seat_option(players: int, first: int) -> None:
    for seed in range(4):
        events, state = dealt(players, seed, first_seat=first)
        assert of_type(events, "TurnStarted") == [{"seat": first, "dice": 3}]
        assert RULES.to_act(state) == {first}


def test_the_rng_chooses_the_first_seat() -> None:
    firsts = {dealt(4, seed)[1].turn for seed in range(40)}
    assert firsts == {0, 1, 2, 3}
    assert dealt(4, 7) == dealt(4, 7)


def test_revealed_cards_are_never_seen_before() -> None:
    """Turned-up cards come from those nobody has seen: no card shows up twice in a game."""
    for seed in range(6):
        players = 2 + seed % 4
        events, state = dealt(players, seed)
        seen = list(of_type(events, "StacksDealt")[0]["tops"])
        rng = Random(seed)
        while RULES.to_act(state):
            (seat,) = RULES.to_act(state)
            events = RULES.decide(state, seat, rng.choice(RULES.legal_moves(state, seat)), rng)
            seen += [e["card"] for e in of_type(events, "CardRevealed")]
            state = fold(state, events)
        assert len(seen) == len(set(seen))
        stacks, size = STACKS[players]
        assert len(seen) <= stacks * size


# --- a turn, 1: collect --------------------------------------------------------------------------

TOPS = ["red-pair", "blue-single-3", "yellow-run-3", "black-triple"]


def test_collect_takes_the_cards_under_ones_dice_and_turns_up_the_next() -> None:
    state = position(
        TOPS,
        face_down=[2, 0, 1, 3],
        claims={0: (1, [4, 4]), 1: (2, [3]), 2: (1, [1, 2, 3])},
        won=[[], ["red-quad"], []],
    )
    after, events = act(state, 0, END)
    assert [e.type for e in events] == [
        "TurnEnded",
        "Collected",
        "CardRevealed",
        "CardRevealed",
        "TurnStarted",
    ]
    assert of_type(events, "Collected") == [
        {
            "seat": 1,
            "cards": [{"stack": 0, "card": "red-pair"}, {"stack": 2, "card": "yellow-run-3"}],
            "white_die": False,
        }
    ]
    revealed = of_type(events, "CardRevealed")
    assert [r["stack"] for r in revealed] == [0, 2]
    assert all(state.unseen >> CARD_NUMBERS[r["card"]] & 1 for r in revealed)
    assert after.won[1] == tuple(
        sorted(CARD_NUMBERS[c] for c in ["red-quad", "red-pair", "yellow-run-3"])
    )
    assert after.face_down == (1, 0, 0, 3)
    assert after.tops[1] == CARD_NUMBERS["blue-single-3"]
    # Seat 2's dice stay: it collects only at its own turn.
    assert after.claims == (None, Claim(2, (3,)), None, None)
    assert RULES.to_act(after) == {1}


def test_collect_with_nothing_on_the_table() -> None:
    state = position(TOPS, claims={1: (2, [3])})
    after, events = act(state, 0, END)
    assert of_type(events, "Collected") == [{"seat": 1, "cards": [], "white_die": False}]
    assert of_type(events, "CardRevealed") == []
    assert after.tops == state.tops
    assert of_type(events, "TurnStarted") == [{"seat": 1, "dice": 5}]


def test_collect_takes_the_white_die_from_the_spot() -> None:
    state = position(TOPS, white_spot=(1, [6, 5]))
    after, events = act(state, 0, END)
    assert of_type(events, "Collected")[0]["white_die"] is True
    assert (after.white_spot, after.white_holder, after.white_value) == (None, 1, None)
    rolled, events = act(after, 1, roll())
    (dice_rolled,) = of_type(events, "DiceRolled")
    assert len(dice_rolled["rolled"]) == 5
    assert dice_rolled["white"] in range(1, 7)
    assert rolled.white_value == dice_rolled["white"]


def test_bumped_dice_win_nothing_at_collect() -> None:
    state = position(TOPS, claims={0: (1, [2, 2])}, dice=[5, 5, 1], turn=2)
    state, _ = act(state, 2, claim(0, 5, 5))
    state, events = act(state, 2, END)
    assert of_type(events, "Collected") == [{"seat": 0, "cards": [], "white_die": False}]
    state, events = act(state, 0, roll())
    state, events = act(state, 0, END)
    assert of_type(events, "Collected")[0]["cards"] == []  # seat 1 was bumped
    state, _ = act(state, 1, roll())
    state, events = act(state, 1, END)
    assert of_type(events, "Collected")[0] == {
        "seat": 2,
        "cards": [{"stack": 0, "card": "red-pair"}],
        "white_die": False,
    }


# --- a turn, 2: roll -----------------------------------------------------------------------------


def test_a_turn_begins_with_rolling_every_die() -> None:
    state = position(TOPS, rolls=0)
    assert RULES.legal_moves(state, 0) == [roll()]
    for attempt in (claim(0, 4, 4), spot(3), END, {"type": "use_white_die", "die": 3}):
        assert broken_rule(state, 0, attempt) == "roll-first"
    assert broken_rule(state, 0, roll(3)) == "first-roll-all-dice"
    after, events = act(state, 0, roll())
    (rolled,) = of_type(events, "DiceRolled")
    assert (rolled["seat"], rolled["roll"], rolled["kept"], rolled["white"]) == (0, 1, [], None)
    assert len(rolled["rolled"]) == 5
    assert after.dice == tuple(rolled["rolled"])
    assert after.rolls == 1


def test_the_holder_rolls_the_white_die_too_and_may_not_keep_it_on_the_first_roll() -> None:
    state = position(TOPS, rolls=0, white_holder=0)
    assert RULES.legal_moves(state, 0) == [roll()]
    assert broken_rule(state, 0, roll(keep_white=True)) == "first-roll-all-dice"
    after, events = act(state, 0, roll())
    assert after.white_value == of_type(events, "DiceRolled")[0]["white"] in range(1, 7)


@pytest.mark.parametrize(
    ("dice", "keep", "rolled"),
    [([1, 2, 2, 5, 6], [2, 2, 5], 2), ([3, 3, 3, 3, 4], [], 5), ([1, 2, 3, 4, 5], [1, 2, 3, 4], 1)],
)
def test_a_re_roll_keeps_the_chosen_dice(dice: list[int], keep: list[int], rolled: int) -> None:
    state = position(TOPS, dice=dice)
    after, events = act(state, 0, roll(*keep))
    (event,) = of_type(events, "DiceRolled")
    assert (event["roll"], event["kept"], len(event["rolled"])) == (2, keep, rolled)
    assert after.dice == tuple(sorted(keep + event["rolled"]))


def test_a_kept_die_may_be_re_rolled_later() -> None:
    state = position(TOPS, dice=[6, 6, 1, 1, 2])
    state, _ = act(state, 0, roll(6, 6))
    kept_now = [die for die in state.dice if die != 6][:1]
    assert roll(*kept_now) in RULES.legal_moves(state, 0)
    after, events = act(state, 0, roll(*kept_now))
    assert len(of_type(events, "DiceRolled")[0]["rolled"]) == 4
    assert after.rolls == 3


def test_at_most_three_rolls() -> None:
    state = position(TOPS, dice=[1, 2, 3, 4, 6], rolls=3)
    assert moves_of(state, "roll") == []
    assert broken_rule(state, 0, roll(1, 2)) == "three-rolls"
    state = position(TOPS, dice=[1, 2, 3, 4, 6], rolls=2)
    assert moves_of(state, "roll")
    assert act(state, 0, roll(1, 2))[0].rolls == 3


def test_re_roll_choices_are_every_multiset_kept_but_all() -> None:
    state = position(TOPS, dice=[2, 2, 5])
    keeps = [m["keep"] for m in moves_of(state, "roll")]
    assert keeps == [[], [2], [2, 2], [2, 5], [5]]
    assert all(m["keep_white"] is False for m in moves_of(state, "roll"))
    assert broken_rule(state, 0, roll(2, 2, 5)) == "roll-some-dice"
    assert broken_rule(state, 0, roll(2, 2, 2)) == "dice-in-hand"
    assert broken_rule(state, 0, roll(keep_white=True)) == "white-die-held"


def test_the_white_die_may_be_kept_or_re_rolled() -> None:
    state = position(TOPS, dice=[2, 5], white_holder=0, white_value=4)
    choices = [(m["keep"], m["keep_white"]) for m in moves_of(state, "roll")]
    assert choices == [
        ([], False),
        ([], True),
        ([2], False),
        ([2], True),
        ([2, 5], False),
        ([5], False),
        ([5], True),
    ]
    after, events = act(state, 0, roll(2, 5))
    assert after.dice == (2, 5)
    assert of_type(events, "DiceRolled")[0]["rolled"] == []
    after, events = act(state, 0, roll(keep_white=True))
    assert after.white_value == 4
    assert broken_rule(state, 0, roll(2, 5, keep_white=True)) == "roll-some-dice"


def test_no_rolling_once_claiming_has_begun() -> None:
    state = position(TOPS, dice=[3, 4, 4, 5, 6])
    after, _ = act(state, 0, claim(1, 3))
    assert moves_of(after, "roll") == []
    assert broken_rule(after, 0, roll(4, 4)) == "roll-before-claiming"


@pytest.mark.parametrize(
    ("players", "dice"), [(2, [3, 4, 5, 5]), (3, [3, 4, 5, 5]), (5, [3, 4, 5, 5, 5, 5, 5])]
)
def test_first_round_rolls_three_then_four_dice(players: int, dice: list[int]) -> None:
    _, state = dealt(players, SEED, first_seat=players - 1)
    counts = []
    for turn in range(len(dice)):
        (seat,) = RULES.to_act(state)
        assert seat == (players - 1 + turn) % players
        state, events = act(state, seat, roll())
        counts.append(len(of_type(events, "DiceRolled")[0]["rolled"]))
        state, _ = act(state, seat, END)
    assert counts == dice


# --- a turn, 3: claim ----------------------------------------------------------------------------

FITS = [
    pytest.param("single-3", [[3], [3, 3], [3, 3, 3, 3, 3]], [[2], [3, 4], [1, 3]], id="single"),
    pytest.param("single-6", [[6], [6, 6, 6]], [[5], [1, 6]], id="single-6"),
    pytest.param("pair", [[1, 1], [6, 6]], [[1], [1, 2], [2, 2, 2]], id="pair"),
    pytest.param("triple", [[4, 4, 4]], [[4, 4], [4, 4, 4, 4], [3, 4, 4]], id="triple"),
    pytest.param("quad", [[2, 2, 2, 2]], [[2, 2, 2], [2, 2, 2, 2, 2], [1, 2, 2, 2]], id="quad"),
    pytest.param(
        "run-3", [[1, 2, 3], [4, 5, 6]], [[1, 2, 4], [1, 2], [1, 2, 3, 4], [2, 2, 3]], id="run-3"
    ),
    pytest.param("run-4", [[1, 2, 3, 4], [3, 4, 5, 6]], [[1, 2, 3, 5], [2, 3, 4]], id="run-4"),
    pytest.param(
        "run-5", [[1, 2, 3, 4, 5], [2, 3, 4, 5, 6]], [[1, 2, 3, 4, 6], [1, 3, 4, 5, 6]], id="run-5"
    ),
]


@pytest.mark.parametrize(("kind", "good", "bad"), FITS)
def test_each_kind_of_card_asks_for_its_pattern(
    kind: str, good: list[list[int]], bad: list[list[int]]
) -> None:
    for dice in good:
        state = position([f"blue-{kind}"], dice=dice)
        after, events = act(state, 0, claim(0, *dice))
        assert of_type(events, "CardClaimed") == [
            {"seat": 0, "stack": 0, "card": f"blue-{kind}", "dice": dice, "bumped": None}
        ]
        assert after.claims[0] == Claim(0, tuple(dice))
    for dice in bad:
        state = position([f"blue-{kind}"], dice=dice)
        assert claim(0, *dice) not in RULES.legal_moves(state, 0)
        assert broken_rule(state, 0, claim(0, *dice)) == "card-pattern"


def test_legal_claims_list_every_pattern_the_dice_show() -> None:
    tops = ["red-single-3", "red-pair", "red-triple", "red-quad", "red-run-3", "red-run-4"]
    tops += ["red-run-5", "red-single-6"]
    state = position(tops, dice=[2, 3, 3, 3, 4])
    assert [(m["stack"], m["dice"]) for m in moves_of(state, "claim")] == [
        (0, [3]),
        (0, [3, 3]),
        (0, [3, 3, 3]),
        (1, [3, 3]),
        (2, [3, 3, 3]),
        (4, [2, 3, 4]),
    ]


def test_dice_not_placed_stay_with_the_player_and_each_die_is_used_once() -> None:
    state = position(["red-pair", "blue-pair", "red-run-3"], dice=[2, 2, 3, 4, 6])
    after, _ = act(state, 0, claim(0, 2, 2))
    assert after.dice == (3, 4, 6)
    assert moves_of(after, "claim") == []
    assert broken_rule(after, 0, claim(1, 2, 2)) == "dice-in-hand"
    assert broken_rule(after, 0, claim(2, 2, 3, 4)) == "dice-in-hand"
    assert after.claiming
    assert RULES.view(after, 1)["dice"] == [3, 4, 6]


def test_no_dice_on_a_card_one_already_occupies() -> None:
    state = position(["red-single-4"], dice=[4, 4, 4, 1, 1])
    after, _ = act(state, 0, claim(0, 4))
    assert moves_of(after, "claim") == []
    assert broken_rule(after, 0, claim(0, 4, 4)) == "own-card"


@pytest.mark.parametrize(
    ("card", "held", "bumps", "fails"),
    [
        pytest.param("single-5", [5, 5], [[5, 5, 5]], [[5], [5, 5]], id="single-more-dice"),
        pytest.param("single-2", [2], [[2, 2], [2, 2, 2]], [[2]], id="single-one-die"),
        pytest.param("pair", [3, 3], [[4, 4], [6, 6]], [[3, 3], [1, 1], [2, 2]], id="pair"),
        pytest.param("triple", [5, 5, 5], [[6, 6, 6]], [[5, 5, 5], [4, 4, 4]], id="triple"),
        pytest.param("quad", [1, 1, 1, 1], [[2, 2, 2, 2]], [[1, 1, 1, 1]], id="quad"),
        pytest.param(
            "run-3", [2, 3, 4], [[3, 4, 5], [4, 5, 6]], [[2, 3, 4], [1, 2, 3]], id="run-3"
        ),
        pytest.param(
            "run-4", [2, 3, 4, 5], [[3, 4, 5, 6]], [[2, 3, 4, 5], [1, 2, 3, 4]], id="run-4"
        ),
        pytest.param("run-5", [1, 2, 3, 4, 5], [[2, 3, 4, 5, 6]], [[1, 2, 3, 4, 5]], id="run-5"),
    ],
)
def test_bumping_needs_a_better_claim(
    card: str, held: list[int], bumps: list[list[int]], fails: list[list[int]]
) -> None:
    for dice in bumps:
        state = position([f"yellow-{card}"], claims={0: (2, held)}, dice=dice)
        assert claim(0, *dice) in RULES.legal_moves(state, 0)
        after, events = act(state, 0, claim(0, *dice))
        (claimed,) = of_type(events, "CardClaimed")
        assert claimed["bumped"] == {"seat": 2, "dice": held}
        assert after.claims[0] == Claim(0, tuple(dice))
    for dice in fails:
        state = position([f"yellow-{card}"], claims={0: (2, held)}, dice=dice)
        assert moves_of(state, "claim") == []
        assert broken_rule(state, 0, claim(0, *dice)) == "bump-higher"


def test_a_single_card_is_bumped_by_more_dice_not_higher_ones() -> None:
    # Dice on a single card all show its number, so only their count can differ.
    state = position(
        ["red-single-6", "blue-single-1"],
        claims={0: (1, [6, 6]), 1: (1, [1])},
        dice=[1, 1, 6, 6, 6],
    )
    assert [(m["stack"], m["dice"]) for m in moves_of(state, "claim")] == [
        (0, [6, 6, 6]),
        (1, [1, 1]),
    ]


def test_bumped_dice_go_back_at_once_and_the_bumper_may_be_bumped_back() -> None:
    state = position(["black-pair"], claims={0: (1, [2, 2])}, dice=[5, 5, 1, 1, 2], turn=0)
    state, _ = act(state, 0, claim(0, 5, 5))
    assert state.claims[0] == Claim(0, (5, 5))
    assert RULES.view(state, None)["stacks"][0]["claim"] == {"seat": 0, "dice": [5, 5]}
    state = replace(state, turn=1, dice=(6, 6, 1, 2, 3), claiming=False)
    state, events = act(state, 1, claim(0, 6, 6))
    assert of_type(events, "CardClaimed")[0]["bumped"] == {"seat": 0, "dice": [5, 5]}


# --- the white-die spot --------------------------------------------------------------------------


def test_the_white_die_spot_takes_any_dice_and_counts_their_sum() -> None:
    state = position(["red-pair"], dice=[1, 3, 6])
    sums = [m["dice"] for m in moves_of(state, "claim_white_spot")]
    assert sums == [[1], [1, 3], [1, 3, 6], [1, 6], [3], [3, 6], [6]]
    after, events = act(state, 0, spot(1, 6))
    assert of_type(events, "WhiteSpotClaimed") == [{"seat": 0, "dice": [1, 6], "bumped": None}]
    assert after.white_spot == Claim(0, (1, 6))
    assert after.dice == (3,)
    assert moves_of(after, "claim_white_spot") == []
    assert broken_rule(after, 0, spot(3)) == "own-card"


def test_bumping_on_the_white_die_spot_needs_a_higher_sum() -> None:
    state = position(["red-pair"], dice=[1, 2, 4, 5], white_spot=(2, [3, 4]))
    offered = [m["dice"] for m in moves_of(state, "claim_white_spot")]
    assert all(sum(dice) > 7 for dice in offered)
    assert [1, 2, 5] in offered
    assert [4, 5] in offered
    assert [2, 5] not in offered  # 7 = 7 does not bump
    assert broken_rule(state, 0, spot(2, 5)) == "bump-higher"
    assert broken_rule(state, 0, spot(1, 5)) == "bump-higher"
    after, events = act(state, 0, spot(1, 2, 5))
    assert of_type(events, "WhiteSpotClaimed")[0]["bumped"] == {"seat": 2, "dice": [3, 4]}
    assert after.white_spot == Claim(0, (1, 2, 5))


def test_the_spot_cannot_be_claimed_while_someone_holds_the_white_die() -> None:
    for holder in (0, 1):
        state = position(
            ["red-pair"], dice=[6, 6], white_holder=holder, white_value=3 if holder == 0 else None
        )
        assert moves_of(state, "claim_white_spot") == []
        assert broken_rule(state, 0, spot(6)) == "white-die-held"


# --- the white die -------------------------------------------------------------------------------


def test_the_white_die_replaces_one_die_and_goes_back() -> None:
    state = position(["red-run-5"], dice=[1, 2, 3, 4, 4], white_holder=0, white_value=5)
    assert moves_of(state, "use_white_die") == [
        {"type": "use_white_die", "die": die} for die in (1, 2, 3, 4)
    ]
    assert moves_of(state, "claim") == []
    after, events = act(state, 0, {"type": "use_white_die", "die": 4})
    assert of_type(events, "WhiteDieUsed") == [{"seat": 0, "replaced": 4, "value": 5}]
    assert after.dice == (1, 2, 3, 4, 5)
    assert (after.white_holder, after.white_value) == (None, None)
    assert moves_of(after, "claim") == [claim(0, 1, 2, 3, 4, 5)]
    assert moves_of(after, "roll") == []
    assert moves_of(after, "use_white_die") == []
    # Back beside the stacks, the white die may be claimed again, even by the seat that used it.
    assert moves_of(after, "claim_white_spot")


def test_the_white_die_is_never_placed() -> None:
    state = position(["red-single-5"], dice=[1, 2], white_holder=0, white_value=5)
    assert moves_of(state, "claim") == []
    assert broken_rule(state, 0, claim(0, 5)) == "dice-in-hand"


def test_using_the_white_die_must_change_a_die() -> None:
    state = position(["red-pair"], dice=[2, 5], white_holder=0, white_value=5)
    assert broken_rule(state, 0, {"type": "use_white_die", "die": 5}) == "white-die-changes"
    assert broken_rule(state, 0, {"type": "use_white_die", "die": 3}) == "dice-in-hand"
    other = position(["red-pair"], dice=[2, 5], white_holder=1)
    assert moves_of(other, "use_white_die") == []
    assert broken_rule(other, 0, {"type": "use_white_die", "die": 2}) == "white-die-held"


def test_an_unused_white_die_stays_with_its_holder() -> None:
    state = position(TOPS, dice=[1, 2], white_holder=1, turn=1, white_value=6)
    after, _ = act(state, 1, END)
    assert after.white_holder == 1
    assert after.white_value is None
    assert RULES.view(after, None)["white_die"] == {"holder": 1, "value": None}


# --- the joker -----------------------------------------------------------------------------------


def test_five_of_a_kind_takes_the_joker_into_a_chosen_colour() -> None:
    state = position(["red-quad"], dice=[4, 4, 4, 4, 4], won=[["red-pair"], [], []])
    jokers = moves_of(state, "claim_joker")
    assert jokers == [
        {"type": "claim_joker", "dice": [4, 4, 4, 4, 4], "colour": colour} for colour in COLOURS
    ]
    after, events = act(state, 0, jokers[0])
    assert of_type(events, "JokerTaken") == [{"seat": 0, "dice": [4] * 5, "colour": "red"}]
    assert (after.joker_holder, after.joker_colour) == (0, 0)
    assert after.dice == ()
    assert after.colour_counts(0) == [2, 0, 0, 0]
    assert RULES.view(after, 1)["joker"] == {"holder": 0, "colour": "red"}
    assert RULES.view(after, 1)["scores"] == [2 + 15 + 3, 0, 0]


def test_the_joker_cannot_be_taken_twice_or_bumped() -> None:
    state = position(["red-quad"], dice=[4, 4, 4, 4, 4], joker=(1, "blue"), turn=0)
    assert moves_of(state, "claim_joker") == []
    attempt = {"type": "claim_joker", "dice": [4] * 5, "colour": "red"}
    assert broken_rule(state, 0, attempt) == "joker-taken"


@pytest.mark.parametrize("dice", [[4, 4, 4, 4, 5], [4, 4, 4, 4]])
def test_the_joker_needs_five_of_a_kind(dice: list[int]) -> None:
    state = position(["red-quad"], dice=dice)
    assert moves_of(state, "claim_joker") == []
    attempt = {"type": "claim_joker", "dice": dice, "colour": "red"}
    assert broken_rule(state, 0, attempt) == "joker-five-of-a-kind"


def test_the_joker_goes_only_to_a_colour_with_fewer_than_12_cards() -> None:
    reds = [f"red-{kind}" for kind in [f"single-{n}" for n in range(1, 7)]]
    reds += ["red-pair", "red-triple", "red-quad", "red-run-3", "red-run-4", "red-run-5"]
    state = position(["blue-pair"], dice=[2] * 5, won=[reds, [], []])
    assert [m["colour"] for m in moves_of(state, "claim_joker")] == ["yellow", "blue", "black"]
    attempt = {"type": "claim_joker", "dice": [2] * 5, "colour": "red"}
    assert broken_rule(state, 0, attempt) == "joker-colour"


def test_the_white_die_can_complete_five_of_a_kind() -> None:
    state = position(["red-quad"], dice=[3, 3, 3, 3, 6], white_holder=0, white_value=3)
    state, _ = act(state, 0, {"type": "use_white_die", "die": 6})
    assert len(moves_of(state, "claim_joker")) == 4


# --- a turn, 4: end ------------------------------------------------------------------------------


def test_ending_the_turn_passes_to_the_left_neighbour() -> None:
    state = position(TOPS, players=4, turn=3, dice=[1, 2, 3])
    assert RULES.legal_moves(state, 3)[-1] == END
    after, events = act(state, 3, END)
    assert of_type(events, "TurnEnded") == [{"seat": 3}]
    assert of_type(events, "TurnStarted") == [{"seat": 0, "dice": 5}]
    assert (after.rolls, after.dice, after.claiming, after.turns) == (0, (), False, 11)


# --- end and scoring -----------------------------------------------------------------------------


def test_the_game_ends_when_a_stack_is_taken_empty() -> None:
    state = position(
        ["red-pair", "blue-run-3", "yellow-single-2", "black-quad"],
        face_down=[0, 2, 2, 2],
        claims={0: (1, [3, 3]), 1: (2, [4, 5, 6]), 2: (0, [2])},
        won=[["red-triple"], [], ["blue-pair"]],
        white_spot=(2, [5, 6]),
    )
    after, events = act(state, 0, END)
    assert [e.type for e in events] == [
        "TurnEnded",
        "Collected",
        "Collected",
        "Collected",
        "WhiteDieRolled",
        "GameEnded",
    ]
    assert [c["seat"] for c in of_type(events, "Collected")] == [1, 2, 0]
    assert of_type(events, "Collected")[1] == {
        "seat": 2,
        "cards": [{"stack": 1, "card": "blue-run-3"}],
        "white_die": True,
    }
    (white,) = of_type(events, "WhiteDieRolled")
    assert white["seat"] == 2
    assert of_type(events, "GameEnded") == [{"empty_stacks": [0]}]
    assert RULES.to_act(after) == frozenset()
    assert all(RULES.legal_moves(after, seat) == [] for seat in range(3))
    assert broken_rule(after, 1, roll()) == "turn-order"
    result = finished(after)
    # seat 0: red triple 4 + yellow single 1, no set; seat 1: red pair 2;
    # seat 2: blue pair 2 + blue run-3 2, a set of two blues 3, the white die.
    assert result.details["parts"] == [
        {"cards": 5, "joker": 0, "sets": 0, "white_die": 0},
        {"cards": 2, "joker": 0, "sets": 0, "white_die": 0},
        {"cards": 4, "joker": 0, "sets": 3, "white_die": white["value"]},
    ]
    assert result.scores == (5, 2, 7 + white["value"])
    assert result.winners == (2,)
    assert RULES.view(after, None)["white_die"] == {"holder": 2, "value": white["value"]}


def test_the_end_is_checked_after_the_next_card_is_turned_up() -> None:
    state = position(["red-pair", "blue-run-3"], face_down=[1, 0], claims={0: (1, [3, 3])})
    after, events = act(state, 0, END)
    assert "GameEnded" not in [e.type for e in events]
    assert after.tops[0] is not None
    assert after.face_down[0] == 0
    assert RULES.to_act(after) == {1}


def test_the_game_goes_on_while_the_stacks_are_full() -> None:
    state = position(["red-pair"], face_down=[0], claims={0: (2, [3, 3])})
    after, events = act(state, 0, END)
    assert of_type(events, "TurnStarted") == [{"seat": 1, "dice": 5}]
    assert RULES.result(after) is None


@pytest.mark.parametrize(("already_empty", "ends"), [(0, False), (1, True)])
def test_with_five_players_the_second_empty_stack_ends_the_game(
    already_empty: int, ends: bool
) -> None:
    tops: list[str | None] = ["red-pair", "blue-pair", "yellow-pair"]
    face_down = [0, 1, 1]
    if already_empty:
        tops[2], face_down[2] = None, 0
    state = position(tops, players=5, face_down=face_down, claims={0: (1, [2, 2])})
    after, events = act(state, 0, END)
    assert after.tops[0] is None
    assert ("GameEnded" in [e.type for e in events]) is ends
    assert (RULES.result(after) is not None) is ends
    if not ends:
        assert RULES.to_act(after) == {1}
        assert broken_rule(after, 1, claim(0, 2, 2)) == "roll-first"
        after, _ = act(after, 1, roll())
        assert after.tops[0] is None
        assert all(m.get("stack") != 0 for m in moves_of(after, "claim", 1))
        assert broken_rule(after, 1, claim(0, *after.dice[:2])) == "stack-empty"


def test_two_stacks_emptied_at_once_with_five_players() -> None:
    state = position(
        ["red-pair", "blue-pair", "yellow-pair"],
        players=5,
        face_down=[0, 0, 1],
        claims={0: (1, [2, 2]), 1: (1, [3, 3])},
    )
    _, events = act(state, 0, END)
    assert of_type(events, "GameEnded") == [{"empty_stacks": [0, 1]}]


SET_BONUS = {
    0: 0,
    1: 0,
    2: 3,
    3: 6,
    4: 10,
    5: 15,
    6: 21,
    7: 28,
    8: 36,
    9: 45,
    10: 55,
    11: 66,
    12: 78,
}
"""The table of rollnbump.md (and the seed's Wertung): cards of one colour -> set bonus."""


@pytest.mark.parametrize(("cards", "bonus"), SET_BONUS.items())
def test_set_bonus_table(cards: int, bonus: int) -> None:
    reds = [card for card in CARD_IDS if card.startswith("red-")][:cards]
    assert finished(game_over([reds, []])).details["parts"][0]["sets"] == bonus


def test_set_bonus_per_colour_with_the_joker() -> None:
    won = [["red-single-1", "red-pair", "red-triple", "blue-quad"], ["yellow-run-5"]]
    result = finished(game_over(won, joker=(0, "blue")))
    # Cards 1 + 2 + 4 + 8 = 15, joker 15, three reds 6, blue quad and joker 3.
    assert result.details["parts"][0] == {"cards": 15, "joker": 15, "sets": 9, "white_die": 0}
    assert result.scores == (39, 6)


def test_the_white_die_holder_scores_its_roll() -> None:
    result = finished(game_over([["red-pair"], ["blue-pair"]], white=(1, 4)))
    assert result.scores == (2, 6)
    assert result.details["parts"][1]["white_die"] == 4
    assert result.winners == (1,)


def test_the_white_die_counts_in_the_scores_only_once_the_game_is_over() -> None:
    """Held mid-game, the white die's roll may still change: the view's scores leave it out."""
    state = replace(
        RULES.initial_state(2, {}), turn=0, rolls=1, dice=(1, 2), white_holder=0, white_value=6
    )
    assert RULES.view(state, 1)["scores"] == [0, 0]
    assert tuple(RULES.scores(state)) == (0, 0)


@pytest.mark.parametrize(
    ("won", "white", "winners"),
    [
        pytest.param([["red-pair"], ["blue-run-3"], []], None, (0, 1), id="two-share"),
        pytest.param([[], [], []], None, (0, 1, 2), id="nobody-scores"),
        pytest.param([["red-quad"], ["blue-run-5"], []], (1, 2), (0, 1), id="white-die-ties"),
    ],
)
def test_ties_are_shared_wins(
    won: list[list[str]], white: tuple[int, int] | None, winners: tuple[int, ...]
) -> None:
    assert finished(game_over(won, white=white)).winners == winners


def test_no_result_while_running() -> None:
    assert RULES.result(position(TOPS)) is None
    assert RULES.result(dealt(3, SEED)[1]) is None
    assert RULES.result(RULES.initial_state(2, RULES.info.resolve_options(2, {}))) is None


# --- move format and turn order ------------------------------------------------------------------


@pytest.mark.parametrize(
    "attempt",
    [
        pytest.param(None, id="null"),
        pytest.param("roll", id="string"),
        pytest.param([roll()], id="list"),
        pytest.param({}, id="empty"),
        pytest.param({"type": "bump"}, id="unknown-type"),
        pytest.param({"type": ["roll"], "keep": [], "keep_white": False}, id="type-list"),
        pytest.param({"type": {"roll": 1}}, id="type-object"),
        pytest.param({"type": "ROLL", "keep": [], "keep_white": False}, id="type-case"),
        pytest.param({"type": "roll", "keep": []}, id="roll-without-keep-white"),
        pytest.param({**roll(), "extra": 1}, id="extra-field"),
        pytest.param(roll(2, 1), id="keep-unsorted"),
        pytest.param(roll(0), id="keep-zero"),
        pytest.param(roll(7), id="keep-seven"),
        pytest.param({"type": "roll", "keep": [True], "keep_white": False}, id="keep-bool"),
        pytest.param({"type": "roll", "keep": [2.0], "keep_white": False}, id="keep-float"),
        pytest.param({"type": "roll", "keep": "2", "keep_white": False}, id="keep-string"),
        pytest.param({"type": "roll", "keep": [], "keep_white": 0}, id="keep-white-int"),
        pytest.param(claim(0), id="claim-no-dice"),
        pytest.param(claim(0, 4, 3), id="claim-unsorted"),
        pytest.param({"type": "claim", "stack": "0", "dice": [3]}, id="stack-string"),
        pytest.param({"type": "claim", "stack": True, "dice": [3]}, id="stack-bool"),
        pytest.param({"type": "claim", "stack": -1, "dice": [3]}, id="stack-negative"),
        pytest.param({"type": "claim", "dice": [3]}, id="claim-without-stack"),
        pytest.param(spot(), id="spot-no-dice"),
        pytest.param({"type": "claim_white_spot", "dice": [3], "stack": 0}, id="spot-with-stack"),
        pytest.param({"type": "claim_joker", "dice": [3] * 5, "colour": "green"}, id="colour"),
        pytest.param({"type": "claim_joker", "dice": [3] * 5}, id="joker-without-colour"),
        pytest.param({"type": "use_white_die", "die": 0}, id="die-zero"),
        pytest.param({"type": "use_white_die", "die": None}, id="die-null"),
        pytest.param({"type": "end_turn", "now": True}, id="end-extra"),
    ],
)
def test_move_format(attempt: object) -> None:
    state = position(TOPS, dice=[1, 2, 3, 3, 4], white_holder=0, white_value=3)
    assert broken_rule(state, 0, attempt) == "move-format"


def test_only_the_seat_to_move_may_move() -> None:
    state = position(TOPS, dice=[3, 3], turn=1)
    assert RULES.to_act(state) == {1}
    assert RULES.legal_moves(state, 0) == []
    assert broken_rule(state, 0, END) == "turn-order"
    assert broken_rule(state, 2, claim(0, 3, 3)) == "turn-order"


def test_claims_need_the_dice_and_a_stack() -> None:
    state = position(TOPS, dice=[1, 2, 3])
    assert broken_rule(state, 0, claim(0, 4, 4)) == "dice-in-hand"
    assert broken_rule(state, 0, claim(4, 3)) == "no-such-stack"
    assert broken_rule(state, 0, spot(6)) == "dice-in-hand"


def test_every_legal_move_is_accepted_and_nothing_is_mutated() -> None:
    state = position(
        TOPS,
        dice=[3, 3, 3, 4, 5],
        claims={0: (1, [2, 2]), 3: (2, [1, 1, 1])},
        white_spot=(1, [6]),
        rolls=2,
    )
    before = copy.deepcopy(state)
    moves = RULES.legal_moves(state, 0)
    kinds = {m["type"] for m in moves}
    assert kinds == {"roll", "claim", "claim_white_spot", "end_turn"}
    for legal in moves:
        RULES.decide(state, 0, legal, Random(SEED))
    assert state == before
    assert moves == RULES.legal_moves(state, 0)


# --- what a seat sees ----------------------------------------------------------------------------


def test_view_shows_the_table() -> None:
    state = position(
        ["red-pair", None],
        players=2,
        face_down=[2, 0],
        claims={0: (1, [4, 4])},
        won=[["blue-quad"], []],
        dice=[1, 6],
        white_spot=(0, [5]),
        joker=(1, "yellow"),
        claiming=True,
        rolls=2,
    )
    expected = {
        "stacks": [
            {"card": "red-pair", "face_down": 2, "claim": {"seat": 1, "dice": [4, 4]}},
            {"card": None, "face_down": 0, "claim": None},
        ],
        "white_spot": {"seat": 0, "dice": [5]},
        "white_die": {"holder": None, "value": None},
        "joker": {"holder": 1, "colour": "yellow"},
        "won": [["blue-quad"], []],
        "scores": [8, 15],
        "turn": 0,
        "dice_count": 5,
        "dice": [1, 6],
        "rolls": 2,
        "step": "claim",
        "unseen_cards": 46,
    }
    for seat in (0, 1, None):
        assert RULES.view(state, seat) == expected


def test_events_are_public_and_conceal_has_nothing_to_redraw() -> None:
    events, state = dealt(3, SEED)
    rng = Random(SEED)
    while RULES.to_act(state):
        (seat,) = RULES.to_act(state)
        new = RULES.decide(state, seat, rng.choice(RULES.legal_moves(state, seat)), rng)
        events += new
        state = fold(state, new)
        assert RULES.conceal(state, seat, Random(1)) == state
    assert all(RULES.redact(e, seat) == e for e in events for seat in (0, 1, 2, None))
    # The deal shows the face-up cards and how many lie under each, never their order.
    assert set(of_type(events, "StacksDealt")[0]) == {"tops", "face_down"}


# --- property: the legal claims are exactly the rules' claims -----------------------------------


def rules_fit(kind: str, dice: tuple[int, ...]) -> bool:
    """The card requirements of rollnbump.md, written independently of the engine."""
    if kind.startswith("single-"):
        return len(dice) >= 1 and set(dice) == {int(kind[-1])}
    if kind.startswith("run-"):
        return (
            len(dice) == int(kind[-1])
            and len(set(dice)) == len(dice)
            and (max(dice) - min(dice) == len(dice) - 1)
        )
    size = {"pair": 2, "triple": 3, "quad": 4}[kind]
    return len(dice) == size and len(set(dice)) == 1


KIND_NAMES = [card.split("-", 1)[1] for card in CARD_IDS[:12]]


@settings(max_examples=300, deadline=None)
@given(
    dice=st.lists(st.integers(1, 6), max_size=5),
    kind=st.sampled_from(KIND_NAMES),
    held=st.one_of(st.none(), st.lists(st.integers(1, 6), min_size=1, max_size=5)),
)
def test_legal_claims_are_exactly_the_fitting_better_ones(
    dice: list[int], kind: str, held: list[int] | None
) -> None:
    claims = {} if held is None else {0: (1, sorted(held))}
    state = position([f"red-{kind}"], dice=dice, claims=claims)
    subsets = {
        tuple(sorted(dice[i] for i in range(len(dice)) if mask >> i & 1))
        for mask in range(1, 1 << len(dice))
    }

    def worth(claimed: Sequence[int]) -> int:
        return len(claimed) if kind.startswith("single-") else sum(claimed)

    expected = sorted(
        subset
        for subset in subsets
        if rules_fit(kind, subset) and (held is None or worth(subset) > worth(held))
    )
    offered = [tuple(m["dice"]) for m in moves_of(state, "claim")]
    assert offered == expected
    for subset in subsets - set(expected):
        assert broken_rule(state, 0, claim(0, *subset)) in {"card-pattern", "bump-higher"}


# --- sampling a state from a view, evaluating a position -----------------------------------------


def sampled(state: State, seat: int = 0) -> State:
    options = RULES.info.resolve_options(state.players, {})
    return RULES.sample(state.players, options, RULES.view(state, seat), seat, Random(SEED))


def test_a_sample_is_the_table_the_view_shows() -> None:
    state = position(
        ["red-pair", "blue-run-4", None],
        face_down=[2, 1, 0],
        claims={0: (1, [4, 4]), 1: (2, [2, 3, 4, 5])},
        won=[["black-quad"], [], ["yellow-single-3", "red-run-5"]],
        dice=[1, 6],
        white_spot=(0, [5]),
        joker=(2, "yellow"),
        claiming=True,
        rolls=2,
    )
    # Nothing in the state is hidden; only the turn count past the first round is not shown.
    assert sampled(state, 1) == replace(state, turns=3)


def test_a_sample_leaves_unseen_exactly_the_cards_never_turned_up() -> None:
    tops = [f"{colour}-single-{number}" for colour in COLOURS[:3] for number in (1, 2, 3)]
    won = [["red-quad"], [], ["blue-pair", "blue-triple"], []]
    state = position(tops, players=4, won=won)
    unseen = sampled(state, 3).unseen
    assert unseen.bit_count() == RULES.view(state, 3)["unseen_cards"] == 48 - 9 - 3
    shown = [*tops, *(card for cards in won for card in cards)]
    assert not any(unseen >> CARD_NUMBERS[card] & 1 for card in shown)


@pytest.mark.parametrize(("turns", "dice_count"), [(1, 3), (2, 4), (7, 5)])
def test_a_sample_plays_on_as_the_real_game(turns: int, dice_count: int) -> None:
    state = position(
        ["red-pair", "blue-run-3"],
        players=2,
        dice=[3, 3, 5][:dice_count],
        turns=turns,
        dice_count=dice_count,
    )
    # The next turn's dice (fewer in the first round) come out the same from the sample.
    after, _ = act(state, 0, claim(0, 3, 3))
    sampled_after, _ = act(sampled(state), 0, claim(0, 3, 3))
    after, _ = act(after, 0, END)
    sampled_after, _ = act(sampled_after, 0, END)
    assert RULES.view(sampled_after, 1) == RULES.view(after, 1)
    assert RULES.legal_moves(sampled_after, 1) == RULES.legal_moves(after, 1)


def test_evaluation_is_the_result_once_over() -> None:
    state = game_over([["red-pair"], ["red-quad"], ["blue-quad"]])
    assert RULES.evaluate(state) == (0.0, 0.5, 0.5)


def test_the_leader_gets_the_largest_share_and_more_near_the_end() -> None:
    won = [["red-quad", "red-triple"], ["blue-pair"]]
    early = position(["red-pair", "blue-run-3"], players=2, face_down=[5, 5], won=won)
    late = replace(early, face_down=(5, 0))
    early_shares, late_shares = RULES.evaluate(early), RULES.evaluate(late)
    assert early_shares[0] > early_shares[1]
    assert late_shares[0] > early_shares[0]
    assert sum(late_shares) == pytest.approx(1)


def test_equal_scores_share_evenly() -> None:
    state = position(["red-pair"], won=[["red-pair"], ["blue-pair"], ["black-pair"]])
    assert RULES.evaluate(state) == pytest.approx((1 / 3,) * 3)


def test_cards_under_ones_dice_and_the_white_die_count_for_something() -> None:
    even = position(["red-quad", "blue-pair"], turn=2)
    claimed = replace(even, claims=(Claim(0, (2, 2, 2, 2)), None))
    holding = replace(even, white_holder=1)
    assert RULES.evaluate(claimed)[0] > 1 / 3
    assert RULES.evaluate(holding)[1] > 1 / 3
    # Placed by the seat to move, a claim must outlast both opponents' turns, not one.
    assert RULES.evaluate(replace(claimed, turn=0))[0] < RULES.evaluate(claimed)[0]
