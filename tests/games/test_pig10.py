"""Pig 10 rule tests: hand-built positions pinned against `docs/rules/pig10.md`.

Every test talks to the engine through the `RULES` contract only; events are folded with
`RULES.evolve`, randomness comes from seeded `random.Random` instances.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import partial, reduce
from random import Random
from typing import Any

import pytest

from domain.games.pig10 import RULES, PileCard, State
from domain.rules import Event
from tests.games.refusals import refused_rule

SEED = 1010
DECK = {0: 7, 1: 8, 2: 8, 3: 8, 4: 8, 5: 5, 6: 8, 7: 8, 8: 8, 9: 8, 10: 4}
"""The deck as pig10.md lists it: value -> number of cards (80 in all)."""


# --- helpers -------------------------------------------------------------------------------------


def counts(cards: Iterable[int]) -> tuple[int, ...]:
    """The multiset `cards` as a count per value 0..10 (the engine's draw-pile form)."""
    result = [0] * 11
    for card in cards:
        result[card] += 1
    return tuple(result)


def position(
    *hands: Sequence[int],
    turn: int | None = 0,
    pile: Sequence[tuple[int, int]] = (),
    value: int = 0,
    draw: Sequence[int] = (),
    won: Sequence[int] | None = None,
) -> State:
    """A running game: `pile` lists (seat, card) from bottom to top, `draw` the draw pile."""
    return State(
        hands=tuple(tuple(sorted(hand)) for hand in hands),
        draw_pile=counts(draw),
        pile=tuple(PileCard(seat, card) for seat, card in pile),
        pile_value=value,
        won=tuple(won) if won is not None else (0,) * len(hands),
        turn=turn,
        started=True,
    )


def fold(state: State, events: Iterable[Event]) -> State:
    return reduce(RULES.evolve, events, state)


def move(card: object, mode: object = "add") -> dict[str, Any]:
    return {"card": card, "mode": mode}


def play(state: State, seat: int, card: int, mode: str = "add") -> tuple[State, list[Event]]:
    """Decide the move and fold its events; returns the new state and the events."""
    events = RULES.decide(state, seat, move(card, mode), Random(SEED))
    return fold(state, events), events


broken_rule = partial(refused_rule, RULES, SEED)


def modes(state: State, card: int) -> list[str]:
    """The modes `legal_moves` offers the seat to move for `card`."""
    assert state.turn is not None
    return [m["mode"] for m in RULES.legal_moves(state, state.turn) if m["card"] == card]


def of_type(events: Iterable[Event], kind: str) -> list[dict[str, Any]]:
    return [dict(event.data) for event in events if event.type == kind]


def announced(events: Iterable[Event]) -> int:
    (played,) = of_type(events, "CardPlayed")
    value: int = played["value"]
    return value


def pile_won(events: Iterable[Event]) -> dict[str, Any] | None:
    won = of_type(events, "PileWon")
    assert len(won) <= 1
    return won[0] if won else None


def dealt(players: int, seed: int, first_seat: int | None = None) -> tuple[list[Event], State]:
    options = RULES.info.resolve_options(players, {"first_seat": first_seat})
    events = RULES.setup(players, options, Random(seed))
    return events, fold(RULES.initial_state(players, options), events)


# --- the worked examples of pig10.md -------------------------------------------------------------

# Each step is (card, mode, announced value); seats move 0, 1, 2, 3, 0, ... in turn.
WORKED_EXAMPLES = [
    pytest.param(
        [(4, "add", 4), (3, "add", 7), (2, "add", 9), (6, "add", 15)],
        {"seat": 2, "cards": [4, 3, 2, 6], "reason": "bust"},
        (0, 0, 4, 0),
        id="4-3-2-6-bust-to-the-2",
    ),
    pytest.param(
        [(5, "add", 5), (1, "add", 6), (5, "subtract", 1)],
        None,
        (0, 0, 0, 0),
        id="pigmaid-subtracts",
    ),
    pytest.param(
        [(3, "add", 3), (4, "add", 7), (4, "set", 4), (4, "add", 8), (8, "set", 8)],
        None,
        (0, 0, 0, 0),
        id="same-card-same-number",
    ),
]


@pytest.mark.parametrize(("steps", "winning", "won"), WORKED_EXAMPLES)
def test_worked_example(
    steps: list[tuple[int, str, int]], winning: dict[str, Any] | None, won: tuple[int, ...]
) -> None:
    hands: list[list[int]] = [[], [], [], []]
    for index, (card, _, _) in enumerate(steps):
        hands[index % 4].append(card)
    state = position(*(hand + [9] * (3 - len(hand)) for hand in hands), draw=[9] * 20)
    events: list[Event] = []
    for index, (card, mode, expected) in enumerate(steps):
        state, events = play(state, index % 4, card, mode)
        assert announced(events) == expected
        if expected < 10:
            assert state.pile_value == expected
            assert pile_won(events) is None
    assert pile_won(events) == winning
    assert state.won == won
    assert len(state.pile) == (0 if winning else len(steps))


# --- frog ----------------------------------------------------------------------------------------

FROG_POSITIONS = [
    pytest.param([], 0, id="empty-pile"),
    pytest.param([(1, 9)], 9, id="on-9"),
    pytest.param([(1, 3), (2, 4)], 7, id="on-7"),
    pytest.param([(1, 4), (2, 0)], 0, id="on-frog"),
]


@pytest.mark.parametrize(("pile", "value"), FROG_POSITIONS)
def test_frog_only_sets_to_zero(pile: list[tuple[int, int]], value: int) -> None:
    state = position([0, 6, 9], [1], [2], pile=pile, value=value, draw=[3])
    assert modes(state, 0) == ["set"]
    after, events = play(state, 0, 0, "set")
    assert announced(events) == 0
    assert after.pile_value == 0
    assert after.pile[-1] == PileCard(0, 0)


@pytest.mark.parametrize(("pile", "value"), FROG_POSITIONS)
@pytest.mark.parametrize("mode", ["add", "subtract"])
def test_frog_rejects_other_modes(pile: list[tuple[int, int]], value: int, mode: str) -> None:
    state = position([0, 6, 9], [1], [2], pile=pile, value=value, draw=[3])
    assert broken_rule(state, 0, move(0, mode)) == "frog"


# --- pigmaid -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pile", "value", "offered"),
    [
        pytest.param([], 0, ["add"], id="empty-pile"),
        pytest.param([(1, 4), (2, 0)], 0, ["add"], id="after-frog"),
        pytest.param([(1, 1), (2, 3)], 4, ["add"], id="value-4"),
        pytest.param([(1, 2), (2, 3)], 5, ["add", "subtract", "set"], id="value-5-equals-card"),
        pytest.param([(1, 2), (2, 4)], 6, ["add", "subtract"], id="value-6"),
        pytest.param([(1, 6), (2, 3)], 9, ["add", "subtract"], id="value-9"),
    ],
)
def test_pigmaid_subtract_offered_exactly_from_five(
    pile: list[tuple[int, int]], value: int, offered: list[str]
) -> None:
    state = position([5, 7, 8], [1], [2], pile=pile, value=value)
    assert modes(state, 5) == offered


