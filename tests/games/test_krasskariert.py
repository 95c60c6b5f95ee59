"""Krass Kariert rule tests: hand-built positions pinned against `docs/rules/krasskariert.md`.

Sections follow the rules file's paragraphs. Every test talks to the engine through the `RULES`
contract; positions are built with `table(...)`, cards written in their wire form (1..12, "X",
"DRAW", "STOP"), randomness comes from seeded `random.Random` instances.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import partial, reduce
from itertools import product
from pathlib import Path
from random import Random
from typing import Any

import jsonschema_rs
import pytest
import yaml

from domain.games.krasskariert import (
    CODE,
    COMBINATIONS,
    DECK_COUNTS,
    KIND_NAMES,
    RULES,
    WIRE,
    Play,
    State,
    _offered,
)
from domain.rules import JSON, Event, RuleError, listed
from tests.bounds import bounded
from tests.games.refusals import refused_rule

SEED = 54
Card = int | str
TrickPlay = tuple[int, Sequence[Card], str, int | None]
"""A play in the middle: (seat, cards, kind name, rank or None for DRAW and STOP)."""


# --- helpers -------------------------------------------------------------------------------------


def table(
    *hands: Sequence[Card],
    reserves: Sequence[Sequence[Card]] | None = None,
    leader: int = 0,
    trick: Sequence[TrickPlay] = (),
    turn: int | None = None,
    chips: Sequence[int] | None = None,
    draw_pile: int = 6,
) -> State:
    """A running hand: `leader` led the trick, `trick` lies in the middle, `turn` acts next
    (default: the leader if the middle is empty, else the seat after the last play)."""
    players = len(hands)
    codes = tuple(tuple(CODE[card] for card in hand) for hand in hands)
    rows = reserves if reserves is not None else [[] for _ in hands]
    reserve_codes = tuple(tuple(CODE[card] for card in row) for row in rows)
    plays = tuple(
        Play(seat, tuple(CODE[c] for c in cards), KIND_NAMES.index(kind), rank or 0)
        for seat, cards, kind, rank in trick
    )
    used = Counter(card for group in (*codes, *reserve_codes) for card in group)
    used.update(card for play in plays for card in play.cards)
    unseen = tuple(count - used[card] for card, count in enumerate(DECK_COUNTS))
    assert min(unseen) >= 0, "more copies of a card than the deck holds"
    order = [leader] + [
        seat for seat in ((leader + step) % players for step in range(1, players)) if codes[seat]
    ]
    if turn is None:
        turn = order[len(plays)] if plays else leader
    return State(
        chips=tuple(chips) if chips is not None else (3,) * players,
        hands=codes,
        reserves=reserve_codes,
        unseen=unseen,
        draw_pile=draw_pile,
        hand_number=1,
        leader=leader,
        turn=turn,
        waiting=tuple(order[order.index(turn) + 1 :]),
        trick=plays,
    )


def fold(state: State, events: Iterable[Event]) -> State:
    return reduce(RULES.evolve, events, state)


def act(
    state: State, seat: int, move: dict[str, Any], seed: int = SEED
) -> tuple[State, list[Event]]:
    """Decide `move` (it must be listed as legal) and fold its events."""
    assert move in RULES.legal_moves(state, seat), f"{move} is not offered"
    events = RULES.decide(state, seat, move, Random(seed))
    return fold(state, events), events


broken_rule = partial(refused_rule, RULES, SEED)


def play(at: int, count: int, kind: str, rank: int) -> dict[str, Any]:
    return {"type": "play", "at": at, "count": count, "kind": kind, "rank": rank}


def take(card: Card, at: int) -> dict[str, Any]:
    return {"type": "pass", "card": card, "at": at}


def stop(at: int) -> dict[str, Any]:
    return {"type": "stop", "at": at}


def draw(at: int) -> dict[str, Any]:
    return {"type": "draw", "at": at}


def insert(at: int) -> dict[str, Any]:
    return {"type": "insert", "at": at}


def hand(state: State, seat: int) -> list[JSON]:
    return [WIRE[card] for card in state.hands[seat]]


def types(events: Iterable[Event]) -> list[str]:
    return [event.type for event in events]


def of_type(events: Iterable[Event], kind: str) -> list[dict[str, Any]]:
    return [dict(event.data) for event in events if event.type == kind]


def combos(state: State, seat: int, at: int, count: int) -> list[tuple[str, int]]:
    """The (kind, rank) pairs `legal_moves` offers for the window `at`, `count`."""
    return [
        (move["kind"], move["rank"])
        for move in RULES.legal_moves(state, seat)
        if move["type"] == "play" and move["at"] == at and move["count"] == count
    ]


def dealt(players: int, seed: int, first_seat: int | None = None) -> tuple[list[Event], State]:
    options = RULES.info.resolve_options(players, {"first_seat": first_seat})
    events = RULES.setup(players, options, Random(seed))
    return events, fold(RULES.initial_state(players, options), events)


def playout(players: int, seed: int, options: dict[str, JSON]) -> tuple[State, list[Event]]:
    """A whole game of random legal moves; returns the final state and every event."""
    resolved = RULES.info.resolve_options(players, options)
    rng = Random(seed)
    events = RULES.setup(players, resolved, rng)
    state = fold(RULES.initial_state(players, resolved), events)
    for _ in bounded("the game did not end"):
        if RULES.result(state) is not None:
            break
        seat = rng.choice(sorted(RULES.to_act(state)))
        decided = RULES.decide(state, seat, rng.choice(RULES.legal_moves(state, seat)), rng)
        state = fold(state, decided)
        events += decided
    return state, events


# --- Components ----------------------------------------------------------------------------------


def test_the_deck_holds_54_cards() -> None:
    deck = Counter({WIRE[card]: count for card, count in enumerate(DECK_COUNTS) if count})
    assert sum(deck.values()) == 54
    assert all(deck[number] == 4 for number in range(1, 13))
    assert deck["X"] == deck["DRAW"] == deck["STOP"] == 2


def test_three_to_five_players_and_first_seat_is_the_only_option() -> None:
    info = RULES.info
    assert (info.min_players, info.max_players) == (3, 5)
    assert [option.name for option in info.options] == ["first_seat"]
    assert info.score_range == (0, 3)


@pytest.mark.parametrize(("players", "chips"), [(3, 3), (4, 3), (5, 2)])
def test_chips_per_player_count(players: int, chips: int) -> None:
    _, state = dealt(players, SEED)
    assert RULES.view(state, None)["chips"] == [chips] * players


# --- A hand: the deal ----------------------------------------------------------------------------


@pytest.mark.parametrize(("players", "size"), [(3, 10), (4, 10), (5, 7)])
@pytest.mark.parametrize("seed", range(5))
def test_deal_per_player_count(players: int, size: int, seed: int) -> None:
    events, state = dealt(players, seed)
    assert types(events) == ["CardsDealt"] * players + ["HandStarted"]
    for seat, event in enumerate(events[:players]):
        assert event.data["seat"] == seat
        assert hand(state, seat) == event.data["cards"], "the hand keeps the order dealt"
        assert len(event.data["cards"]) == size
        assert len(event.data["reserve"]) == 2
    view = RULES.view(state, None)
    assert view["draw_pile"] == 6
    assert view["hand_sizes"] == [size] * players
    # The draw pile and the set-aside cards together are what nobody has seen.
    assert sum(state.unseen) == 54 - players * (size + 2)
    everything = Counter(card for hand_ in state.hands for card in hand_)
    everything.update(card for row in state.reserves for card in row)
    everything.update({card: count for card, count in enumerate(state.unseen) if count})
    assert everything == Counter({c: n for c, n in enumerate(DECK_COUNTS) if n})


def test_hands_are_hidden_and_reserves_public() -> None:
    events, state = dealt(4, SEED)
    for seat in range(4):
        view = RULES.view(state, seat)
        assert view["hand"] == hand(state, seat)
        assert view["reserves"] == [event.data["reserve"] for event in events[:4]]
        assert view["hand_sizes"] == [10] * 4
        other = RULES.redact(events[(seat + 1) % 4], seat)
        assert other is not None
        assert other.data == {
            "seat": (seat + 1) % 4,
            "count": 10,
            "reserve": events[(seat + 1) % 4].data["reserve"],
        }
        assert RULES.redact(events[seat], seat) == events[seat]
    assert "hand" not in RULES.view(state, None)
    spectator = RULES.redact(events[0], None)
    assert spectator is not None
    assert "cards" not in spectator.data


def test_first_hand_led_by_a_random_seat_or_the_named_one() -> None:
    leaders = {dealt(3, seed)[1].leader for seed in range(40)}
    assert leaders == {0, 1, 2}
    for first in range(5):
        _, state = dealt(5, SEED, first_seat=first)
        assert state.leader == state.turn == first
        assert RULES.to_act(state) == {first}


# --- Hand order is fixed -------------------------------------------------------------------------


def test_playing_from_the_middle_keeps_the_order_of_the_rest() -> None:
    state = table([9, 4, 5, 1, 12], [2, 2], [3, 3])
    after, _ = act(state, 0, play(1, 2, "2-run", 5))
    assert hand(after, 0) == [9, 1, 12]


@pytest.mark.parametrize("at", range(6))
def test_a_reserve_card_goes_exactly_where_chosen(at: int) -> None:
    cards: list[Card] = [1, 3, 5, 7, 9]
    state = table(
        [12], cards, [2, 2], reserves=[[], ["X", 8], [3]], trick=[(0, [12], "single", 12)]
    )
    after, events = act(state, 1, take(8, at))
    assert hand(after, 1) == [*cards[:at], 8, *cards[at:]]
    assert of_type(events, "ReserveTaken") == [{"seat": 1, "card": 8, "at": at}]
    assert RULES.view(after, 0)["reserves"][1] == ["X"]


def test_moves_name_positions_and_cards_are_never_resorted() -> None:
    state = table([7, 1, 7, 2], [5], [6])
    moves = RULES.legal_moves(state, 0)
    assert {"type": "play", "at": 0, "count": 1, "kind": "single", "rank": 7} in moves
    assert {"type": "play", "at": 2, "count": 1, "kind": "single", "rank": 7} in moves
    # 7 and 7 are not adjacent and 1 and 2 are neither: no pair, no 2-run.
    assert all(move["count"] == 1 for move in moves)


# --- Combinations --------------------------------------------------------------------------------

ORDER = [
    pytest.param([5], "single", 5, id="single"),
    pytest.param([4, 5], "2-run", 5, id="2-run"),
    pytest.param([5, 5], "pair", 5, id="pair"),
    pytest.param([3, 4, 5], "3-run", 5, id="3-run"),
    pytest.param([5, 5, 5], "triple", 5, id="triple"),
]


@pytest.mark.parametrize(("cards", "kind", "rank"), ORDER)
def test_each_combination_kind_is_recognised(cards: list[Card], kind: str, rank: int) -> None:
    state = table([*cards, 12], [1], [2])
    assert combos(state, 0, 0, len(cards)) == [(kind, rank)]


LOW_HIGH = [
    # any higher kind beats any lower one, whatever the numbers
    pytest.param(("single", 12), [1, 2], "2-run", 2, id="2-run-of-2-beats-single-12"),
    pytest.param(("2-run", 12), [1, 1], "pair", 1, id="pair-of-1-beats-2-run-12"),
    pytest.param(("pair", 12), [1, 2, 3], "3-run", 3, id="3-run-of-3-beats-pair-12"),
    pytest.param(("3-run", 12), [1, 1, 1], "triple", 1, id="triple-of-1-beats-3-run-12"),
    pytest.param(("single", 12), [1, 1, 1], "triple", 1, id="triple-beats-single"),
    # within a kind the higher number wins; a run counts by its highest card
    pytest.param(("single", 7), [8], "single", 8, id="single-8-beats-7"),
    pytest.param(("2-run", 7), [8, 7], "2-run", 8, id="2-run-8-7-beats-6-7"),
    pytest.param(("pair", 7), [8, 8], "pair", 8, id="pair-8-beats-pair-7"),
    pytest.param(("3-run", 9), [8, 10, 9], "3-run", 10, id="8-10-9-beats-7-8-9"),
    pytest.param(("triple", 3), [4, 4, 4], "triple", 4, id="triple-4-beats-triple-3"),
]


@pytest.mark.parametrize(("lying", "cards", "kind", "rank"), LOW_HIGH)
def test_beating(lying: tuple[str, int], cards: list[Card], kind: str, rank: int) -> None:
    state = table([12], [*cards, 6], [2], reserves=[[], [], [1]], trick=[(0, [], *lying)])
    assert (kind, rank) in combos(state, 1, 0, len(cards))
    after, events = act(state, 1, play(0, len(cards), kind, rank))
    assert of_type(events, "CardsPlayed")[0]["kind"] == kind
    assert RULES.view(after, None)["to_beat"] == {"kind": kind, "rank": rank}


NOT_BEATING = [
    pytest.param(("single", 8), [8], "single", 8, id="equal-single"),
    pytest.param(("pair", 8), [8, 8], "pair", 8, id="equal-pair"),
    pytest.param(("3-run", 9), [9, 7, 8], "3-run", 9, id="equal-run-other-order"),
    pytest.param(("single", 9), [8], "single", 8, id="lower-single"),
    pytest.param(("2-run", 2), [12], "single", 12, id="single-below-2-run"),
    pytest.param(("pair", 2), [11, 12], "2-run", 12, id="2-run-below-pair"),
    pytest.param(("3-run", 3), [12, 12], "pair", 12, id="pair-below-3-run"),
    pytest.param(("triple", 1), [10, 11, 12], "3-run", 12, id="3-run-below-triple"),
]


@pytest.mark.parametrize(("lying", "cards", "kind", "rank"), NOT_BEATING)
def test_equal_or_lower_does_not_beat(
    lying: tuple[str, int], cards: list[Card], kind: str, rank: int
) -> None:
    state = table([12], [*cards, 6], [2], trick=[(0, [], lying[0], lying[1])])
    assert broken_rule(state, 1, play(0, len(cards), kind, rank)) == "must-beat"


@pytest.mark.parametrize(
    ("cards", "rank", "reminded"),
    [pytest.param([8], 8, True, id="equal"), pytest.param([7], 7, False, id="lower")],
)
def test_only_an_equal_play_is_reminded_that_equal_does_not_beat(
    cards: list[Card], rank: int, reminded: bool
) -> None:
    state = table([12], [*cards, 6], [2], trick=[(0, [], "single", 8)])
    with pytest.raises(RuleError) as refused:
        RULES.decide(state, 1, play(0, 1, "single", rank), Random(SEED))
    assert ("equal does not beat" in refused.value.detail) is reminded


def test_cards_of_a_combination_must_be_adjacent() -> None:
    state = table([5, 9, 5, 6], [1], [2])
    assert ("pair", 5) not in combos(state, 0, 0, 2) + combos(state, 0, 0, 3)
    assert broken_rule(state, 0, play(0, 2, "pair", 5)) == "combination"
    assert broken_rule(state, 0, play(0, 3, "triple", 5)) == "combination"
    assert combos(state, 0, 2, 2) == [("2-run", 6)]
    assert broken_rule(state, 0, play(3, 2, "2-run", 7)) == "adjacent-cards"


@pytest.mark.parametrize(
    "cards", [[8, 10, 9], [9, 8, 10], [8, 9, 10], [10, 9, 8]], ids=lambda c: "-".join(map(str, c))
)
def test_order_inside_a_combination_does_not_matter(cards: list[Card]) -> None:
    state = table([1, *cards, 1], [2], [3])
    assert combos(state, 0, 1, 3) == [("3-run", 10)]


def test_no_runs_wrap_around_and_no_gaps() -> None:
    state = table([12, 1, 3, 5, 7, 7, 8], [2], [3])
    assert combos(state, 0, 0, 2) == []
    assert combos(state, 0, 2, 2) == []
    assert combos(state, 0, 4, 3) == []
    assert combos(state, 0, 5, 2) == [("2-run", 8)]


# --- The X card ----------------------------------------------------------------------------------


def test_x_alone_is_a_single_of_any_declared_number() -> None:
    state = table(["X"], [1], [2], reserves=[[], [3], []])
    assert combos(state, 0, 0, 1) == [("single", rank) for rank in range(1, 13)]
    after, events = act(state, 0, play(0, 1, "single", 12))
    assert of_type(events, "CardsPlayed")[0] == {
        "seat": 0,
        "at": 0,
        "cards": ["X"],
        "kind": "single",
        "rank": 12,
    }
    assert after.trick[-1].rank == 12


@pytest.mark.parametrize(
    ("cards", "offered"),
    [
        pytest.param(["X", 8], [("2-run", 8), ("2-run", 9), ("pair", 8)], id="X-8"),
        pytest.param([1, "X"], [("2-run", 2), ("pair", 1)], id="1-X-no-0"),
        pytest.param(["X", 12], [("2-run", 12), ("pair", 12)], id="X-12-no-13"),
        pytest.param([5, "X", 7], [("3-run", 7)], id="X-inside-a-run"),
        pytest.param([5, 6, "X"], [("3-run", 6), ("3-run", 7)], id="X-at-a-run-end"),
        pytest.param([5, "X", 5], [("triple", 5)], id="X-in-a-triple"),
        pytest.param(
            ["X", "X", 5],
            [("3-run", 5), ("3-run", 6), ("3-run", 7), ("triple", 5)],
            id="two-X-one-number",
        ),
        pytest.param(["X", 4, 9], [], id="no-combination-with-4-and-9"),
        pytest.param([3, "X", 3], [("triple", 3)], id="X-between-equal"),
    ],
)
def test_x_joins_adjacent_number_cards(cards: list[Card], offered: list[tuple[str, int]]) -> None:
    state = table([*cards, "STOP"], [1], [2])
    assert combos(state, 0, 0, len(cards)) == offered


def declared(cards: Sequence[Card]) -> set[tuple[str, int]]:
    """Every (kind, rank) `cards` make, by trying each number for each X: the rules' oracle."""
    jokers = [index for index, card in enumerate(cards) if card == "X"]
    if len(cards) > 1 and len(jokers) == len(cards):
        return set()
    found = set()
    for values in product(range(1, 13), repeat=len(jokers)):
        numbers = [int(card) for card in cards if card != "X"] + list(values)
        size, ordered = len(numbers), sorted(numbers)
        if size == 1:
            found.add(("single", numbers[0]))
        elif len(set(numbers)) == 1:
            found.add(("pair" if size == 2 else "triple", numbers[0]))
        elif ordered == list(range(ordered[0], ordered[0] + size)):
            found.add(("2-run" if size == 2 else "3-run", ordered[-1]))
    return found


