"""The Krumme10 heuristic bot: always a legal move, and each rule of thumb at work on a hand-built
position (positions and move shorthands from `test_krumme10`)."""

from __future__ import annotations

from random import Random

import pytest

from domain.bots import Turn
from domain.dice import rng_at
from domain.games.krumme10 import RULES, State
from domain.heuristics.krumme10 import Table, choose, reply_value
from domain.rules import JSON
from tests.bounds import bounded
from tests.games.test_krumme10 import (
    PASS,
    P,
    act,
    card,
    direction,
    foul_score,
    foul_table,
    play,
    position,
    score,
    shown,
    steal,
)

OPTION_SETS: list[tuple[int, dict[str, JSON]]] = [
    (2, {}),
    (3, {"variant": "too_short"}),
    (4, {"teams": True}),
    (5, {"variant": "showdown", "pink_fours": 18}),
    (6, {"teams": True, "variant": "showdown"}),
]


def turn(state: State, seat: int) -> Turn:
    players = state.players
    options = RULES.info.resolve_options(players, {"teams": state.teams is not None})
    moves = RULES.legal_moves(state, seat)
    return Turn(RULES, seat, players, options, RULES.view(state, seat), moves)


def chosen(state: State, seat: int = 0) -> JSON:
    return choose(turn(state, seat), Random(7))


def all_chosen(state: State, seat: int = 0) -> list[JSON]:
    """The moves chosen with different tie-breaks."""
    return [choose(turn(state, seat), Random(seed)) for seed in range(12)]


@pytest.mark.parametrize(("players", "given"), OPTION_SETS)
def test_the_heuristic_always_chooses_a_legal_move(players: int, given: dict[str, JSON]) -> None:
    """Random games, the heuristic asked in every seat at every step."""
    options = RULES.info.resolve_options(players, given)
    asked = 0
    for seed in range(6):
        chance = b"heuristic" + seed.to_bytes(4, "big")
        state = RULES.initial_state(players, options)
        for event in RULES.setup(players, options, rng_at(chance, (), 0)):
            state = RULES.evolve(state, event)
        rng = Random(seed)
        for step in bounded("the game did not end"):
            if RULES.result(state) is not None:
                break
            seat = rng.choice(sorted(RULES.to_act(state)))
            moves = RULES.legal_moves(state, seat)
            view = RULES.view(state, seat)
            assert choose(Turn(RULES, seat, players, options, view, moves), rng) in moves
            asked += 1
            events = RULES.decide(state, seat, rng.choice(moves), rng_at(chance, (), step + 1))
            for event in events:
                state = RULES.evolve(state, event)
    assert asked > 100


def test_hits_the_target_with_a_card_that_lands_exactly() -> None:
    state = position(
        [card(1, 2, 3), card(2, 3, 4), card(3, 5, 0)],
        [card(4, 3, 2)],
        display=[shown(20, 5, 0), shown(21, 2, 1)],
    )
    assert chosen(state) == play(2)


def test_never_overshoots_while_a_safe_card_is_left() -> None:
    """At 8, the 5 and the 3 face up overshoot; the 0, or a flip, does not."""
    state = position(
        [card(1, 5, 4), card(2, 3, 2), card(3, 0, 1)],
        [card(4, 3, 2)],
        display=[shown(20, 5, 0), shown(21, 3, 2)],
    )
    assert all(move not in (play(1), play(2)) for move in all_chosen(state))


def test_leaves_the_next_player_no_exact_hit() -> None:
    """From 3, a 2 leaves 5 for the next player's 5; nothing else lets them hit."""
    state = position(
        [card(1, 2, 1), card(2, 0, 1), card(3, 3, 2)],
        [card(4, 5, 0), card(5, 5, 4), card(6, 4, 5)],
        display=[shown(20, 3, 2)],
    )
    assert play(1) in RULES.legal_moves(state, 0)
    assert play(1) not in all_chosen(state)