@pytest.mark.parametrize(("value", "added", "subtracted"), [(5, 10, 0), (6, 11, 1), (9, 14, 4)])
def test_pigmaid_adds_or_subtracts(value: int, added: int, subtracted: int) -> None:
    state = position([5, 7, 8], [1], [2], pile=[(1, 1), (2, value - 1)], value=value)
    assert announced(play(state, 0, 5, "add")[1]) == added
    assert announced(play(state, 0, 5, "subtract")[1]) == subtracted


@pytest.mark.parametrize(
    ("pile", "value"), [([(1, 4), (2, 0)], 0), ([(1, 1)], 1), ([(1, 1), (2, 3)], 4)]
)
def test_pigmaid_never_negative(pile: list[tuple[int, int]], value: int) -> None:
    state = position([5, 7, 8], [1], [2], pile=pile, value=value)
    assert broken_rule(state, 0, move(5, "subtract")) == "pigmaid-never-negative"


@pytest.mark.parametrize("card", [1, 4, 6, 9])
def test_only_a_pigmaid_subtracts(card: int) -> None:
    state = position([card, 5, 5], [1], [2], pile=[(1, 6)], value=6)
    assert "subtract" not in modes(state, card)
    assert broken_rule(state, 0, move(card, "subtract")) == "pigmaid"


@pytest.mark.parametrize("mode", ["subtract", "set"])
def test_pigmaid_on_empty_pile_only_adds(mode: str) -> None:
    state = position([5, 7, 8], [1], [2])
    assert modes(state, 5) == ["add"]
    assert broken_rule(state, 0, move(5, mode)) == "empty-pile"
    assert announced(play(state, 0, 5)[1]) == 5