def test_combinations_match_the_oracle_for_every_window() -> None:
    cards: list[Card] = [*range(1, 13), "X"]
    checked = 0
    for size in (1, 2, 3):
        for window in product(cards, repeat=size):
            codes = tuple(CODE[card] for card in window)
            table_says = {(KIND_NAMES[kind], rank) for kind, rank in COMBINATIONS[codes]}
            assert table_says == declared(window), window
            checked += 1
    assert checked == 13 + 13**2 + 13**3


def test_x_plus_x_is_not_a_pair() -> None:
    state = table(["X", "X", 3], [1], [2])
    assert combos(state, 0, 0, 2) == []
    assert broken_rule(state, 0, play(0, 2, "pair", 7)) == "x-needs-number"
    assert broken_rule(state, 0, play(0, 2, "2-run", 7)) == "x-needs-number"
    # each X alone is still a single, and with the 3 it makes a three-card combination
    assert len(combos(state, 0, 0, 1)) == len(combos(state, 0, 1, 1)) == 12
    assert ("triple", 3) in combos(state, 0, 0, 3)


def test_x_joins_only_adjacent_cards_not_over_a_special_card() -> None:
    state = table(["X", "STOP", 5], [1], [2])
    assert combos(state, 0, 0, 2) == []
    assert broken_rule(state, 0, play(0, 2, "pair", 5)) == "special-card-alone"


