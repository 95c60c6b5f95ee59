"""The Krass Kariert heuristic bot: always a legal move, and each rule of thumb at work on a
hand-built position (see `tests/games/test_krasskariert.py` for how positions are written)."""

from __future__ import annotations

from dataclasses import replace
from random import Random
from typing import Any

import pytest

from domain.bots import RandomBot, Turn
from domain.dice import rng_at
from domain.games.krasskariert import CODE, DECK_COUNTS, RULES, State, hand_layout
from domain.heuristics import krasskariert as heuristic
from domain.rules import JSON
from tests.bounds import bounded
from tests.games.test_krasskariert import draw, play, stop, table, take


def turn_of(state: State, seat: int) -> Turn:
    players = state.players
    options = RULES.info.resolve_options(players, {})
    return Turn(
        RULES, seat, players, options, RULES.view(state, seat), RULES.legal_moves(state, seat)
    )


def decided_by(state: State, seat: int) -> tuple[str, JSON]:
    """The rule of thumb that picks `seat`'s move, and the move; it must be what `choose` plays."""
    turn = turn_of(state, seat)
    spot = heuristic.Spot.of(turn)
    for rule in heuristic.RULES_OF_THUMB:
        move = rule(spot, Random(0))
        if move is not None:
            assert heuristic.choose(turn, Random(0)) == move
            return rule.__name__, move
    raise AssertionError("no rule of thumb picked a move")


@pytest.mark.parametrize("players", [3, 4, 5])
def test_every_seat_is_always_offered_a_legal_move(players: int) -> None:
    options = RULES.info.resolve_options(players, {})
    asked = set()
    for seed in range(6):
        rng = Random(seed)
        state = RULES.initial_state(players, options)
        for event in RULES.setup(players, options, rng):
            state = RULES.evolve(state, event)
        for _ in bounded("the game did not end"):
            if RULES.result(state) is not None:
                break
            seat = state.turn
            assert seat is not None
            turn = turn_of(state, seat)
            move = heuristic.choose(turn, Random(seed))
            assert move in turn.moves
            asked.add((seat, turn.view["phase"]))
            # Random moves reach positions the heuristic would steer clear of.
            chosen = rng.choice([move, rng.choice(turn.moves)])
            for event in RULES.decide(state, seat, chosen, rng):
                state = RULES.evolve(state, event)
    assert {seat for seat, _ in asked} == set(range(players))
    assert {phase for _, phase in asked} == {"lead", "follow", "insert"}


def test_the_heuristic_outlasts_random_players() -> None:
    """A smoke check of strength; the real measurement is hundreds of games by hand."""
    random_bot = RandomBot()
    won = 0
    for seed in range(9):
        players, seat = 3 + seed % 3, seed % 2
        options = RULES.info.resolve_options(players, {})
        chance = b"heuristic" + seed.to_bytes(4, "big")
        state = RULES.initial_state(players, options)
        for event in RULES.setup(players, options, rng_at(chance, (), 0)):
            state = RULES.evolve(state, event)
        rng = Random(seed)
        for step in bounded("the game did not end"):
            if (result := RULES.result(state)) is not None:
                break
            acting = state.turn
            assert acting is not None
            policy = heuristic.choose if acting == seat else random_bot.choose
            move = policy(turn_of(state, acting), rng)
            for event in RULES.decide(state, acting, move, rng_at(chance, (), step + 1)):
                state = RULES.evolve(state, event)
        assert result is not None
        won += seat in result.winners
    # A random player wins about a third of these games; one loss in nine is the cards.
    assert won >= 8


def test_fit_the_drawn_card_beside_its_twin() -> None:
    state = replace(table([2, 9, 5], [1], [3]), drawn=CODE[9])
    rule, move = decided_by(state, 0)
    assert rule == "fit_the_drawn_card"
    assert move["type"] == "insert"
    assert move["at"] in (1, 2)


def test_play_out_when_one_play_empties_the_hand() -> None:
    assert decided_by(table([4, 5], [1], [3]), 0) == ("play_out", play(0, 2, "2-run", 5))