# --- same card, same number ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pile", "value", "card", "offered"),
    [
        pytest.param([(1, 3), (2, 4)], 7, 4, ["add", "set"], id="same-as-previous-card"),
        pytest.param([(1, 3), (2, 4)], 7, 7, ["add", "set"], id="equals-pile-value"),
        pytest.param([(1, 3), (2, 4)], 7, 3, ["add"], id="same-as-older-card-only"),
        pytest.param([(1, 3), (2, 4)], 7, 2, ["add"], id="no-match"),
        pytest.param([(1, 2), (2, 5)], 7, 5, ["add", "subtract", "set"], id="pigmaid-previous"),
        pytest.param([(1, 5)], 5, 5, ["add", "subtract", "set"], id="pigmaid-equals-value"),
        pytest.param([(1, 5), (2, 5)], 0, 5, ["add", "set"], id="pigmaid-set-not-subtract"),
    ],
)
def test_same_card_same_number_offers_set(
    pile: list[tuple[int, int]], value: int, card: int, offered: list[str]
) -> None:
    state = position([card, 0, 9], [1], [2], pile=pile, value=value)
    assert modes(state, card) == offered


@pytest.mark.parametrize(("card", "value"), [(4, 7), (7, 7)])
def test_set_makes_the_card_the_pile_value(card: int, value: int) -> None:
    state = position([card, 0, 9], [1], [2], pile=[(1, 3), (2, 4)], value=value)
    after, events = play(state, 0, card, "set")
    assert announced(events) == card
    assert after.pile_value == card


@pytest.mark.parametrize("card", [1, 2, 3, 6, 9])
def test_set_without_a_match_is_rejected(card: int) -> None:
    state = position([card, 0, 9], [1], [2], pile=[(1, 3), (2, 4)], value=7)
    assert broken_rule(state, 0, move(card, "set")) == "same-card-same-number"


def test_set_does_not_match_the_last_card_of_a_won_pile() -> None:
    state = position([4, 6, 9], [4, 1, 1], [2], pile=[(1, 3), (2, 3)], value=6)
    state, _ = play(state, 0, 4)  # 6 + 4 = 10: seat 0 wins, seat 1 opens a new pile
    assert state.pile == ()
    assert modes(state, 4) == ["add"]


# --- 10 only wins on 0 ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pile", "value"),
    [
        pytest.param([], 0, id="empty-pile"),
        pytest.param([(1, 4), (2, 0)], 0, id="after-frog"),
        pytest.param([(1, 5), (2, 5)], 0, id="after-pigmaid-subtracted-to-0"),
    ],
)
def test_ten_on_zero_wins(pile: list[tuple[int, int]], value: int) -> None:
    state = position([10, 1, 2], [3], [4], pile=pile, value=value, won=(1, 2, 3))
    after, events = play(state, 0, 10)
    assert pile_won(events) == {"seat": 0, "cards": [c for _, c in pile] + [10], "reason": "pig10"}
    assert after.won == (1 + len(pile) + 1, 2, 3)


@pytest.mark.parametrize("value", [1, 4, 9])
def test_ten_on_a_positive_pile_busts(value: int) -> None:
    state = position([10, 1, 2], [3], [4], pile=[(1, 0), (2, value)], value=value)
    after, events = play(state, 0, 10)
    assert announced(events) == value + 10
    assert pile_won(events) == {"seat": 2, "cards": [0, value, 10], "reason": "bust"}
    assert after.won == (0, 0, 3)


# --- resolving the pile --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("card", "winner", "reason"),
    [
        pytest.param(3, 0, "pig10", id="exactly-10-mover"),
        pytest.param(6, 2, "bust", id="above-10-previous-player"),
        pytest.param(9, 2, "bust", id="far-above-10-previous-player"),
    ],
)
def test_resolving_the_pile(card: int, winner: int, reason: str) -> None:
    state = position([card, 1, 1], [2, 2, 2], [4, 4], pile=[(1, 3), (2, 4)], value=7, won=(2, 5, 1))
    after, events = play(state, 0, card)
    assert pile_won(events) == {"seat": winner, "cards": [3, 4, card], "reason": reason}
    expected = list(state.won)
    expected[winner] += 3
    assert after.won == tuple(expected)
    assert (after.pile, after.pile_value) == ((), 0)
    assert RULES.to_act(after) == {1}
    assert all(m["mode"] == "add" for m in RULES.legal_moves(after, 1))


