"""Marathon: a bench-only game as long as you like, behind the same rules contract as Pig 10.

Pig 10 ends within 300 events, too short to show whether reading a table costs more as its log
grows. In Marathon each of two seats holds a hidden counter, dealt at the start; a move adds 1, 2
or 3 to the mover's own counter and appends exactly one event; the seats alternate, and the game
ends after `length` moves, the highest counter winning. Not registered in the shipped service.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from random import Random

from domain.chance import Chance
from domain.game import Game
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
from domain.seating import choose_first_seat, winners_by

STEPS = (1, 2, 3)
DEAL = 1000
"""Counters are dealt from 0 to DEAL - 1."""
MAX_LENGTH = 10_000_000

LENGTH = Option(
    name="length",
    default=10_000,
    kind=int,
    minimum=1,
    maximum=MAX_LENGTH,
    description="Moves until the game ends; each move is one event.",
)

INFO = GameInfo(
    id="marathon",
    title="Marathon (bench only)",
    min_players=2,
    max_players=2,
    options=(FIRST_SEAT, LENGTH),
    score_range=(0, DEAL + max(STEPS) * MAX_LENGTH),
    summary="Add 1 to 3 to your hidden counter, one event a move; highest counter wins.",
)


@dataclass(frozen=True)
class State:
    counters: tuple[int, ...]
    length: int
    moves: int = 0
    turn: int | None = None
    started: bool = False

    @property
    def players(self) -> int:
        return len(self.counters)


class Marathon(FoldsAfterDeciding):
    """Marathon behind the rules contract."""

    info = INFO

    def initial_state(self, players: int, options: Mapping[str, JSON]) -> State:
        return State(counters=(0,) * players, length=int(options[LENGTH.name]))

    def setup(self, players: int, options: Mapping[str, JSON], rng: Chance) -> list[Event]:
        events = [
            Event("CounterDealt", {"seat": seat, "value": rng.randrange(DEAL)})
            for seat in range(players)
        ]
        events.append(Event("FirstSeatChosen", {"seat": choose_first_seat(players, options, rng)}))
        return events

    def evolve(self, state: State, event: Event) -> State:
        data = event.data
        match event.type:
            case "CounterDealt":
                return replace(state, counters=_with(state.counters, data["seat"], data["value"]))
            case "FirstSeatChosen":
                return replace(state, turn=data["seat"], started=True)
            case "Stepped":
                seat = data["seat"]
                moves = state.moves + 1
                counters = _with(state.counters, seat, state.counters[seat] + data["step"])
                turn = None if moves >= state.length else (seat + 1) % state.players
                return replace(state, counters=counters, moves=moves, turn=turn)
        raise ValueError(f"marathon has no event {event.type!r}")

    def to_act(self, state: State) -> frozenset[int]:
        return frozenset() if state.turn is None else frozenset({state.turn})

    def may_act(self, state: State) -> frozenset[int]:
        return self.to_act(state)

    def legal_moves(self, state: State, seat: int) -> list[JSON]:
        return [{"step": step} for step in STEPS] if seat == state.turn else []

    def decide(self, state: State, seat: int, move: JSON, rng: Chance) -> list[Event]:
        if not isinstance(move, Mapping) or set(move) != {"step"} or move["step"] not in STEPS:
            raise RuleError("move-format", 'a Marathon move is {"step": 1|2|3}')
        if isinstance(move["step"], bool):
            raise RuleError("move-format", "step must be a whole number")
        if seat != state.turn:
            raise RuleError("turn-order", f"seat {seat} is not the seat to move")
        return [Event("Stepped", {"seat": seat, "step": move["step"]})]

    def view(self, state: State, seat: int | None) -> dict[str, JSON]:
        view: dict[str, JSON] = {
            "moves": state.moves,
            "length": state.length,
            "turn": state.turn,
        }
        if seat is not None:
            view["counter"] = state.counters[seat]
        return view

    def redact(self, event: Event, seat: int | None) -> Event | None:
        if event.type in ("CounterDealt", "Stepped") and event.data["seat"] != seat:
            return Event(event.type, {"seat": event.data["seat"]}, event.v)
        return event

    def result(self, state: State) -> Result | None:
        if not state.started or state.turn is not None:
            return None
        return Result(winners=winners_by(state.counters, highest=True), scores=state.counters)

    def scores(self, state: State) -> tuple[int, ...]:
        # The counters are hidden until the end: till then nobody may see a score.
        result = self.result(state)
        return result.scores if result else (0,) * state.players

    def conceal(self, state: State, seat: int | None, rng: Random) -> State:
        counters = tuple(
            value if s == seat else rng.randrange(DEAL + max(STEPS) * state.moves)
            for s, value in enumerate(state.counters)
        )
        return replace(state, counters=counters)

    def sample(
        self,
        players: int,
        options: Mapping[str, JSON],
        view: Mapping[str, JSON],
        seat: int,
        rng: Random,
    ) -> State:
        # The other counter: a fresh deal plus the average step for each of its moves.
        other_moves = view["moves"] // 2
        counters = tuple(
            view["counter"] if s == seat else rng.randrange(DEAL) + 2 * other_moves
            for s in range(players)
        )
        return State(counters, view["length"], view["moves"], view["turn"], started=True)

    def evaluate(self, state: State) -> tuple[float, ...]:
        result = self.result(state)
        # Neither seat sees the other's counter, so until the end the odds are even.
        return result.shares() if result else (1 / state.players,) * state.players


def _with(values: tuple[int, ...], seat: int, value: int) -> tuple[int, ...]:
    return (*values[:seat], value, *values[seat + 1 :])


MARATHON = Marathon()
MARATHON_GAME = Game(MARATHON)