def test_x_declaration_must_fit() -> None:
    state = table([5, "X", 7], [1], [2])
    assert broken_rule(state, 0, play(0, 3, "3-run", 8)) == "combination"
    assert broken_rule(state, 0, play(0, 3, "triple", 5)) == "combination"
    assert broken_rule(state, 0, play(0, 2, "2-run", 7)) == "combination"


def test_x_run_compared_across_kinds() -> None:
    # A 3-run with an X declared up to 12 still loses to the lowest triple.
    state = table([12], [10, 11, "X", 9], [1, 1, 1], trick=[(0, [12], "single", 12)])
    after, _ = act(state, 1, play(0, 3, "3-run", 12))
    assert broken_rule(after, 2, play(0, 3, "3-run", 12)) == "combination"
    final, events = act(after, 2, play(0, 3, "triple", 1))
    assert of_type(events, "TrickWon") == [{"seat": 2, "reason": "highest", "draws": 0}]
    assert final.leader == 1, "the triple's player is out, the 3-run's player leads"


# --- A trick -------------------------------------------------------------------------------------


def test_the_leader_plays_any_combination_and_cannot_pass() -> None:
    state = table([1, 2], [12], [12], reserves=[[5, 6], [], []])
    moves = RULES.legal_moves(state, 0)
    assert all(move["type"] == "play" for move in moves)
    assert {"type": "play", "at": 0, "count": 1, "kind": "single", "rank": 1} in moves
    assert broken_rule(state, 0, take(5, 0)) == "leader-must-play"
    assert RULES.view(state, 0)["phase"] == "lead"


def test_each_player_with_cards_has_exactly_one_turn_clockwise() -> None:
    state = table([3, 3], [], [4, 4], [5, 5], leader=3, reserves=[[1], [], [1], [1]])
    assert RULES.view(state, None)["waiting"] == [0, 2], "seat 1 is out of this hand"
    seen = []
    for seat, move in [(3, play(0, 1, "single", 5)), (0, take(1, 0)), (2, take(1, 0))]:
        assert RULES.to_act(state) == {seat}
        seen.append(seat)
        state, events = act(state, seat, move)
    assert seen == [3, 0, 2]
    assert types(events)[-2:] == ["TrickWon", "TrickStarted"]
    assert of_type(events, "TrickWon") == [{"seat": 3, "reason": "highest", "draws": 0}]