@pytest.mark.parametrize(
    ("hands", "pile", "mover", "winner"),
    [
        pytest.param([[1], [], [9]], [(1, 3), (0, 4)], 2, 0, id="skipped-seat-between"),
        pytest.param([[8], [], []], [(1, 2), (0, 4)], 0, 0, id="mover-played-previous-card"),
    ],
)
def test_bust_goes_to_whoever_played_the_previous_card(
    hands: list[list[int]], pile: list[tuple[int, int]], mover: int, winner: int
) -> None:
    """With the draw pile empty, seats without cards are skipped: not just the seat before."""
    state = position(*hands, pile=pile, value=sum(card for _, card in pile), turn=mover)
    card = hands[mover][0]
    after, events = play(state, mover, card)
    assert pile_won(events) == {
        "seat": winner,
        "cards": [c for _, c in pile] + [card],
        "reason": "bust",
    }
    assert after.won[winner] == 3


def test_below_ten_the_pile_stays() -> None:
    state = position([2, 1, 1], [2, 2, 2], [4, 4], pile=[(1, 3), (2, 4)], value=7)
    after, events = play(state, 0, 2)
    assert pile_won(events) is None
    assert [c.card for c in after.pile] == [3, 4, 2]
    assert after.pile_value == 9
    assert after.won == (0, 0, 0)


# --- drawing -------------------------------------------------------------------------------------


def test_mover_draws_the_last_card() -> None:
    state = position([1, 2, 3], [4, 5, 6], draw=[7])
    after, events = play(state, 0, 1)
    assert of_type(events, "CardDrawn") == [{"seat": 0, "card": 7}]
    assert after.hands[0] == (2, 3, 7)
    assert after.draw_pile_size == 0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_mover_draws_from_the_draw_pile(seed: int) -> None:
    draw = [0, 5, 5, 8, 10]
    state = position([1, 2, 3], [4, 5, 6], [7, 8, 9], draw=draw)
    events = RULES.decide(state, 0, move(2), Random(seed))
    (drawn,) = of_type(events, "CardDrawn")
    assert drawn["seat"] == 0
    assert drawn["card"] in draw
    after = fold(state, events)
    assert [len(hand) for hand in after.hands] == [3, 3, 3]
    remaining = list(draw)
    remaining.remove(drawn["card"])
    assert after.draw_pile == counts(remaining)


def test_no_draw_when_the_draw_pile_is_empty() -> None:
    state = position([1, 2, 3], [4, 5, 6])
    after, events = play(state, 0, 1)
    assert of_type(events, "CardDrawn") == []
    assert after.hands[0] == (2, 3)


# --- the end -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hands", "after_seat_0"),
    [
        pytest.param([[1], [], [2]], 2, id="skip-one"),
        pytest.param([[1], [], [], [2]], 3, id="skip-two"),
        pytest.param([[1, 2], [], []], 0, id="only-the-mover-has-cards"),
        pytest.param([[1], [2], [3]], 1, id="nobody-skipped"),
    ],
)
def test_seats_without_cards_are_skipped(hands: list[list[int]], after_seat_0: int) -> None:
    state = position(*hands)
    after, _ = play(state, 0, 1)
    assert RULES.to_act(after) == {after_seat_0}


def test_game_ends_when_every_hand_is_empty() -> None:
    state = position([4], [], [], pile=[(1, 3)], value=3, won=(2, 7, 4))
    assert RULES.result(state) is None
    after, _ = play(state, 0, 4)
    assert RULES.to_act(after) == frozenset()
    assert all(RULES.legal_moves(after, seat) == [] for seat in range(3))
    assert after.won == (2, 7, 4)  # the two cards left in the pile go to nobody
    result = RULES.result(after)
    assert result is not None
    assert (result.winners, result.scores) == ((1,), (2, 7, 4))
    assert broken_rule(after, 0, move(4)) == "turn-order"


def test_result_is_none_while_running() -> None:
    assert RULES.result(RULES.initial_state(3, {"first_seat": None})) is None
    _, state = dealt(3, SEED)
    assert RULES.result(state) is None
    assert RULES.result(position([1], [], [2])) is None


