"""Sprint: a sixth game that lives only in the tests, to prove that a game is one registration.

Two or three runners race to `goal`. Each holds one hidden card worth 1 to 3. On your turn you
either step (one square) or play your card (as many squares as it is worth, shown to all) and
draw a new one, which only you see. The first to reach the goal wins.

Nothing outside this file names it: the tests register it (`default_registry(GAME)`, or
`SPIELTISCH_EXTRA_GAMES=tests.sixth_game:GAME` for the service's processes), and the web client
shows it with its generic table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from random import Random
from typing import TypeVar

from domain.bots import Turn
from domain.chance import Chance
from domain.game import Game
from domain.registry import GameRegistry, default_registry
from domain.rules import (
    FIRST_SEAT,
    JSON,
    Event,
    FoldsAfterDeciding,
    GameInfo,
    Option,
    Result,
    RuleError,
)
from domain.seating import choose_first_seat

T = TypeVar("T")
LOWEST, HIGHEST = 1, 3
"""The values a card may have."""
STEP, PLAY = {"action": "step"}, {"action": "play"}
MOVES: list[JSON] = [STEP, PLAY]
GOAL = Option(
    name="goal", default=40, kind=int, minimum=5, maximum=60, description="Squares to run."
)

INFO = GameInfo(
    id="sprint",
    title="Sprint",
    min_players=2,
    max_players=3,
    options=(FIRST_SEAT, GOAL),
    score_range=(0, GOAL.maximum or 0),
    summary="Step one square or play your hidden card's worth; first to the goal wins.",
)


@dataclass(frozen=True)
class State:
    goal: int
    positions: tuple[int, ...]
    cards: tuple[int | None, ...]
    """Each runner's hidden card; None before the deal."""
    turn: int | None = None

    def winner(self) -> int | None:
        return next((seat for seat, at in enumerate(self.positions) if at >= self.goal), None)


class Sprint(FoldsAfterDeciding):
    """Sprint behind the rules contract."""

    info = INFO

    def initial_state(self, players: int, options: Mapping[str, JSON]) -> State:
        return State(goal=options[GOAL.name], positions=(0,) * players, cards=(None,) * players)

    def setup(self, players: int, options: Mapping[str, JSON], rng: Chance) -> list[Event]:
        events = [Event("CardDrawn", {"seat": seat, "card": draw(rng)}) for seat in range(players)]
        return [
            *events,
            Event("FirstSeatChosen", {"seat": choose_first_seat(players, options, rng)}),
        ]

    def evolve(self, state: State, event: Event) -> State:
        seat = event.data["seat"]
        match event.type:
            case "CardDrawn":
                return replace(state, cards=with_item(state.cards, seat, event.data["card"]))
            case "FirstSeatChosen":
                return replace(state, turn=seat)
            case "Ran":
                ran = replace(
                    state,
                    positions=with_item(
                        state.positions, seat, state.positions[seat] + event.data["squares"]
                    ),
                )
                over = ran.winner() is not None
                return replace(ran, turn=None if over else (seat + 1) % len(state.positions))
        raise ValueError(f"sprint has no event {event.type!r}")

    def to_act(self, state: State) -> frozenset[int]:
        return frozenset() if state.turn is None else frozenset({state.turn})

    def may_act(self, state: State) -> frozenset[int]:
        return self.to_act(state)

    def legal_moves(self, state: State, seat: int) -> list[JSON]:
        return list(MOVES) if seat == state.turn else []

    def decide(self, state: State, seat: int, move: JSON, rng: Chance) -> list[Event]:
        if seat != state.turn:
            raise RuleError("not-your-turn", f"seat {seat} may not move now")
        if move == STEP:
            return [Event("Ran", {"seat": seat, "squares": 1})]
        if move == PLAY:
            card = state.cards[seat]
            return [
                Event("Ran", {"seat": seat, "squares": card}),
                Event("CardDrawn", {"seat": seat, "card": draw(rng)}),
            ]
        raise RuleError("unknown-move", f"a move is {STEP} or {PLAY}, not {move!r}")

    def view(self, state: State, seat: int | None) -> dict[str, JSON]:
        shown: dict[str, JSON] = {
            "goal": state.goal,
            "positions": list(state.positions),
            "turn": state.turn,
            "dealt": [card is not None for card in state.cards],
        }
        if seat is not None:
            shown["hand"] = state.cards[seat]
        return shown

    def redact(self, event: Event, seat: int | None) -> Event | None:
        if event.type == "CardDrawn" and event.data["seat"] != seat:
            return Event(event.type, {"seat": event.data["seat"]})
        return event

    def result(self, state: State) -> Result | None:
        winner = state.winner()
        return None if winner is None else Result((winner,), self.scores(state))

    def scores(self, state: State) -> tuple[int, ...]:
        return tuple(min(at, state.goal) for at in state.positions)

    def conceal(self, state: State, seat: int | None, rng: Random) -> State:
        cards = tuple(
            card if card is None or other == seat else draw(rng)
            for other, card in enumerate(state.cards)
        )
        return replace(state, cards=cards)

    def sample(
        self,
        players: int,
        options: Mapping[str, JSON],
        view: Mapping[str, JSON],
        seat: int,
        rng: Random,
    ) -> State:
        cards = tuple(
            (view["hand"] if other == seat else draw(rng)) if dealt else None
            for other, dealt in enumerate(view["dealt"])
        )
        return State(view["goal"], tuple(view["positions"]), cards, view["turn"])

    def evaluate(self, state: State) -> tuple[float, ...]:
        result = self.result(state)
        if result is not None:
            return result.shares()
        # Closer runners are likelier winners; squared, so that a lead counts for more.
        weights = [(at + 1) ** 2 for at in state.positions]
        return tuple(weight / sum(weights) for weight in weights)


def draw(rng: Chance | Random) -> int:
    return rng.randint(LOWEST, HIGHEST)


def with_item(items: tuple[T, ...], index: int, value: T) -> tuple[T, ...]:
    return (*items[:index], value, *items[index + 1 :])


def choose(turn: Turn, rng: Random) -> JSON:
    """Play a card worth more than a step; otherwise step."""
    return PLAY if turn.view["hand"] > LOWEST else STEP


RULES = Sprint()
GAME = Game(RULES, heuristic=choose)


def with_sixth_game() -> GameRegistry:
    """Every game Spieltisch ships, and this one."""
    return default_registry(GAME)
