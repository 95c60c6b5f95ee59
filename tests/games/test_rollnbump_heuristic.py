"""The Roll'n Bump heuristic bot: always legal, and each rule of thumb acting on a hand-built
table (positions from `test_rollnbump.position`, seen through the seat's view)."""

from __future__ import annotations

from random import Random
from typing import Any

import pytest

from domain.bots import Turn
from domain.game import Heuristic
from domain.games.rollnbump import KINDS, PAIR, QUAD, RULES, State
from domain.heuristics.rollnbump import (
    bump_chance,
    choose,
    claim_safety,
    hits_of_a_kind,
    hits_of_a_run,
    joker_colour,
    plan_turn,
    planned_keep,
    read_table,
    shortlist,
)
from tests.games.test_rollnbump import END, claim, dealt, fold, position, roll, spot

OPTIONS = [{}, {"card_points": "single=5,pair=0,triple=7,quad=1,run-3=9,joker=40"}]


def turn_of(state: State, seat: int = 0, **options: Any) -> Turn:
    resolved = RULES.info.resolve_options(state.players, options)
    moves = RULES.legal_moves(state, seat)
    return Turn(RULES, seat, state.players, resolved, RULES.view(state, seat), moves)


def chosen(state: State, seat: int = 0) -> Any:
    return choose(turn_of(state, seat), Random(1))


@pytest.mark.parametrize("policy", [choose, plan_turn], ids=["heuristic", "planner"])
@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_always_a_legal_move(players: int, options: dict[str, Any], policy: Heuristic) -> None:
    for seed in range(3):
        _, state = dealt(players, seed, **options)
        rng = Random(seed)
        while RULES.result(state) is None:
            (seat,) = RULES.to_act(state)
            turn = turn_of(state, seat, **options)
            assert policy(turn, rng) in turn.moves
            # Random moves reach the odd positions a heuristic game would avoid.
            move = rng.choice(turn.moves)
            state = fold(state, RULES.decide(state, seat, move, rng))


def test_whole_games_between_heuristics_end() -> None:
    _, state = dealt(3, 7)
    rng = Random(7)
    while RULES.result(state) is None:
        (seat,) = RULES.to_act(state)
        state = fold(state, RULES.decide(state, seat, choose(turn_of(state, seat), rng), rng))


# --- what cards are worth ------------------------------------------------------------------------


def test_collects_the_colour_it_already_holds() -> None:
    state = position(
        ["red-pair", "blue-pair"],
        dice=[4, 4, 1],
        rolls=3,
        won=[["blue-quad", "blue-run-3"], [], []],
    )
    assert chosen(state) == claim(1, 4, 4)


def test_bumps_an_opponent_rather_than_take_a_free_card() -> None:
    state = position(["red-quad", "blue-quad"], dice=[5] * 4, rolls=3, claims={1: (1, [2] * 4)})
    assert chosen(state) == claim(1, 5, 5, 5, 5)


def test_joker_joins_the_colour_held_most_short_of_twelve() -> None:
    assert joker_colour([3, 5, 1, 0]) == 1
    assert joker_colour([3, 12, 1, 0]) == 0


def test_five_of_a_kind_takes_the_joker() -> None:
    state = position(
        ["red-quad", "blue-single-2"], dice=[2] * 5, rolls=1, won=[[], [], ["black-pair"]]
    )
    assert chosen(state) == {"type": "claim_joker", "dice": [2] * 5, "colour": "red"}


# --- how likely dice do what is needed -----------------------------------------------------------


def test_chances_of_completing_a_pattern() -> None:
    assert hits_of_a_kind(1, 1, 1) == pytest.approx(1 / 6)
    assert hits_of_a_kind(1, 1, 2) == pytest.approx(1 - (5 / 6) ** 2)
    assert hits_of_a_run(2, 2, 1) == pytest.approx(2 / 36)
    assert hits_of_a_kind(3, 2, 3) == 0


def test_strong_claims_are_bumped_less() -> None:
    pair = PAIR
    single_3 = KINDS.index("single-3")
    assert bump_chance(pair, 2) > bump_chance(pair, 8) > bump_chance(pair, 10) > 0
    assert bump_chance(pair, 12) == 0
    assert bump_chance(single_3, 1) > bump_chance(single_3, 3) > 0 == bump_chance(single_3, 5)
    assert claim_safety(pair, 8, 1) > claim_safety(pair, 8, 4)


def test_claims_with_the_higher_pair() -> None:
    state = position(["red-pair"], dice=[2, 2, 5, 5], rolls=3, white_holder=1)
    assert chosen(state) == claim(0, 5, 5)


def test_puts_every_matching_die_on_a_single_card() -> None:
    state = position(["red-single-3"], dice=[3, 3, 3, 6], rolls=3, white_holder=1)
    assert chosen(state) == claim(0, 3, 3, 3)