@pytest.mark.parametrize(
    ("won", "winners"),
    [
        pytest.param((9, 1, 0), (0,), id="single"),
        pytest.param((6, 6, 2), (0, 1), id="two-share"),
        pytest.param((3, 8, 8), (1, 2), id="last-two-share"),
        pytest.param((4, 4, 4), (0, 1, 2), id="all-share"),
        pytest.param((0, 0, 0), (0, 1, 2), id="nobody-won-anything"),
    ],
)
def test_ties_are_shared_wins(won: tuple[int, ...], winners: tuple[int, ...]) -> None:
    after, _ = play(position([], [], [2], turn=2, won=won), 2, 2)
    result = RULES.result(after)
    assert result is not None
    assert (result.winners, result.scores) == (winners, won)


def test_a_last_pig10_can_create_a_tie() -> None:
    state = position([], [3], [], pile=[(2, 1), (0, 6)], value=7, turn=1, won=(5, 2, 0))
    after, _ = play(state, 1, 3)
    result = RULES.result(after)
    assert result is not None
    assert (result.winners, result.scores) == ((0, 1), (5, 5, 0))


@pytest.mark.parametrize(("players", "seed"), [(2, 1), (3, 2), (5, 3), (8, 4)])
def test_a_whole_game(players: int, seed: int) -> None:
    """Random legal play from the deal to the end keeps every card accounted for."""
    rng = Random(seed)
    _, state = dealt(players, seed)
    while to_act := RULES.to_act(state):
        (seat,) = to_act
        if state.draw_pile_size:
            assert all(len(hand) == 3 for hand in state.hands)
        state = fold(
            state, RULES.decide(state, seat, rng.choice(RULES.legal_moves(state, seat)), rng)
        )
    assert all(hand == () for hand in state.hands)
    assert state.draw_pile_size == 0
    assert sum(state.won) + len(state.pile) == 80
    result = RULES.result(state)
    assert result is not None
    assert result.scores == state.won


# --- setup ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 5, 8])
def test_setup_deals_three_cards_each(players: int) -> None:
    events, state = dealt(players, SEED)
    assert [e.data["seat"] for e in events if e.type == "CardsDealt"] == list(range(players))
    assert all(len(hand) == 3 for hand in state.hands)
    assert state.draw_pile_size == 80 - 3 * players
    in_play = counts(card for hand in state.hands for card in hand)
    assert tuple(a + b for a, b in zip(in_play, state.draw_pile, strict=True)) == tuple(
        DECK.values()
    )
    assert (state.pile, state.won) == ((), (0,) * players)


@pytest.mark.parametrize(("players", "first"), [(2, 0), (2, 1), (4, 3), (8, 5)])
def test_setup_honours_first_seat(players: int, first: int) -> None:
    for seed in range(5):
        _, state = dealt(players, seed, first_seat=first)
        assert RULES.to_act(state) == {first}


def test_setup_lets_the_rng_choose_the_first_seat() -> None:
    firsts = {seed: dealt(4, seed)[1].turn for seed in range(40)}
    assert set(firsts.values()) == {0, 1, 2, 3}
    assert all(dealt(4, seed)[1].turn == first for seed, first in firsts.items())


def test_same_seed_same_setup() -> None:
    assert dealt(5, 42) == dealt(5, 42)
    assert dealt(5, 42)[0] != dealt(5, 43)[0]


# --- move format, hand, turn ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "attempt",
    [
        pytest.param({"card": 3}, id="no-mode"),
        pytest.param({"mode": "add"}, id="no-card"),
        pytest.param({"card": 3, "mode": "add", "say": 3}, id="extra-key"),
        pytest.param({"value": 3, "mode": "add"}, id="wrong-key"),
        pytest.param([3, "add"], id="list"),
        pytest.param("3 add", id="string"),
        pytest.param(None, id="null"),
        pytest.param(move("3"), id="card-str"),
        pytest.param(move(3.0), id="card-float"),
        pytest.param(move(None), id="card-null"),
        pytest.param(move(True), id="card-true"),
        pytest.param(move(False, "set"), id="card-false"),
        pytest.param(move(11), id="card-11"),
        pytest.param(move(-1), id="card-negative"),
        pytest.param(move(3, "double"), id="mode-unknown"),
        pytest.param(move(3, "ADD"), id="mode-case"),
        pytest.param(move(3, None), id="mode-null"),
    ],
)
def test_move_format(attempt: object) -> None:
    # The hand holds 0, 1 and 3, so accepting bools or floats as cards would not fail on the hand.
    state = position([0, 1, 3], [4, 5, 6])
    assert broken_rule(state, 0, attempt) == "move-format"


