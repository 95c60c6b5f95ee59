"""Roll'n Bump whole games: seeded random playouts with every option, checked for invariants.

The conformance suite plays the default options only; these play each player count with the
first seat named and with other card points, and check after every move that each card and die
is in exactly one place, and at the end that the result adds up from the rules file's tables.
Every view is also checked against `RollnBumpState` in `openapi.yaml`.
"""

from __future__ import annotations

from collections import Counter
from random import Random
from typing import Any

import pytest

from domain.games.rollnbump import CARD_IDS, COLOURS, RULES, STACKS, State
from tests.test_openapi import component, validator

OPTION_SETS: list[dict[str, Any]] = [
    {},
    {"first_seat": 0},
    {"card_points": "single=5,pair=0,triple=7,quad=1,run-3=9,run-4=3,run-5=2,joker=40"},
    {"first_seat": 1, "card_points": "joker=0"},
]


def kind_of(card: str) -> str:
    kind = card.split("-", 1)[1]
    return "single" if kind.startswith("single") else kind


def expected_score(view: dict[str, Any], seat: int, points: dict[str, int]) -> int:
    """A seat's score recomputed from its view, straight from the rules file."""
    cards = view["won"][seat]
    colours = Counter(card.split("-", 1)[0] for card in cards)
    score = sum(points[kind_of(card)] for card in cards)
    if view["joker"]["holder"] == seat:
        score += points["joker"]
        colours[view["joker"]["colour"]] += 1
    score += sum(n * (n + 1) // 2 for n in colours.values() if n >= 2)
    if view["white_die"]["holder"] == seat:
        score += view["white_die"]["value"]
    return score


STATE_SCHEMA = validator(component("RollnBumpState"))


def check_invariants(state: State, players: int) -> None:
    view = RULES.view(state, None)
    errors = [f"{e.instance_path}: {e.message}" for e in STATE_SCHEMA.iter_errors(view)]
    assert not errors, errors
    tops = [stack["card"] for stack in view["stacks"] if stack["card"] is not None]
    won = [card for cards in view["won"] for card in cards]
    seen = tops + won
    assert len(seen) == len(set(seen)) == len(CARD_IDS) - view["unseen_cards"]
    placed = Counter[int]()
    for stack in view["stacks"]:
        if stack["claim"] is not None:
            placed[stack["claim"]["seat"]] += len(stack["claim"]["dice"])
    if view["white_spot"] is not None:
        placed[view["white_spot"]["seat"]] += len(view["white_spot"]["dice"])
        assert view["white_die"]["holder"] is None
    turn = view["turn"]
    if turn is not None:
        assert placed[turn] + len(view["dice"]) <= view["dice_count"]
        # While the game runs, fewer stacks are empty than end it.
        empty = sum(stack["card"] is None for stack in view["stacks"])
        assert empty < (2 if players == 5 else 1)
    assert all(count <= 5 for count in placed.values())
    stacks, size = STACKS[players]
    assert len(view["stacks"]) == stacks
    assert all(0 <= stack["face_down"] < size for stack in view["stacks"])


@pytest.mark.parametrize("options", OPTION_SETS, ids=["default", "first-seat", "points", "both"])
@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_random_games_end_and_add_up(players: int, options: dict[str, Any]) -> None:
    resolved = RULES.info.resolve_options(players, options)
    points = {
        "single": 1,
        "pair": 2,
        "triple": 4,
        "quad": 8,
        "run-3": 2,
        "run-4": 4,
        "run-5": 6,
        "joker": 15,
    }
    for item in options.get("card_points", "").split(","):
        if item:
            kind, number = item.split("=")
            points[kind] = int(number)
    for seed in range(3):
        rng = Random(seed * 10 + players)
        state = RULES.initial_state(players, resolved)
        for event in RULES.setup(players, resolved, rng):
            state = RULES.evolve(state, event)
        if options.get("first_seat") is not None:
            assert state.turn == options["first_seat"]
        moves = 0
        while RULES.to_act(state):
            (seat,) = RULES.to_act(state)
            move = rng.choice(RULES.legal_moves(state, seat))
            for event in RULES.decide(state, seat, move, rng):
                state = RULES.evolve(state, event)
            check_invariants(state, players)
            moves += 1
            assert moves < 5000
        result = RULES.result(state)
        assert result is not None
        view = RULES.view(state, None)
        assert result.scores == tuple(expected_score(view, s, points) for s in range(players))
        assert result.winners == tuple(
            s for s, score in enumerate(result.scores) if score == max(result.scores)
        )
        empty = sum(stack["card"] is None and stack["face_down"] == 0 for stack in view["stacks"])
        assert empty >= (2 if players == 5 else 1)
        assert all(stack["claim"] is None for stack in view["stacks"])
        assert view["white_spot"] is None
        assert view["joker"]["colour"] in (None, *COLOURS)
