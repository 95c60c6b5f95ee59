"""The Wobble heuristic bot: always a legal move, and each rule of thumb at work on a hand-built
position (the positions come from the rule tests' helpers)."""

from __future__ import annotations

from dataclasses import replace
from random import Random
from typing import Any

import pytest

from domain.bots import Turn
from domain.games.wobble import INFO, NAME, OPENING, REPORT, RESOLVE, RULES, State, Step
from domain.heuristics import wobble as heuristic
from domain.heuristics.wobble import choose
from domain.rules import JSON
from tests.games.test_wobble import FILLER, attacked, fold, play, position


def turn_of(state: State, seat: int) -> Turn:
    options = INFO.resolve_options(state.players, {"tasks": "table"} if state.tasks else {})
    view = RULES.view(state, seat)
    return Turn(RULES, seat, state.players, options, view, RULES.legal_moves(state, seat))


def chosen(state: State, seat: int = 0) -> JSON:
    """The heuristic's move for `seat`; the same whatever its tie-breaking generator."""
    turn = turn_of(state, seat)
    moves = [choose(turn, Random(seed)) for seed in range(8)]
    assert all(move == moves[0] for move in moves), moves
    return moves[0]


@pytest.mark.parametrize(
    ("players", "options"),
    [
        (2, {}),
        (3, {"first_game": True}),
        (4, {"tasks": "table"}),
        (5, {"deck": "not_me=4,capture=4,double=4,afk=2,minus20=2,magnet=2", "tasks": "table"}),
        (8, {"deck": "half_hand=1,card_exchange=1,0=1,unlucky=4,you=4"}),
    ],
)
def test_every_seat_always_gets_a_legal_move(players: int, options: dict[str, Any]) -> None:
    resolved = INFO.resolve_options(players, options)
    for seed in range(2):
        rng = Random(seed)
        state = fold(
            RULES.initial_state(players, resolved), RULES.setup(players, resolved, Random(seed))
        )
        while RULES.result(state) is None:
            acting = sorted(RULES.may_act(state))
            for seat in acting:
                moves = RULES.legal_moves(state, seat)
                turn = Turn(RULES, seat, players, resolved, RULES.view(state, seat), moves)
                assert choose(turn, rng) in moves
            seat = rng.choice(acting)
            move = rng.choice(RULES.legal_moves(state, seat))
            state = fold(state, RULES.decide(state, seat, move, rng))


# --- the rules of thumb, one position each -------------------------------------------------------


def test_turn_the_attack_away() -> None:
    def answer(hand: list[str]) -> JSON:
        return chosen(attacked(hand, [FILLER], [FILLER], symbol="+3", amount=3, owner=1, target=0))

    assert answer(["grey:dodge", "magenta:+3", "brown:not_me"]) == {
        "type": "jerk",
        "card": "brown:not_me",
    }
    assert answer(["grey:dodge", "magenta:+3"]) == {"type": "pass", "cards": ["magenta:+3"]}
    assert answer(["grey:unlucky", "grey:mirror"]) == {"type": "defend", "card": "grey:mirror"}
    assert answer(["brown:double", "green:1"]) == {"type": "accept"}


def test_jerk_hardest() -> None:
    state = attacked(
        [FILLER],
        [FILLER],
        ["brown:double", "brown:not_me", "brown:capture"],
        symbol="skip",
        amount=1,
        owner=0,
        target=1,
    )
    assert chosen(state, 2) == {"type": "jerk", "card": "brown:not_me"}
    kept = heuristic.jerk_hardest(turn_of(state, 2), [{"type": "jerk", "card": "brown:double"}])
    assert kept == [{"type": "jerk", "card": "brown:double"}]


def test_shed_most_cards() -> None:
    assert chosen(position(["cyan:1", "cyan:1", "cyan:9"], [FILLER])) == play("cyan:1", "cyan:1")


def test_keep_color_swaps() -> None:
    assert chosen(position(["swap:cyan/yellow", "cyan:2"], [FILLER])) == play("cyan:2")


def test_attack_first() -> None:
    hand = ["cyan:reverse", "cyan:skip", "cyan:9"]
    assert chosen(position(hand, [FILLER], [FILLER])) == play("cyan:skip")


def test_shed_most_points() -> None:
    assert chosen(position(["cyan:2", "cyan:9", "magenta:1"], [FILLER])) == play("cyan:9")


def test_follow_my_colour() -> None:
    hand = ["yellow:5", "green:5", "green:1", "green:2"]
    assert chosen(position(hand, [FILLER])) == play("green:5")


def test_name_my_colour() -> None:
    start = position(
        ["yellow:1", "yellow:2", "cyan:3"],
        [FILLER],
        top="swap:cyan/yellow",
        colour="cyan",
        phase=OPENING,
    )
    assert chosen(replace(start, colour=None)) == {"type": "start", "colour": "yellow"}


def test_take_the_smallest_hand() -> None:
    state = position(["cyan:card_exchange", "green:1"], ["green:2"] * 4, ["green:3"], [FILLER] * 2)
    assert chosen(state) == play("cyan:card_exchange", exchange_with=2)


def test_aim_at_the_leader() -> None:
    state = attacked(
        ["grey:you"], [FILLER] * 3, [FILLER], [FILLER] * 2, symbol="+5", amount=5, owner=1, target=0
    )
    assert chosen(state) == {"type": "defend", "card": "grey:you", "target": 2}


def test_discard_half() -> None:
    state = position(["cyan:half_hand", "green:1", "green:2", "green:3"], [FILLER])
    assert chosen(state) == play("cyan:half_hand", discard_half=True)


def test_stay_seated() -> None:
    state = position(["cyan:0", "magenta:1"], [FILLER], [FILLER], top="green:0")
    assert chosen(state) == play("cyan:0", swap_with=None)


def test_name_what_others_lack() -> None:
    hand = ["magenta:3", "magenta:3", "cyan:3", "cyan:3"]
    state = attacked(
        hand,
        [FILLER],
        symbol="magnet",
        amount=1,
        owner=1,
        target=0,
        discard=["yellow:3", "green:3"],
    )
    magnet = replace(state, phase=RESOLVE, steps=(Step(NAME, 0, 0),))
    assert chosen(magnet) == {"type": "name", "number": 3}
    # Cyan: two in the hand and the Magnet on the pile are seen.
    all_named = replace(magnet, named=tuple(range(1, 10)))
    assert chosen(all_named) == {"type": "name", "colour": "cyan"}


def test_swap_greys_for_cards() -> None:
    state = position(["grey:dodge", "grey:you"], [FILLER])
    assert chosen(state) == {"type": "exchange_greys"}


def test_never_attempt() -> None:
    state = attacked(["green:1"], [FILLER], symbol="+3", amount=3, owner=1, target=0, tasks=True)
    assert chosen(state) == {"type": "accept"}


def test_report_failure() -> None:
    state = attacked([FILLER], ["green:1"], symbol="+3", amount=3, owner=0, target=1, tasks=True)
    reporting = replace(state, phase=RESOLVE, steps=(Step(REPORT, 0, 1),))
    assert chosen(reporting) == {"type": "report", "success": False}