@pytest.mark.parametrize("card", [2, 4, 10])
def test_card_must_be_in_hand(card: int) -> None:
    state = position([0, 1, 3], [card, card, card])
    assert broken_rule(state, 0, move(card)) == "card-in-hand"


def test_only_the_seat_to_move_may_move() -> None:
    state = position([0, 1, 3], [1, 5, 6], [1, 2, 3], turn=0)
    assert RULES.to_act(state) == {0}
    assert broken_rule(state, 1, move(1)) == "turn-order"
    assert broken_rule(state, 2, move(1)) == "turn-order"
    assert RULES.legal_moves(state, 1) == []
    assert RULES.legal_moves(state, 0) != []


def test_legal_moves_list_each_card_value_once() -> None:
    state = position([3, 3, 0], [1], pile=[(1, 3)], value=3, turn=0)
    assert RULES.legal_moves(state, 0) == [
        {"card": 0, "mode": "set"},
        {"card": 3, "mode": "add"},
        {"card": 3, "mode": "set"},
    ]


def test_decide_does_not_change_the_state() -> None:
    state = position([1, 5, 9], [2, 3, 4], pile=[(1, 4), (0, 2)], value=6, draw=[7, 8])
    before = copy.deepcopy(state)
    for legal in RULES.legal_moves(state, 0):
        RULES.decide(state, 0, legal, Random(SEED))
        assert state == before


# --- visibility ----------------------------------------------------------------------------------

SECRET = position([1, 2, 3], [4, 5, 6], [7, 8, 9], pile=[(2, 4)], value=4, draw=[0, 0, 10, 10])


def other_cards(state: State, seat: int | None) -> State:
    """`state` with the cards hidden from `seat` dealt again in order of value, keeping all
    sizes (and the deck: the cards out of play are public)."""
    hidden = [s for s in range(state.players) if s != seat]
    draw = [value for value, count in enumerate(state.draw_pile) for _ in range(count)]
    pool = sorted([card for s in hidden for card in state.hands[s]] + draw)
    hands = list(state.hands)
    for s in hidden:
        hands[s], pool = tuple(pool[: len(hands[s])]), pool[len(hands[s]) :]
    return replace(state, hands=tuple(hands), draw_pile=counts(pool))


@pytest.mark.parametrize("seat", [0, 1, 2])
def test_view_shows_own_hand_and_only_sizes(seat: int) -> None:
    view = RULES.view(SECRET, seat)
    assert view["hand"] == list(SECRET.hands[seat])
    assert view["hand_sizes"] == [3, 3, 3]
    assert view["draw_pile"] == 4
    assert view["pile_value"] == 4
    assert RULES.view(other_cards(SECRET, seat), seat) == view
    assert RULES.view(other_cards(SECRET, None), seat) != view


def test_spectator_sees_no_hand() -> None:
    view = RULES.view(SECRET, None)
    assert "hand" not in view
    assert view["hand_sizes"] == [3, 3, 3]
    assert RULES.view(other_cards(SECRET, None), None) == view


@pytest.mark.parametrize(
    ("event", "hidden"),
    [
        (Event("CardsDealt", {"seat": 0, "cards": [1, 2, 3]}), "cards"),
        (Event("CardDrawn", {"seat": 0, "card": 7}), "card"),
    ],
)
def test_redact_hides_cards_from_others(event: Event, hidden: str) -> None:
    assert RULES.redact(event, 0) == event
    for seat in (1, 2, None):
        redacted = RULES.redact(event, seat)
        assert redacted is not None
        assert redacted.type == event.type
        assert redacted.data["seat"] == 0
        assert hidden not in redacted.data


def test_redact_leaves_public_events_alone() -> None:
    _, events = play(SECRET, 0, 1)
    public = [e for e in events if e.type != "CardDrawn"]
    assert public
    assert all(RULES.redact(e, seat) == e for e in public for seat in (0, 1, None))