def test_passing_lists_every_reserve_card_and_position() -> None:
    state = table([9], [1, 2], [3], reserves=[[], ["X", "X"], []], trick=[(0, [9], "single", 9)])
    passes = [m for m in RULES.legal_moves(state, 1) if m["type"] == "pass"]
    assert passes == [take("X", at) for at in range(3)], "two equal reserves: one card to name"
    state = table([9], [1, 2], [3], reserves=[[], [7, "STOP"], []], trick=[(0, [9], "single", 9)])
    passes = [m for m in RULES.legal_moves(state, 1) if m["type"] == "pass"]
    assert passes == [take(7, at) for at in range(3)] + [take("STOP", at) for at in range(3)]
    assert broken_rule(state, 1, take(8, 0)) == "reserve-card"
    assert broken_rule(state, 1, take(7, 3)) == "hand-position"
    assert broken_rule(state, 1, take(7, -1)) == "hand-position"


def test_a_player_with_a_reserve_may_pass_even_when_able_to_beat() -> None:
    state = table([2], [12, 5], [3, 4], reserves=[[], [1], []], trick=[(0, [2], "single", 2)])
    assert play(0, 1, "single", 12) in RULES.legal_moves(state, 1)
    after, events = act(state, 1, take(1, 2))
    assert types(events) == ["ReserveTaken"]
    assert hand(after, 1) == [12, 5, 1]
    assert after.turn == 2


def test_the_reserve_row_empties_then_only_beating_is_left() -> None:
    state = table([2], [12, 5], [3, 4], trick=[(0, [2], "single", 2)])
    assert all(move["type"] == "play" for move in RULES.legal_moves(state, 1))


def test_cannot_beat_and_no_reserve_ends_the_hand_at_once() -> None:
    # Seat 1 passes with its last reserve; seat 2 can neither beat the 12 nor pass.
    state = table([12, 1], [3, 5], [4, 6], reserves=[[], [2], []])
    state, events = act(state, 0, play(0, 1, "single", 12))
    assert types(events) == ["CardsPlayed"], "seat 1 still has a reserve card"
    after, events = act(state, 1, take(2, 0))
    assert types(events)[:2] == ["ReserveTaken", "HandLost"]
    assert of_type(events, "HandLost") == [{"seats": [2], "reason": "cannot-beat"}]
    assert after.chips == (3, 3, 2)
    assert of_type(events, "HandStarted")[0]["leader"] == 2
    assert after.hand_number == 2


def test_a_stop_or_draw_card_keeps_a_player_without_reserves_in_the_hand() -> None:
    for special in ("STOP", "DRAW"):
        state = table([12, 1], [3, special], [4], reserves=[[], [], [5]])
        after, events = act(state, 0, play(0, 1, "single", 12))
        assert types(events) == ["CardsPlayed"]
        moves = RULES.legal_moves(after, 1)
        assert moves == [{"type": special.lower(), "at": 1}]


# --- STOP ----------------------------------------------------------------------------------------


def test_stop_ends_the_trick_at_once_and_wins_it() -> None:
    state = table([9, 1], [3, "STOP", 4], [12, 12], [5, 6], reserves=[[], [], [], [7]])
    state, _ = act(state, 0, play(0, 1, "single", 9))
    after, events = act(state, 1, stop(1))
    assert types(events) == ["CardsPlayed", "TrickWon", "TrickStarted"]
    assert of_type(events, "CardsPlayed")[0] == {
        "seat": 1,
        "at": 1,
        "cards": ["STOP"],
        "kind": "stop",
        "rank": None,
    }
    assert of_type(events, "TrickWon") == [{"seat": 1, "reason": "stop", "draws": 0}]
    assert after.leader == after.turn == 1, "seats 2 and 3 had no turn"
    assert hand(after, 2) == [12, 12]


def test_stop_as_the_lead() -> None:
    state = table(["STOP", 4], [3], [12])
    moves = RULES.legal_moves(state, 0)
    assert stop(0) in moves
    after, events = act(state, 0, stop(0))
    assert types(events) == ["CardsPlayed", "TrickWon", "TrickStarted"]
    assert after.leader == 0
    assert hand(after, 0) == [4]


def test_stop_as_last_card_hands_the_lead_to_the_highest_combination() -> None:
    state = table([9, 1], [3, 3], ["STOP"], [5, 6], leader=0)
    state, _ = act(state, 0, play(0, 1, "single", 9))
    state, _ = act(state, 1, play(0, 2, "pair", 3))
    after, events = act(state, 2, stop(0))
    assert of_type(events, "TrickWon") == [{"seat": 2, "reason": "stop", "draws": 0}]
    assert of_type(events, "TrickStarted") == [{"leader": 0}], "seat 1 (the pair) is out"
    assert RULES.view(after, None)["waiting"] == [3]


def test_stop_cards_cannot_join_combinations() -> None:
    state = table(["STOP", "STOP"], [3], [4])
    assert RULES.legal_moves(state, 0) == [stop(0), stop(1)]
    assert broken_rule(state, 0, play(0, 1, "single", 5)) == "special-card-alone"
    assert broken_rule(state, 0, draw(0)) == "card-at-position"


# --- DRAW ----------------------------------------------------------------------------------------


def test_draw_frees_its_player_and_the_next_beats_what_lay_before() -> None:
    state = table([1], [11, "DRAW"], [10, 12], trick=[(0, [10], "single", 10)])
    after, events = act(state, 1, draw(1))
    assert types(events) == ["CardsPlayed"], "seat 1 could beat with its 11 but need not"
    assert RULES.view(after, None)["to_beat"] == {"kind": "single", "rank": 10}
    offered = combos(after, 2, 0, 1) + combos(after, 2, 1, 1)
    assert offered == [("single", 12)], "the 10 equals what lay before the DRAW card"
    assert broken_rule(after, 2, play(0, 1, "single", 10)) == "must-beat"


def test_a_draw_card_may_be_played_whatever_lies_in_the_middle() -> None:
    state = table([1], [2, "DRAW"], [3], trick=[(0, [12, 12, 12], "triple", 12)])
    assert RULES.legal_moves(state, 1) == [draw(1)]


def test_draw_as_the_lead_lets_the_next_play_freely() -> None:
    state = table(["DRAW", 7], [1, 1], [2], reserves=[[], [12], []])
    after, events = act(state, 0, draw(0))
    assert types(events) == ["CardsPlayed"]
    assert RULES.view(after, None)["to_beat"] is None
    assert RULES.view(after, 1)["phase"] == "follow"
    moves = RULES.legal_moves(after, 1)
    assert play(0, 1, "single", 1) in moves
    assert play(0, 2, "pair", 1) in moves
    assert take(12, 0) in moves, "following a DRAW lead, passing is still allowed"