def test_a_display_the_next_player_can_only_overshoot_is_worth_something() -> None:
    """At 9, a 3 or a 2 face up overshoots: only a flip may save the next player."""
    trap = position(
        [card(1, 1, 2)],
        [card(4, 3, 2), card(5, 3, 4), card(6, 2, 3)],
        display=[shown(20, 5, 0), shown(21, 3, 2)],
    )
    table = Table.of(turn(trap, 0))
    assert reply_value(table, 9, 10, 0, 1) > 0
    assert reply_value(table, 7, 10, 0, 1) < 0, "a 3 hits 10 from 7"
    assert reply_value(table, 6, 10, 0, 1) == 0


def test_gambles_on_a_flip_that_may_hit_and_cannot_overshoot() -> None:
    """At 7, no face lands on 10; the 2 flipped shows a 3 (exact) or a 1 (safe)."""
    state = position(
        [card(1, 2, 3), card(2, 5, 0), card(3, 5, 4)],
        [card(4, 0, 1), card(5, 0, 5), card(6, 0, 1)],
        display=[shown(20, 5, 0), shown(21, 2, 1)],
    )
    assert chosen(state) == play(1, flip=True)


def test_flips_a_scored_card_when_its_back_is_worth_more() -> None:
    state = position(
        [card(1, 1, 0), card(2, 3, 2)],
        [card(4, 5, 0), card(5, 3, 2)],
        display=[shown(20, 5, 4), shown(21, 2, 1), shown(22, 2, 3)],
    )
    on_target, _ = act(state, 0, play(1))
    stolen_0, _ = act(on_target, 0, steal(4))
    assert (stolen_0.total, stolen_0.target, stolen_0.phase) == (10, 10, "choice")
    assert chosen(stolen_0) == score(flip=True), "the stolen 0 is a 5 on its back"
    five = position([card(1, 5, 0)], [card(4, 3, 2)], display=[shown(20, 5, 4)])
    five_on_target, _ = act(five, 0, play(1))
    assert chosen(five_on_target) == score(flip=False), "a 5 hides a 4 or a 0"


def test_takes_every_foul_point_the_best_card_it_may() -> None:
    fouled, _ = act(foul_table(), 0, play(1))
    assert PASS in RULES.legal_moves(fouled, 1)
    assert PASS not in all_chosen(fouled, 1)
    over_15 = foul_table(display=[shown(20, 4, 3), shown(21, 5, 0), shown(22, 3, 2)], target=15)
    fouled, _ = act(over_15, 0, play(1))
    assert chosen(fouled, 1) in (foul_score(4), foul_score(4, flip=True)), "its 3, not a 2"
    fouled, _ = act(fouled, 1, foul_score(4))
    assert chosen(fouled, 2) == foul_score(7), "any card past 15: the 5, kept face up"


def test_steals_a_5_that_may_hide_a_0_and_keep_the_display_on_target() -> None:
    """On 10 with a 1: the 1 scores 1; a stolen 5 scores 5 when its back is a 0, and else shows
    a 4, which raises the target to 15 without a foul."""
    state = position(
        [card(1, 1, 0), card(2, 3, 2)],
        [card(4, 5, 4), card(5, 3, 2), card(6, 2, 3)],
        display=[shown(20, 5, 4), shown(21, 3, 2), shown(22, 1, 2)],
    )
    on_target, _ = act(state, 0, play(1))
    assert steal(4) in RULES.legal_moves(on_target, 0)
    assert chosen(on_target) == steal(4)


def test_after_a_pink_4_sends_play_away_from_the_player_who_would_score() -> None:
    """11 of 15: seat 1 (next clockwise) shows a 4 for 15 and the jackpot; seat 2 cannot hit."""
    state = position(
        [card(1, P, 3), card(2, 0, 1)],
        [card(4, 4, 5), card(5, 3, 2)],
        [card(7, 1, 0), card(8, 2, 3)],
        display=[shown(20, 5, 0), shown(21, 2, 1)],
    )
    landed, _ = act(state, 0, play(1))
    assert RULES.legal_moves(landed, 0) == [direction(False), direction(True)]
    assert chosen(landed) == direction(True)
