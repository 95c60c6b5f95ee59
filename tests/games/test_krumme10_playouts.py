"""Krumme10 property tests: seeded random games with every option, played to the end.

The secret is checked after every move of many games: every seat and a spectator see the same
view; no view or redacted event carries a down face that play has not revealed; the view, the
seat's legal moves and the redacted events of a move that reveals nothing stay the same when the
hidden backs are dealt differently.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from random import Random
from typing import Any

import pytest

from domain.games.krumme10 import RULES, SHOWDOWN, TOO_SHORT, Card, State
from domain.rules import JSON, Event
from events.envelope import canonical_json
from tests.games.test_krumme10 import fold
from tests.test_openapi import assert_valid, component

OPTION_SETS: list[dict[str, JSON]] = [
    {},
    {"variant": TOO_SHORT},
    {"variant": SHOWDOWN},
    {"teams": True},
    {"teams": True, "variant": SHOWDOWN},
    {"teams": True, "variant": TOO_SHORT, "pink_fours": 7},
    {"pink_fours": 0},
    {"pink_fours": 18, "variant": SHOWDOWN},
    {"first_seat": 1},
]
GAMES_PER_OPTION_SET = 12


@dataclass
class Step:
    before: State
    seat: int
    move: JSON
    events: list[Event]
    after: State


@dataclass
class Game:
    players: int
    options: dict[str, JSON]
    setup: list[Event]
    steps: list[Step]
    final: State

    @property
    def events(self) -> list[Event]:
        return self.setup + [event for step in self.steps for event in step.events]


def random_game(given: Mapping[str, JSON], seed: int) -> Game:
    """A whole game of uniformly random legal moves."""
    rng = Random(seed)
    players = 4 + seed % 3 if given.get("teams") else 2 + seed % 5
    options = RULES.info.resolve_options(players, given)
    setup = RULES.setup(players, options, rng)
    state = fold(RULES.initial_state(players, options), setup)
    steps: list[Step] = []
    while RULES.result(state) is None:
        assert len(steps) < 5_000, "a game that does not end"
        seat = rng.choice(sorted(RULES.to_act(state)))
        move = rng.choice(RULES.legal_moves(state, seat))
        events = RULES.decide(state, seat, move, rng)
        after = fold(state, events)
        steps.append(Step(state, seat, move, events, after))
        state = after
    return Game(players, options, setup, steps, state)


def games() -> Iterator[Any]:
    for index, options in enumerate(OPTION_SETS):
        name = ",".join(f"{k}={v}" for k, v in options.items()) or "defaults"
        yield pytest.param((options, index), id=name)


@pytest.fixture(scope="module", params=list(games()))
def played(request: pytest.FixtureRequest) -> list[Game]:
    options, index = request.param
    return [random_game(options, index * 1000 + seed) for seed in range(GAMES_PER_OPTION_SET)]


def scored_cards(events: list[Event]) -> int:
    count = 0
    for event in events:
        if event.type == "TargetHit":
            count += 1 + len(event.data["jackpot"])
        elif event.type == "FoulScored":
            count += 1
    return count


def test_games_end_with_a_result_and_keep_every_card(played: list[Game]) -> None:
    low, high = RULES.info.score_range
    for game in played:
        result = RULES.result(game.final)
        assert result is not None
        assert all(low <= score <= high for score in result.scores)
        assert result.winners
        json.dumps(result.to_json())
        state = game.final
        in_play = (
            sum(len(hand) for hand in state.hands)
            + state.draw_pile_size
            + sum(state.discard_pile)
            + len(state.display)
        )
        assert in_play + scored_cards(game.events) == 54


def test_the_variant_decides_the_end(played: list[Game]) -> None:
    for game in played:
        variant = game.options["variant"]
        (ended,) = [e.data for e in game.events if e.type == "GameEnded"]
        reshuffles = [e for e in game.events if e.type == "DiscardReshuffled"]
        if variant == SHOWDOWN:
            assert ended == {"reason": "cards-gone"}
            assert not any(game.final.hands)
        else:
            assert ended == {"reason": "draw-pile-empty"}
            assert game.final.draw_pile_size == 0
        assert len(reshuffles) == (variant == TOO_SHORT)
        assert game.events[-1].type == "GameEnded", "nothing happens after the end"


def test_teams_and_pink_fours(played: list[Game]) -> None:
    for game in played:
        teams = game.final.teams
        for step in game.steps:
            for event in step.events:
                if event.type == "Fouled":
                    causer = event.data["seat"]
                    for scorer in event.data["scorers"]:
                        assert scorer != causer
                        assert teams is None or teams[scorer] != teams[causer]
                if event.type in ("CardPlayed", "CardStolen") and event.data["pink"]:
                    assert game.options["pink_fours"]
        result = RULES.result(game.final)
        assert result is not None
        assert ("team_scores" in result.details) is bool(game.options["teams"])


def test_fold_of_json_round_tripped_events_is_the_live_state(played: list[Game]) -> None:
    for game in played:
        stored = [json.loads(canonical_json([e.type, e.data, e.v])) for e in game.events]
        events = [Event(type_, data, v) for type_, data, v in stored]
        start = RULES.initial_state(game.players, game.options)
        assert fold(start, events) == game.final


def hidden_backs(value: Any) -> list[Any]:
    """Every `back` in a JSON value that is not the public back of a flipped display card."""
    found = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("back", "back_pink") and not (value.get("flipped") and key == "back"):
                if item is not None:
                    found.append(item)
            else:
                found += hidden_backs(item)
    elif isinstance(value, list):
        for item in value:
            found += hidden_backs(item)
    return found


def swapped_backs(state: State) -> State | None:
    """`state` with the backs of two unrevealed cards showing the same face exchanged: a world
    nobody can tell apart from this one, with the same draw pile. None if no such pair."""
    cards = [card for hand in state.hands for card in hand]
    cards += [placed.card for placed in state.display if not placed.card.revealed]
    for first in cards:
        for second in cards:
            if first.face == second.face and first.back < second.back:
                return _rebacked(state, {first.id: second.back, second.id: first.back})
    return None


def _rebacked(state: State, backs: dict[int, int]) -> State:
    def reback(card: Card) -> Card:
        return card._replace(back=backs[card.id]) if card.id in backs else card

    return State(
        **{
            **state.__dict__,
            "hands": tuple(tuple(reback(card) for card in hand) for hand in state.hands),
            "display": tuple(p._replace(card=reback(p.card)) for p in state.display),
        }
    )


def reveals(move: JSON) -> bool:
    return bool(move.get("flip")) or move["type"] == "steal"


def test_nobody_ever_sees_an_unrevealed_back(played: list[Game]) -> None:
    checked = 0
    for index, game in enumerate(played):
        observers: list[int | None] = [*range(game.players), None]
        for event in game.setup:
            for seat in observers:
                redacted = RULES.redact(event, seat)
                assert redacted is not None
                assert hidden_backs(dict(redacted.data)) == []
        for number, step in enumerate(game.steps):
            view = RULES.view(step.after, None)
            assert hidden_backs(view) == []
            assert all(RULES.view(step.after, seat) == view for seat in observers)
            other = RULES.conceal(step.after, None, Random(index * 10_000 + number))
            assert RULES.view(other, None) == view
            for seat in RULES.to_act(step.after):
                assert RULES.legal_moves(other, seat) == RULES.legal_moves(step.after, seat)
            for event in step.events:
                for seat in observers:
                    redacted = RULES.redact(event, seat)
                    assert redacted is not None
                    assert hidden_backs(dict(redacted.data)) == []
            checked += 1
    assert checked > 100


def test_a_move_that_reveals_nothing_tells_nothing_about_the_backs(played: list[Game]) -> None:
    compared = 0
    for index, game in enumerate(played):
        for number, step in enumerate(game.steps):
            if reveals(step.move):
                continue
            twin = swapped_backs(step.before)
            if twin is None:
                continue
            assert twin != step.before
            assert RULES.view(twin, None) == RULES.view(step.before, None)
            seed = index * 10_000 + number
            real = RULES.decide(step.before, step.seat, step.move, Random(seed))
            other = RULES.decide(twin, step.seat, step.move, Random(seed))
            for seat in [*range(game.players), None]:
                assert [RULES.redact(e, seat) for e in real] == [
                    RULES.redact(e, seat) for e in other
                ]
            compared += 1
    assert compared > 50


def test_conceal_deals_the_hidden_backs_again(played: list[Game]) -> None:
    changed = 0
    for index, game in enumerate(played[:3]):
        for step in game.steps[::4]:
            other = RULES.conceal(step.before, 0, Random(index))
            changed += other != step.before
            assert [[c.face for c in hand] for hand in other.hands] == [
                [c.face for c in hand] for hand in step.before.hands
            ]
            assert other.draw_pile_size == step.before.draw_pile_size
    assert changed > 0


def test_every_view_matches_the_openapi_schema(played: list[Game]) -> None:
    for game in played[:4]:
        for step in game.steps[::3]:
            assert_valid(component("Krumme10State"), RULES.view(step.after, None), "a view")
        assert_valid(component("Krumme10State"), RULES.view(game.final, 0), "the last view")