def test_two_draw_cards_in_one_trick_draw_six_cards_one_at_a_time() -> None:
    state = table(
        ["DRAW", 3], [5, 5], ["DRAW", 1], [12, 12, 2], leader=0, reserves=[[], [], [], [4]]
    )
    state, _ = act(state, 0, draw(0))
    state, _ = act(state, 1, play(0, 2, "pair", 5))
    state, _ = act(state, 2, draw(0))
    assert RULES.view(state, None)["to_beat"] == {"kind": "pair", "rank": 5}
    state, events = act(state, 3, play(0, 2, "pair", 12))
    assert types(events) == ["CardsPlayed", "TrickWon", "CardDrawn"]
    assert of_type(events, "TrickWon") == [{"seat": 3, "reason": "highest", "draws": 6}]
    drawn: list[JSON] = []
    for step in range(6):
        view = RULES.view(state, 3)
        assert view["phase"] == "insert"
        assert view["draws_left"] == 6 - step
        assert view["draw_pile"] == 6 - step - 1
        assert "drawn" not in RULES.view(state, 0)
        assert RULES.to_act(state) == {3}
        moves = RULES.legal_moves(state, 3)
        assert moves == [insert(at) for at in range(len(state.hands[3]) + 1)]
        assert broken_rule(state, 3, play(0, 1, "single", 2)) == "insert-drawn-card"
        drawn.append(view["drawn"])
        state, events = act(state, 3, insert(0), seed=step)
        assert of_type(events, "CardInserted") == [{"seat": 3, "card": drawn[-1], "at": 0}]
    assert types(events) == ["CardInserted", "TrickStarted"]
    assert hand(state, 3) == [*reversed(drawn), 2]
    assert RULES.view(state, None)["draw_pile"] == 0
    assert state.leader == 3


def test_a_winner_who_played_out_still_draws_for_the_draw_cards_then_leads() -> None:
    state = table([4, 1], ["DRAW", 2], [9], leader=0)
    state, _ = act(state, 0, play(0, 1, "single", 4))
    state, _ = act(state, 1, draw(0))
    state, events = act(state, 2, play(0, 1, "single", 9))
    assert of_type(events, "TrickWon") == [{"seat": 2, "reason": "highest", "draws": 3}]
    assert hand(state, 2) == []
    for step in range(3):
        assert RULES.view(state, 2)["phase"] == "insert"
        assert RULES.to_act(state) == {2}
        state, events = act(state, 2, insert(0), seed=step)
    assert types(events) == ["CardInserted", "TrickStarted"]
    assert of_type(events, "TrickStarted") == [{"leader": 2}]
    assert len(hand(state, 2)) == 3


def test_drawn_cards_go_where_chosen() -> None:
    state = table(["DRAW", 3, 4], [5], [6], trick=[], leader=0, reserves=[[], [1], [2]])
    state, _ = act(state, 0, draw(0))
    state, _ = act(state, 1, take(1, 1))
    state, events = act(state, 2, take(2, 0))
    assert of_type(events, "TrickWon") == [{"seat": 0, "reason": "lead", "draws": 3}]
    positions = [2, 0, 4]
    for at in positions:
        card = RULES.view(state, 0)["drawn"]
        before = hand(state, 0)
        state, _ = act(state, 0, insert(at))
        assert hand(state, 0) == [*before[:at], card, *before[at:]]
    assert broken_rule(state, 0, insert(0)) == "insert-drawn-card"


def test_drawn_cards_are_hidden_from_the_others() -> None:
    state = table([5, 9], ["DRAW", 1], [2, 3], reserves=[[], [], [4]], leader=1)
    state, _ = act(state, 1, draw(0))
    state, events = act(state, 2, take(4, 0))
    state, events = act(state, 0, play(0, 1, "single", 5))
    drawn_event = events[-1]
    assert drawn_event.type == "CardDrawn"
    assert drawn_event.data["seat"] == 0
    for seat in (1, 2, None):
        assert RULES.redact(drawn_event, seat) == Event("CardDrawn", {"seat": 0})
        assert "drawn" not in RULES.view(state, seat)
    assert RULES.redact(drawn_event, 0) == drawn_event
    _, events = act(state, 0, insert(1))
    assert RULES.redact(events[0], 1) == Event("CardInserted", {"seat": 0, "at": 1})


def test_the_draw_is_chance_from_cards_nobody_has_seen() -> None:
    state = table(["DRAW", 3], [5], [6], reserves=[[], [1], [2]])
    state, _ = act(state, 0, draw(0))
    state, _ = act(state, 1, take(1, 0))
    outcomes = set()
    for seed in range(60):
        events = RULES.decide(state, 2, take(2, 0), Random(seed))
        (card,) = (event.data["card"] for event in events if event.type == "CardDrawn")
        outcomes.add(card)
        assert state.unseen[CODE[card]] > 0
    assert len(outcomes) > 5


# --- Who wins a trick and who leads next ---------------------------------------------------------


def test_only_draw_cards_the_leader_wins() -> None:
    state = table(["DRAW", 4], ["DRAW", 1], [5], reserves=[[], [], [2]])
    state, _ = act(state, 0, draw(0))
    state, _ = act(state, 1, draw(0))
    after, events = act(state, 2, take(2, 0))
    assert of_type(events, "TrickWon") == [{"seat": 0, "reason": "lead", "draws": 6}]
    assert RULES.to_act(after) == {0}


def test_the_winner_out_of_cards_hands_the_lead_to_the_next_highest_combination() -> None:
    state = table([3, 8], [5], [9], [2, 4], leader=0, reserves=[[], [], [], [1]])
    state, _ = act(state, 0, play(0, 1, "single", 3))
    state, _ = act(state, 1, play(0, 1, "single", 5))
    state, _ = act(state, 2, play(0, 1, "single", 9))
    after, events = act(state, 3, take(1, 0))
    assert of_type(events, "TrickWon") == [{"seat": 2, "reason": "highest", "draws": 0}]
    # seat 2 won with its last card, seat 1 (the 5) is out too: the 3's player leads
    assert of_type(events, "TrickStarted") == [{"leader": 0}]
    assert RULES.view(after, None)["waiting"] == [3]


def test_no_combination_player_left_the_next_clockwise_with_cards_leads() -> None:
    state = table([3], [9], [1, 1], [2, 2], leader=0, reserves=[[], [], [5], [6]])
    state, _ = act(state, 0, play(0, 1, "single", 3))
    state, _ = act(state, 1, play(0, 1, "single", 9))
    state, _ = act(state, 2, take(5, 0))
    after, events = act(state, 3, take(6, 0))
    assert of_type(events, "TrickStarted") == [{"leader": 2}], "clockwise from the winner"
    assert RULES.view(after, None)["waiting"] == [3]


def test_the_next_leader_is_counted_clockwise_from_the_winner_not_from_the_trick_s_leader() -> None:
    """Seat 2 wins and is out, as is the leader: seat 3 follows the winner, seat 1 the leader."""
    state = table([3], [1, 1], [9], [2, 2], leader=0, reserves=[[], [5], [], [6]])
    state, _ = act(state, 0, play(0, 1, "single", 3))
    state, _ = act(state, 1, take(5, 0))
    state, _ = act(state, 2, play(0, 1, "single", 9))
    after, events = act(state, 3, take(6, 0))
    assert of_type(events, "TrickWon") == [{"seat": 2, "reason": "highest", "draws": 0}]
    assert of_type(events, "TrickStarted") == [{"leader": 3}]
    assert RULES.view(after, None)["waiting"] == [1], "seat 3 leads, then seat 1"


# --- End of a hand -------------------------------------------------------------------------------


def test_players_out_of_cards_are_safe_for_the_hand() -> None:
    state = table([4], [5, 1], [6, 2], leader=0, reserves=[[], [], []])
    state, _ = act(state, 0, play(0, 1, "single", 4))
    state, _ = act(state, 1, play(0, 1, "single", 5))
    after, events = act(state, 2, play(0, 1, "single", 6))
    assert of_type(events, "TrickStarted") == [{"leader": 2}]
    assert RULES.view(after, None)["hand_sizes"] == [0, 1, 1]
    assert RULES.view(after, None)["waiting"] == [1], "seat 0 has no more turns"