def test_view_counts_the_cards_of_won_piles() -> None:
    """`out_of_play` adds up every pile won so far, as the public `PileWon` events show it."""
    rng = Random(SEED)
    _, state = dealt(4, SEED)
    out = [0] * 11
    while to_act := RULES.to_act(state):
        (seat,) = to_act
        events = RULES.decide(state, seat, rng.choice(RULES.legal_moves(state, seat)), rng)
        state = fold(state, events)
        for won in of_type(events, "PileWon"):
            out = [count + won["cards"].count(value) for value, count in enumerate(out)]
        for observer in (seat, None):
            assert RULES.view(state, observer)["out_of_play"] == out
    assert sum(out) == sum(state.won)


# --- sampling a seat's view ----------------------------------------------------------------------

# Seat 0 holds two 10s and sees one on the pile; one was won: no other hand can hold a 10.
TENS_SEEN = position(
    [10, 10, 3],
    [0, 1, 2],
    [4, 6, 9],
    pile=[(1, 0), (2, 10)],
    value=10,
    draw=[1, 2, 3, 4, 6, 7, 8],
    won=(2, 0, 0),
)


def sampled(state: State, seat: int, seed: int) -> State:
    view = RULES.view(state, seat)
    options = RULES.info.resolve_options(state.players, {})
    return RULES.sample(state.players, options, view, seat, Random(seed))


def test_sample_draws_hidden_cards_only_from_unseen_ones() -> None:
    # Cards left for the other hands and the draw pile: exactly those nobody has shown seat 0.
    hidden = counts([0, 1, 2, 4, 6, 9, 1, 2, 3, 4, 6, 7, 8])
    for seed in range(40):
        sample = sampled(TENS_SEEN, 0, seed)
        others = [card for hand in sample.hands[1:] for card in hand]
        assert 10 not in others
        assert tuple(a + b for a, b in zip(counts(others), sample.draw_pile, strict=True)) == hidden


def test_sample_keeps_what_the_seat_sees_and_redraws_the_rest() -> None:
    samples = [sampled(TENS_SEEN, 0, seed) for seed in range(20)]
    for sample in samples:
        assert sample.hands[0] == TENS_SEEN.hands[0]
        assert [len(hand) for hand in sample.hands] == [3, 3, 3]
        assert (sample.pile, sample.pile_value, sample.won) == (
            TENS_SEEN.pile,
            TENS_SEEN.pile_value,
            TENS_SEEN.won,
        )
        assert (sample.turn, sample.started) == (TENS_SEEN.turn, True)
    assert len({sample.hands for sample in samples}) > 10


def test_sample_of_a_deal_and_of_the_last_cards() -> None:
    """At the deal every other card is unseen; at the end only one hand is left to fill."""
    _, state = dealt(5, SEED)
    sample = sampled(state, 2, 7)
    assert RULES.view(sample, 2) == RULES.view(state, 2)
    assert sample.draw_pile_size == 65
    last = position([], [4], [], pile=[(0, 3)], value=3, turn=1, won=(70, 0, 6))
    assert sampled(last, 1, 7) == last
    assert sampled(last, 0, 7).hands[1] == (4,)


# --- evaluating a position -----------------------------------------------------------------------


def test_evaluate_splits_the_win_evenly_between_equals() -> None:
    _, state = dealt(4, SEED)
    assert RULES.evaluate(state) == pytest.approx((0.25,) * 4)
    level = position([1, 2], [3, 4], [6], won=(20, 20, 20), turn=0)
    assert RULES.evaluate(level) == pytest.approx((1 / 3,) * 3)


def test_evaluate_favours_the_leader_the_more_the_nearer_the_end() -> None:
    early = position([1, 2, 3], [3, 4, 6], draw=[7] * 60, won=(8, 2))
    late = position([1], [3], won=(8, 2))
    for state in (early, late):
        shares = RULES.evaluate(state)
        assert shares[0] > 0.5 > shares[1]
    assert RULES.evaluate(late)[0] > 0.95 > RULES.evaluate(early)[0]


def test_evaluate_ranks_seats_by_cards_won() -> None:
    shares = RULES.evaluate(position([1], [2], [3], [4], won=(3, 9, 0, 6), draw=[5] * 10))
    assert shares[1] > shares[3] > shares[0] > shares[2]


def test_evaluate_of_a_finished_game_is_its_result() -> None:
    after, _ = play(position([], [], [2], turn=2, won=(6, 6, 2)), 2, 2)
    assert RULES.evaluate(after) == (0.5, 0.5, 0.0)