def test_lead_the_weakest_of_the_plays_that_leave_fewest() -> None:
    """Single 1, pair 9 and single 12 each leave two plays; the 1 is the weakest."""
    assert decided_by(table([1, 9, 9, 12], [1], [3]), 0) == (
        "lead_the_weakest",
        play(0, 1, "single", 1),
    )


def test_dodge_the_draw_as_last_to_act() -> None:
    trick: Any = [(0, ["DRAW"], "draw", None), (1, [5], "single", 5)]
    state = table([8], [5, 2], [9, 3], reserves=[[], [], [1]], trick=trick)
    rule, move = decided_by(state, 2)
    assert rule == "dodge_the_draw"
    assert move["type"] == "pass", "the 9 would win the trick and draw three cards"
    with_draw = table([8], [5, 2], ["DRAW", 9], reserves=[[], [], [1]], trick=trick)
    assert decided_by(with_draw, 2) == ("dodge_the_draw", draw(0))


def test_beat_when_it_shortens_with_the_weakest() -> None:
    state = table([5, 1], [3, 7, 9], [2], reserves=[[], [2], []], trick=[(0, [5], "single", 5)])
    assert decided_by(state, 1) == ("beat_when_it_shortens", play(1, 1, "single", 7))


def test_special_before_reserve() -> None:
    led: Any = [(0, [10], "single", 10)]
    with_draw = table([10, 1], [3, "DRAW", 5], [2], reserves=[[], [1], []], trick=led)
    assert decided_by(with_draw, 1) == ("special_before_reserve", draw(1))
    with_stop = table([10, 1], [3, "STOP", 5], [2], reserves=[[], [1], []], trick=led)
    assert decided_by(with_stop, 1) == ("special_before_reserve", stop(1))


def test_take_the_fitting_reserve_where_it_makes_a_run() -> None:
    state = table([10, 1], [3, 5], [2], reserves=[[], [12, 4], []], trick=[(0, [10], "single", 10)])
    assert decided_by(state, 1) == ("take_the_fitting_reserve", take(4, 1))


def test_beat_at_any_cost_without_a_reserve() -> None:
    """The pair of 7s splits 8-7 and 7-6, but with no reserve card it is that or lose."""
    state = table([5, 5, 1], [8, 7, 7, 6], [2], trick=[(0, [5, 5], "pair", 5)])
    assert decided_by(state, 1) == ("beat_at_any_cost", play(1, 2, "pair", 7))
    with_reserve = table(
        [5, 5, 1], [8, 7, 7, 6], [2], reserves=[[], [1], []], trick=[(0, [5, 5], "pair", 5)]
    )
    assert decided_by(with_reserve, 1)[0] == "take_the_fitting_reserve"


@pytest.mark.parametrize("seed", range(4))
def test_a_hands_layout_tells_the_shape_a_move_leaves_as_the_whole_new_hand_would(
    seed: int,
) -> None:
    """`Layout.shape` adds up the two sides of the place a move changes; `hand_layout` passes
    over the whole new hand. Random hands (from the deck, and crowded with a few ranks, X, DRAW
    and STOP so that combinations cross the place), every take-out and every put-in."""
    rng = Random(seed)
    deck = [code for code, count in enumerate(DECK_COUNTS) for _ in range(count)]
    few = [1, 2, 3, 4, CODE["X"], CODE["DRAW"], CODE["STOP"]]
    for _ in range(500):
        size = rng.randrange(19)
        hand = tuple(rng.sample(deck, size) if rng.random() < 0.5 else rng.choices(few, k=size))
        layout = heuristic.layout_of(hand)
        plays, joined = hand_layout(hand)
        assert heuristic.hand_shape(hand) == (plays, -joined)
        for at in range(size):
            for count in (1, 2, 3)[: size - at]:
                left = hand_layout(hand[:at] + hand[at + count :])
                assert layout.without(at, count) == (left[0], -left[1]), (hand, at, count)
        for at in range(size + 1):
            card = rng.choice(deck)
            grown = hand_layout((*hand[:at], card, *hand[at:]))
            assert layout.shape(at, at, (card,)) == (grown[0], -grown[1]), (hand, at, card)