def test_the_last_player_holding_cards_gives_up_a_chip_and_leads_the_next_hand() -> None:
    state = table([4], [1, 9], [12], leader=0, chips=[1, 2, 3])
    state, _ = act(state, 0, play(0, 1, "single", 4))
    state, _ = act(state, 1, play(1, 1, "single", 9))
    after, events = act(state, 2, play(0, 1, "single", 12))
    assert types(events)[:3] == ["CardsPlayed", "TrickWon", "HandLost"]
    assert of_type(events, "HandLost") == [{"seats": [1], "reason": "last-with-cards"}]
    assert after.chips == (1, 1, 3)
    (started,) = of_type(events, "HandStarted")
    assert started == {"hand": 2, "leader": 1, "draw_pile": 6}
    assert after.turn == after.leader == 1
    assert RULES.view(after, None)["hand_sizes"] == [10, 10, 10]
    assert RULES.view(after, None)["trick"] == []


def test_when_nobody_holds_cards_everyone_who_played_out_in_the_trick_gives_up_a_chip() -> None:
    """All of them held cards last, at once; the last to play out leads the next hand."""
    state = table([4], [9], [12, 12], leader=0, chips=[3, 3, 3])
    state, _ = act(state, 0, play(0, 1, "single", 4))
    state, _ = act(state, 1, play(0, 1, "single", 9))
    after, events = act(state, 2, play(0, 2, "pair", 12))
    assert of_type(events, "HandLost") == [{"seats": [0, 1, 2], "reason": "last-with-cards"}]
    assert after.chips == (2, 2, 2)
    assert of_type(events, "HandStarted")[0]["leader"] == 2


def test_several_who_play_out_at_once_without_chips_all_lose() -> None:
    state = table([4], [9], [12, 12], [], leader=0, chips=[0, 3, 0, 1])
    state, _ = act(state, 0, play(0, 1, "single", 4))
    state, _ = act(state, 1, play(0, 1, "single", 9))
    after, events = act(state, 2, play(0, 2, "pair", 12))
    assert of_type(events, "HandLost") == [{"seats": [0, 1, 2], "reason": "last-with-cards"}]
    result = RULES.result(after)
    assert result is not None
    assert result.winners == (1, 3)
    assert result.details == {"losers": [0, 2]}


def test_the_new_hand_reshuffles_all_54_cards() -> None:
    state = table([12, 2], [9, 1], [6], leader=1, reserves=[[1], [], []], chips=[3, 3, 3])
    after, events = act(state, 1, play(0, 1, "single", 9))
    assert of_type(events, "HandLost") == [{"seats": [2], "reason": "cannot-beat"}]
    assert types(events)[2:] == ["CardsDealt"] * 3 + ["HandStarted"]
    assert sum(after.unseen) == 54 - 3 * 12
    assert [len(row) for row in after.reserves] == [2, 2, 2]
    assert [len(cards) for cards in after.hands] == [10, 10, 10]
    assert after.trick == ()


def test_a_player_giving_up_the_last_chip_plays_on_with_none() -> None:
    state = table([12, 2], [9, 1], [6], leader=1, reserves=[[1], [], []], chips=[3, 3, 1])
    after, _ = act(state, 1, play(0, 1, "single", 9))
    assert after.chips == (3, 3, 0)
    assert RULES.result(after) is None
    assert RULES.to_act(after) == {2}
    assert RULES.view(after, None)["chips"] == [3, 3, 0]


def test_giving_up_a_chip_with_none_loses_and_everyone_else_wins() -> None:
    state = table([12, 2], [9, 1], [6], leader=1, reserves=[[1], [], []], chips=[0, 1, 0])
    after, events = act(state, 1, play(0, 1, "single", 9))
    assert types(events) == ["CardsPlayed", "HandLost"], "no new hand is dealt"
    result = RULES.result(after)
    assert result is not None
    assert result.winners == (0, 1)
    assert result.scores == (0, 1, 0)
    assert result.to_json() == {"winners": [0, 1], "scores": [0, 1, 0], "losers": [2]}
    assert RULES.to_act(after) == frozenset()
    assert RULES.legal_moves(after, 0) == []
    assert RULES.view(after, None)["phase"] == "over"
    assert RULES.view(after, None)["losers"] == [2]
    assert broken_rule(after, 0, play(0, 1, "single", 12)) == "turn-order"


def test_several_losers_at_once() -> None:
    state = table([1], [2], [3], [4], chips=[0, 2, 0, 1])
    after = RULES.evolve(state, Event("HandLost", {"seats": [0, 2, 3], "reason": "cannot-beat"}))
    result = RULES.result(after)
    assert result is not None
    assert result.winners == (1, 3)
    assert result.details == {"losers": [0, 2]}
    assert after.chips == (0, 2, 0, 0)


# --- Move format, turn order, views --------------------------------------------------------------

GARBAGE: list[object] = [
    None,
    7,
    "play",
    [],
    {},
    {"type": "play"},
    {"type": "fold", "at": 0},
    {"type": ["play"], "at": 0},
    {"type": "play", "at": 0, "count": 1, "kind": "single", "rank": 5, "x": 1},
    {"type": "play", "at": True, "count": 1, "kind": "single", "rank": 5},
    {"type": "play", "at": 0, "count": 4, "kind": "single", "rank": 5},
    {"type": "play", "at": 0, "count": 1, "kind": "quad", "rank": 5},
    {"type": "play", "at": 0, "count": 1, "kind": ["single"], "rank": 5},
    {"type": "play", "at": 0, "count": 1, "kind": "single", "rank": 13},
    {"type": "play", "at": 0, "count": 1, "kind": "single", "rank": 5.0},
    {"type": "play", "at": "0", "count": 1, "kind": "single", "rank": 5},
    {"type": "pass", "card": [5], "at": 0},
    {"type": "pass", "card": True, "at": 0},
    {"type": "stop", "at": None},
]


@pytest.mark.parametrize("garbage", GARBAGE, ids=repr)
def test_garbage_moves_are_refused_as_move_format(garbage: object) -> None:
    state = table([5, 5], [1], [2], reserves=[[], [3], []], trick=[(0, [4], "single", 4)])
    assert broken_rule(state, 1, garbage) == "move-format"


def test_out_of_turn_and_out_of_hand_positions() -> None:
    state = table([5, 6], [1], [2])
    assert broken_rule(state, 1, play(0, 1, "single", 1)) == "turn-order"
    assert RULES.legal_moves(state, 1) == []
    assert broken_rule(state, 0, play(2, 1, "single", 5)) == "hand-position"
    assert broken_rule(state, 0, play(-1, 1, "single", 6)) == "hand-position"
    assert broken_rule(state, 0, stop(0)) == "card-at-position"
    assert broken_rule(state, 0, insert(0)) == "insert-drawn-card"


def test_the_view_of_a_trick_in_progress() -> None:
    state = table([4, 4], ["X", 5, 6], [2, 1], reserves=[[1, 2], [3, 3], [7]])
    state, events = act(state, 0, play(0, 2, "pair", 4))
    state, events = act(state, 1, play(0, 2, "pair", 5))
    for seat in (0, 2, None):
        redacted = RULES.redact(events[0], seat)
        assert redacted == Event(
            "CardsPlayed", {"seat": 1, "at": 0, "cards": ["X", 5], "kind": "pair", "rank": 5}
        )
    view = RULES.view(state, 2)
    assert view == {
        "hand_number": 1,
        "chips": [3, 3, 3],
        "hand_sizes": [0, 1, 2],
        "reserves": [[1, 2], [3, 3], [7]],
        "draw_pile": 6,
        "phase": "follow",
        "leader": 0,
        "turn": 2,
        "waiting": [],
        "trick": [
            {"seat": 0, "cards": [4, 4], "kind": "pair", "rank": 4},
            {"seat": 1, "cards": ["X", 5], "kind": "pair", "rank": 5},
        ],
        "to_beat": {"kind": "pair", "rank": 5},
        "trick_winner": None,
        "draws_left": 0,
        "losers": [],
        "out": [],
        "known": [[], [None], [None, None]],
        "hand": [2, 1],
    }
    json.dumps(view)


