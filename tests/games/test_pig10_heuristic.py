"""The Pig 10 heuristic bot: always a legal move, each rule of thumb acting on a hand-built view."""

from __future__ import annotations

from collections.abc import Sequence
from random import Random
from typing import Any

import pytest

from domain.bots import Turn
from domain.dice import rng_at
from domain.games.pig10 import RULES, PileCard, State, unseen
from domain.heuristics.pig10 import (
    busts,
    choose,
    next_seat,
    spend_rank,
    trap_value,
    wins_the_pile,
)
from domain.rules import JSON

NONE_OUT = [0] * 11


def table(
    hand: Sequence[int],
    *,
    pile: Sequence[tuple[int, int]] = (),
    value: int = 0,
    out: Sequence[int] = NONE_OUT,
    sizes: Sequence[int] = (3, 3),
    draw: int = 40,
) -> dict[str, JSON]:
    """Seat 0's view of a running table: `pile` lists (seat, card) from bottom to top."""
    return {
        "hand_sizes": list(sizes),
        "draw_pile": draw,
        "pile": [{"seat": seat, "card": card} for seat, card in pile],
        "pile_value": value,
        "won": [0] * len(sizes),
        "out_of_play": list(out),
        "turn": 0,
        "hand": sorted(hand),
    }


def legal(view: dict[str, JSON]) -> list[JSON]:
    """Seat 0's legal moves in `view`, from the rules themselves."""
    sizes = view["hand_sizes"]
    state = State(
        hands=tuple(tuple(view["hand"]) if s == 0 else (1,) * n for s, n in enumerate(sizes)),
        draw_pile=(0,) * 11,
        pile=tuple(PileCard(p["seat"], p["card"]) for p in view["pile"]),
        pile_value=view["pile_value"],
        won=tuple(view["won"]),
        turn=0,
        started=True,
    )
    return RULES.legal_moves(state, 0)


def chosen(view: dict[str, JSON], seed: int = 0) -> JSON:
    players = len(view["hand_sizes"])
    options = RULES.info.resolve_options(players, {})
    turn = Turn(RULES, 0, players, options, view, legal(view))
    move = choose(turn, Random(seed))
    assert move in turn.moves
    return move


def move(card: int, mode: str = "add") -> dict[str, Any]:
    return {"card": card, "mode": mode}


def unseen_of(view: dict[str, JSON]) -> tuple[int, ...]:
    """The cards seat 0 has not seen, by value."""
    pile = [PileCard(p["seat"], p["card"]) for p in view["pile"]]
    return unseen(view["hand"], pile, view["out_of_play"])


@pytest.mark.parametrize("players", [2, 3, 5, 8])
def test_always_a_legal_move_in_every_seat(players: int) -> None:
    """Random games, the heuristic asked for every seat's move at every turn."""
    options = RULES.info.resolve_options(players, {})
    for seed in range(10):
        chance = b"heuristic" + seed.to_bytes(4, "big")
        state = RULES.initial_state(players, options)
        for event in RULES.setup(players, options, rng_at(chance, (), 0)):
            state = RULES.evolve(state, event)
        rng, step = Random(seed), 0
        while RULES.result(state) is None:
            (seat,) = RULES.to_act(state)
            moves = RULES.legal_moves(state, seat)
            turn = Turn(RULES, seat, players, options, RULES.view(state, seat), moves)
            assert choose(turn, Random(step)) in moves
            step += 1
            played = rng.choice(moves) if step % 2 else choose(turn, rng)
            for event in RULES.decide(state, seat, played, rng_at(chance, (), step)):
                state = RULES.evolve(state, event)


def test_wins_the_pile_when_it_can() -> None:
    view = table([1, 3, 0], pile=[(1, 4), (1, 3)], value=7)
    assert wins_the_pile(view, move(3))
    assert not wins_the_pile(view, move(1))
    assert chosen(view) == move(3)


def test_ten_wins_an_empty_pile() -> None:
    assert chosen(table([10, 2, 4])) == move(10)


def test_does_not_overshoot_when_a_card_fits() -> None:
    """Over 10 would hand the pile to the player before: play the 1 (9) instead."""
    view = table([4, 6, 1], pile=[(1, 3), (1, 5)], value=8)
    assert busts(view, move(4))
    assert not busts(view, move(1))
    assert chosen(view) == move(1)


def test_escapes_with_a_pigmaid_or_a_matching_card() -> None:
    assert chosen(table([5, 7, 8], pile=[(1, 3), (1, 6)], value=9)) == move(5, "subtract")
    assert chosen(table([6, 7, 8], pile=[(1, 3), (1, 6)], value=9)) == move(6, "set")


def test_overshoots_with_the_card_least_worth_keeping() -> None:
    view = table([6, 9, 10], pile=[(1, 3), (1, 5)], value=8)
    assert all(busts(view, m) for m in legal(view))
    assert chosen(view) == move(9)


def test_keep_order_saves_frogs_and_pigmaids() -> None:
    ranks = [spend_rank(move(card)) for card in (0, 5, 1, 9)]
    assert ranks == sorted(ranks)


def test_leaves_the_next_player_a_value_it_cannot_hit() -> None:
    """With every 1 won already, 9 cannot be made 10: the pigmaid (9) beats the 2 (6) or 3 (7)."""
    out = [0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    view = table([2, 3, 5], pile=[(1, 4)], value=4, out=out)
    assert trap_value(view, move(5), 0, unseen_of(view)) > 0
    assert chosen(view) == move(5)
    # With the 1s still unseen and the other 4s gone, a 6 is the safe value to leave.
    out = [0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0]
    assert chosen(table([2, 3, 5], pile=[(1, 4)], value=4, out=out)) == move(2)


def test_a_high_value_makes_the_next_player_overshoot() -> None:
    """Leaving 9 to a next player with one card, no 1, frog, pigmaid, 4 or 9 being unseen: it
    must overshoot, and its overshoot wins the pile (and its card) for the seat that left 9."""
    out = [7, 8, 0, 0, 7, 5, 0, 0, 0, 8, 0]
    view = table([4, 2, 3], pile=[(1, 3), (1, 2)], value=5, out=out, sizes=(3, 1), draw=0)
    assert trap_value(view, move(4), 0, unseen_of(view)) == pytest.approx(4.0)
    assert chosen(view) == move(4)


def test_the_next_player_is_the_next_seat_with_cards_once_the_draw_pile_is_empty() -> None:
    assert next_seat(table([1], sizes=(1, 0, 2), draw=5), 0) == 1
    assert next_seat(table([1], sizes=(1, 0, 2), draw=0), 0) == 2
    assert next_seat(table([1, 2], sizes=(2, 0, 0), draw=0), 0) == 0