# --- rolling -------------------------------------------------------------------------------------


def test_keeps_the_dice_towards_the_best_target() -> None:
    state = position(["red-triple"], dice=[1, 2, 3, 6, 6], rolls=1)
    assert chosen(state) == roll(6, 6)


def test_rolls_on_for_more_when_a_miss_still_claims_as_much() -> None:
    # Keeping the triple, the two other dice may still make five sixes: the joker.
    state = position(["red-triple"], dice=[2, 3, 6, 6, 6], rolls=1)
    assert chosen(state) == roll(6, 6, 6)


def test_stops_rolling_once_the_dice_claim_the_best_there_is() -> None:
    state = position(["red-triple"], dice=[2, 3, 6, 6, 6], rolls=1, joker=(1, "blue"))
    assert chosen(state) == claim(0, 6, 6, 6)


def test_the_spot_is_no_reason_to_stop_rolling() -> None:
    # Junk dice would sit on the white-die spot, but the pair is worth rolling for.
    state = position(["red-pair"], dice=[1, 2, 3, 4, 6], rolls=1)
    assert chosen(state)["type"] == "roll"


# --- placing the dice ----------------------------------------------------------------------------


def test_leftover_dice_go_on_the_white_die_spot() -> None:
    state = position(["red-pair"], dice=[1, 3], claims={0: (0, [5, 5])}, claiming=True)
    assert chosen(state) == spot(1, 3)


def test_ends_the_turn_with_nothing_worth_claiming() -> None:
    state = position(["red-pair"], dice=[1, 3], rolls=3, white_spot=(1, [6, 6]))
    assert chosen(state) == END


def test_spends_the_white_die_when_it_completes_a_pattern() -> None:
    state = position(["red-quad"], dice=[1, 6, 6, 6], rolls=3, white_holder=0, white_value=6)
    assert chosen(state) == {"type": "use_white_die", "die": 1}


def test_keeps_the_white_die_when_it_adds_nothing() -> None:
    state = position(["red-pair"], dice=[5, 5, 6], rolls=3, white_holder=0, white_value=1)
    assert chosen(state) == claim(0, 5, 5)


# --- planning every roll of the turn -------------------------------------------------------------


def test_the_planner_weighs_every_roll_of_the_last_re_roll() -> None:
    # Only a quad is worth anything (the joker and the white die are gone): keep the three
    # sixes, and two dice rolled once more make the fourth with a chance of 11 / 36.
    state = position(["red-quad"], dice=[1, 2, 6, 6, 6], rolls=2, joker=(1, "blue"), white_holder=1)
    quad = 8 * claim_safety(QUAD, 24, opponents=2)
    promised, keep = planned_keep(read_table(turn_of(state)))
    assert keep == (6, 6, 6)
    assert promised == pytest.approx(11 / 36 * quad)


def test_the_planner_keeps_dice_that_serve_two_cards() -> None:
    # The heuristic aims its last roll at a pair of sixes; keeping 3 4 5 6 and rolling the
    # spare five makes a pair with any of 3 to 6 and the run of five with a 2.
    state = position(
        ["blue-run-5", "red-pair"], dice=[3, 4, 5, 5, 6], rolls=2, joker=(1, "blue"), white_holder=1
    )
    assert chosen(state) == roll(6)
    assert plan_turn(turn_of(state), Random(1)) == roll(3, 4, 5, 6)


def test_the_planner_stops_when_no_roll_promises_more() -> None:
    # The sixes already make the strongest triple, and nothing else is worth a die.
    state = position(
        ["red-triple"], dice=[2, 3, 6, 6, 6], rolls=2, joker=(1, "blue"), white_holder=1
    )
    assert plan_turn(turn_of(state), Random(1)) == claim(0, 6, 6, 6)


# --- what the hard level compares ----------------------------------------------------------------


def test_the_shortlist_leaves_re_rolls_to_the_planner() -> None:
    # The planner re-rolls towards the run of five: paired playouts get nothing else to compare.
    state = position(
        ["blue-run-5", "red-pair"], dice=[3, 4, 5, 5, 6], rolls=2, joker=(1, "blue"), white_holder=1
    )
    assert shortlist(turn_of(state), Random(1)) == [roll(3, 4, 5, 6)]


def test_the_shortlist_weighs_every_claim_but_no_re_roll_once_the_planner_stops() -> None:
    state = position(
        ["red-triple"], dice=[2, 3, 6, 6, 6], rolls=2, joker=(1, "blue"), white_holder=1
    )
    turn = turn_of(state)
    moves = shortlist(turn, Random(1))
    assert moves[0] == claim(0, 6, 6, 6)
    others = [move for move in turn.moves if move["type"] != "roll"]
    assert sorted(map(repr, moves)) == sorted(map(repr, others))
    assert any(move["type"] == "roll" for move in turn.moves)