def test_conceal_redraws_what_a_seat_cannot_see() -> None:
    _, state = dealt(4, SEED)
    for seat in (0, 3, None):
        other = RULES.conceal(state, seat, Random(1))
        assert other != state
        assert RULES.view(other, seat) == RULES.view(state, seat)
        if seat is not None:
            assert other.hands[seat] == state.hands[seat]
        assert other.reserves == state.reserves


# --- What everyone saw, and the states a seat could be in ---------------------------------------


def test_the_view_keeps_the_cards_out_of_play_and_the_reserve_cards_taken() -> None:
    state = table([4, 8, 8], [5, 1], [6, 2], reserves=[[], [3, 9], [12]])
    state, _ = act(state, 0, play(0, 1, "single", 4))
    state, _ = act(state, 1, take(9, 0))
    view = RULES.view(state, 0)
    assert view["out"] == [], "the trick's cards are still in the middle"
    assert view["known"] == [[None, None], [9, None, None], [None, None]]
    assert RULES.view(state, 1)["known"] == view["known"]
    state, _ = act(state, 2, take(12, 2))
    assert RULES.view(state, None)["out"] == [4]
    assert RULES.view(state, None)["known"] == [[None, None], [9, None, None], [None, None, 12]]
    state, _ = act(state, 0, play(0, 1, "single", 8))
    state, _ = act(state, 1, play(0, 1, "single", 9))
    state, _ = act(state, 2, play(2, 1, "single", 12))
    view = RULES.view(state, None)
    assert view["out"] == [4, 8, 9, 12]
    assert view["known"] == [[None], [None, None], [None, None]], "the reserve cards were played"


def test_positions_are_public_so_a_known_card_stays_known_until_played() -> None:
    # Seat 1 takes its reserve 2 in at the front, then plays the 2 it held at position 1:
    # everyone saw which position it played from, so the reserve 2 is still known.
    state = table([3], [2, 9], [6, 7], reserves=[[], [2], [1]])
    state, _ = act(state, 0, play(0, 1, "single", 3))
    state, _ = act(state, 1, take(2, 0))
    state, _ = act(state, 2, take(1, 0))
    assert RULES.view(state, None)["known"] == [[], [2, None, None], [1, None, None]]
    assert state.turn == 1, "seat 0 won with its last card: the next seat clockwise leads"
    state, events = act(state, 1, play(1, 1, "single", 2))
    assert hand(state, 1) == [2, 9]
    assert RULES.view(state, 2)["known"] == [[], [2, None], [1, None, None]]
    assert RULES.redact(events[0], 2) == events[0], "a play's position is public"


def test_where_a_drawn_card_goes_in_is_public_not_the_card() -> None:
    state = table([5, "DRAW", 4], [1, 2], [3, 6], reserves=[[], [9], [9]])
    state, _ = act(state, 0, draw(1))
    state, _ = act(state, 1, take(9, 2))
    state, events = act(state, 2, take(9, 0))
    assert state.turn == 0, "the leader won the trick of DRAW cards only"
    state, events = act(state, 0, insert(1))
    (inserted,) = [event for event in events if event.type == "CardInserted"]
    assert RULES.redact(inserted, 1) == Event("CardInserted", {"seat": 0, "at": 1})
    assert RULES.view(state, 1)["known"][0] == [None, None, None]
    assert RULES.view(state, None)["known"][1] == [None, None, 9]


def test_a_new_hand_forgets_the_cards_out_and_taken() -> None:
    state = table([12, 2], [9, 1, 4], [6], leader=1, reserves=[[1], [], [2]])
    state, _ = act(state, 1, play(2, 1, "single", 4))
    state, _ = act(state, 2, take(2, 0))
    state, _ = act(state, 0, take(1, 0))
    assert RULES.view(state, None)["out"] == [4]
    assert RULES.view(state, None)["known"] == [[1, None, None], [None, None], [2, None]]
    state, events = act(state, 1, play(0, 1, "single", 9))
    assert of_type(events, "HandLost") == [{"seats": [2], "reason": "cannot-beat"}]
    assert RULES.view(state, None)["out"] == []
    assert all(card is None for row in RULES.view(state, None)["known"] for card in row)


def cards_of(counts: Sequence[int]) -> Counter[int]:
    return Counter({card: count for card, count in enumerate(counts) if count})


def test_samples_draw_the_hidden_cards_from_those_nobody_has_seen_played() -> None:
    _, state = dealt(4, SEED)
    rng = Random(SEED)
    for _ in bounded("the game did not end"):
        if sum(state.out) >= 8 and any(map(any, state.known)) and state.drawn is None:
            break
        seat = state.turn
        assert seat is not None
        state = fold(
            state, RULES.decide(state, seat, rng.choice(RULES.legal_moves(state, seat)), rng)
        )
    view = RULES.view(state, 0)
    options = RULES.info.resolve_options(4, {})
    visible = Counter(state.hands[0])
    visible.update(card for row in state.reserves for card in row)
    visible.update(card for play in state.trick for card in play.cards)
    visible.update(cards_of(state.out))
    hidden = cards_of(DECK_COUNTS) - visible
    seen_hands = set()
    for seed in range(40):
        sample = RULES.sample(4, options, view, 0, Random(seed))
        assert RULES.view(sample, 0) == view
        dealt_hidden = cards_of(sample.unseen)
        for seat in (1, 2, 3):
            dealt_hidden.update(sample.hands[seat])
        assert dealt_hidden == hidden, "exactly the cards the view leaves unaccounted for"
        for seat in (1, 2, 3):
            for at, card in enumerate(state.known[seat]):
                if card:
                    assert sample.hands[seat][at] == card, "a known card stays where it is"
        seen_hands.add(sample.hands[1])
    assert len(seen_hands) > 30


def test_a_sample_draws_the_card_another_seat_is_inserting_but_keeps_ones_own() -> None:
    state = table(["DRAW", 3], [5], [6], reserves=[[], [1], [2]])
    state, _ = act(state, 0, draw(0))
    state, _ = act(state, 1, take(1, 0))
    state, _ = act(state, 2, take(2, 0))
    assert state.drawn is not None
    options = RULES.info.resolve_options(3, {})
    own = RULES.sample(3, options, RULES.view(state, 0), 0, Random(1))
    assert own.drawn == state.drawn
    assert own.draws_left == state.draws_left
    others = {
        RULES.sample(3, options, RULES.view(state, 1), 1, Random(seed)).drawn for seed in range(30)
    }
    assert None not in others
    assert len(others) > 3
    assert RULES.legal_moves(own, 0) == RULES.legal_moves(state, 0)


# --- How a seat stands: evaluate ----------------------------------------------------------------


def test_a_finished_game_is_evaluated_as_its_result() -> None:
    state = table([12, 2], [9, 1], [6], leader=1, reserves=[[1], [], []], chips=[0, 1, 0])
    after, _ = act(state, 1, play(0, 1, "single", 9))
    result = RULES.result(after)
    assert result is not None
    assert RULES.evaluate(after) == result.shares() == (0.5, 0.5, 0.0)


def test_a_game_everyone_lost_is_evaluated_evenly() -> None:
    """All play out in one trick with no chips left: no winner to share the win."""
    state = table([4], [9], [12, 12], chips=[0, 0, 0])
    state, _ = act(state, 0, play(0, 1, "single", 4))
    state, _ = act(state, 1, play(0, 1, "single", 9))
    after, _ = act(state, 2, play(0, 2, "pair", 12))
    result = RULES.result(after)
    assert result is not None
    assert result.winners == ()
    assert RULES.evaluate(after) == pytest.approx((1 / 3,) * 3) == result.shares()


def test_the_seat_nearest_an_empty_hand_has_the_largest_share() -> None:
    state = table(
        [12, 11],
        [1, 3, 5, 7, 9, 11, 2, 4, 6],
        [4, 4, 8, 8, 10],
        reserves=[[], [], [6, 6]],
        chips=[1, 1, 1],
        leader=1,
    )
    shares = RULES.evaluate(state)
    assert sum(shares) == pytest.approx(1)
    assert shares[0] > shares[2] > shares[1]
    assert shares[1] < 0.2


def test_chips_weigh_more_as_the_game_nears_its_end() -> None:
    hands = ([1, 5, 9], [2, 6, 10], [3, 7, 11])
    even = RULES.evaluate(table(*hands, chips=[3, 3, 3]))
    assert even[0] > even[1] == pytest.approx(even[2]), "leading is an edge"
    early = RULES.evaluate(table(*hands, chips=[3, 3, 2]))
    late = RULES.evaluate(table(*hands, chips=[1, 1, 0]))
    assert early[2] < early[1]
    assert late[2] < early[2], "one chip behind costs more with few chips left"
    assert late[2] < 0.5 * late[1]


def test_the_same_gap_between_hands_decides_more_as_they_empty() -> None:
    """Seat 1 is one single card behind the others, early and late in a hand."""
    early = RULES.evaluate(
        table([1, 5, 9, 1, 5, 9, 1], [2, 6, 10, 2, 6, 10, 2, 6], [3, 7, 11] * 2 + [3])
    )
    late = RULES.evaluate(table([1], [2, 6], [3]))
    assert late[2] - late[1] > early[2] - early[1] > 0


# --- Whole games with every player count and first seat ------------------------------------------


def new_game(seed: int) -> tuple[int, Random, State]:
    """A game set up from `seed`, for 3, 4 or 5 players in turn: its players, rng and state."""
    players = 3 + seed % 3
    resolved = RULES.info.resolve_options(players, {})
    rng = Random(seed)
    return (
        players,
        rng,
        fold(RULES.initial_state(players, resolved), RULES.setup(players, resolved, rng)),
    )


def test_a_hand_is_lost_at_once_exactly_when_the_seat_would_have_no_move() -> None:
    stuck = 0
    for seed in range(30):
        _, rng, state = new_game(seed)
        for _ in bounded("the game did not end"):
            if RULES.result(state) is not None:
                break
            seat = rng.choice(sorted(RULES.to_act(state)))
            events = RULES.decide(state, seat, rng.choice(RULES.legal_moves(state, seat)), rng)
            for index, event in enumerate(events):
                state = RULES.evolve(state, event)
                if event.type not in ("CardsPlayed", "ReserveTaken") or state.turn is None:
                    continue
                # The turn passed to a follower: it moves, or it has no move and loses the hand.
                following = events[index + 1 : index + 2]
                moves = RULES.legal_moves(state, state.turn)
                if following:
                    assert following[0].type == "HandLost"
                    assert following[0].data == {"seats": [state.turn], "reason": "cannot-beat"}
                    assert moves == []
                    stuck += 1
                else:
                    assert moves
    assert stuck > 10


def test_a_move_goes_unchecked_only_if_legal_moves_lists_that_very_object() -> None:
    """`step` skips its checks for a move `_offered` finds in the tables `legal_moves` reads: it
    must find exactly the moves the seat's list holds, by identity (`rules.listed`), among every
    move listed for any seat now or at the step before, and never a copy of one."""
    offered = 0
    for seed in range(12):
        players, rng, state = new_game(seed)
        before: list[JSON] = []
        for _ in bounded("the game did not end"):
            if RULES.result(state) is not None:
                break
            lists = [RULES.legal_moves(state, seat) for seat in range(players)]
            candidates = [*before, *(move for moves in lists for move in moves)]
            for seat, moves in enumerate(lists):
                for move in candidates:
                    assert _offered(state, seat, move) == listed(move, moves), (seat, move)
                    assert not _offered(state, seat, dict(move))
                offered += len(moves)
            seat = rng.choice(sorted(RULES.to_act(state)))
            before = lists[seat]
            state = fold(state, RULES.decide(state, seat, rng.choice(before), rng))
    assert offered > 1000


@pytest.mark.parametrize("players", [3, 4, 5])
@pytest.mark.parametrize("first_seat", [None, 0, 2])
def test_seeded_games_play_to_the_end(players: int, first_seat: int | None) -> None:
    for seed in range(3):
        state, events = playout(players, seed, {"first_seat": first_seat})
        result = RULES.result(state)
        assert result is not None
        assert 1 <= len(result.details["losers"]) < players
        assert set(result.winners) | set(result.details["losers"]) == set(range(players))
        started = [e.data for e in events if e.type == "HandStarted"]
        if first_seat is not None:
            assert started[0]["leader"] == first_seat
        lost = [e.data["seats"] for e in events if e.type == "HandLost"]
        assert len(lost) == len(started)
        assert [s["leader"] for s in started[1:]] == [seats[-1] for seats in lost[:-1]]
        assert state.chips == tuple(
            max(0, (2 if players == 5 else 3) - sum(seat in seats for seats in lost))
            for seat in range(players)
        )
        # The fold of the events after a JSON round trip is the live state.
        stored = json.loads(json.dumps([[e.type, e.data] for e in events]))
        options = RULES.info.resolve_options(players, {"first_seat": first_seat})
        refolded = fold(RULES.initial_state(players, options), (Event(t, d) for t, d in stored))
        assert refolded == state


def test_every_view_matches_the_openapi_state_schema() -> None:
    spec = yaml.safe_load((Path(__file__).parents[2] / "openapi.yaml").read_text())
    validator = jsonschema_rs.validator_for(
        {"$ref": "urn:spieltisch:openapi#/components/schemas/KrassKariertState"},
        registry=jsonschema_rs.Registry([("urn:spieltisch:openapi", spec)]),
    )
    phases = set()
    for players in (3, 4, 5):
        resolved = RULES.info.resolve_options(players, {})
        rng = Random(players)
        state = fold(RULES.initial_state(players, resolved), RULES.setup(players, resolved, rng))
        for _ in bounded("the game did not end"):
            for seat in (*range(players), None):
                view = RULES.view(state, seat)
                errors = [error.message for error in validator.iter_errors(view)]
                assert not errors, (errors, view)
                phases.add(view["phase"])
            if RULES.result(state) is not None:
                break
            seat = rng.choice(sorted(RULES.to_act(state)))
            move = rng.choice(RULES.legal_moves(state, seat))
            for event in RULES.decide(state, seat, move, rng):
                state = RULES.evolve(state, event)
                between = RULES.view(state, None)
                assert not list(validator.iter_errors(between)), between
                phases.add(between["phase"])
    assert phases == {"lead", "follow", "insert", "over", "resolving"}
