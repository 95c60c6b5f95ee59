"""The rules contract every game implements, and the types it speaks in.

A game is a pure, deterministic state machine. The service never touches a game's state except
through these functions, and clients only ever see what `view` and `redact` let through.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from random import Random
from typing import Any, Generic, NamedTuple, Protocol, TypeVar, cast

from domain.chance import Chance
from domain.frozen import replace

JSON = Any
"""A value that survives a JSON round trip unchanged: dict, list, str, int, bool or None."""

Move = Mapping[str, JSON]


class Event(NamedTuple):
    """Something that happened in a game: a past-tense `type`, its JSON `data`, a schema version.

    A named tuple rather than a frozen dataclass: the engines build one per event, and a frozen
    dataclass's `__init__` (one `object.__setattr__` per field) cost them a tenth of a playout.
    """

    type: str
    data: Mapping[str, JSON]
    v: int = 1


@dataclass(frozen=True)
class Option:
    """A game option with its default; `choices` or `minimum`/`maximum` bound the allowed values."""

    name: str
    default: JSON
    kind: type
    description: str
    choices: tuple[JSON, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None
    nullable: bool = False

    def check(self, value: JSON) -> None:
        """Raise `OptionError` unless `value` is allowed for this option."""
        if value is None:
            if not self.nullable:
                raise OptionError(self.name, "may not be null")
            return
        # bool is an int in Python; an option of kind int must not accept true/false.
        if not isinstance(value, self.kind) or (self.kind is int and isinstance(value, bool)):
            raise OptionError(self.name, f"must be of type {self.kind.__name__}")
        if self.choices is not None and value not in self.choices:
            raise OptionError(self.name, f"must be one of {list(self.choices)}")
        number = cast(int, value)
        if self.minimum is not None and number < self.minimum:
            raise OptionError(self.name, f"must be at least {self.minimum}")
        if self.maximum is not None and number > self.maximum:
            raise OptionError(self.name, f"must be at most {self.maximum}")


FIRST_SEAT = Option(
    name="first_seat",
    default=None,
    kind=int,
    minimum=0,
    nullable=True,
    description="Seat that moves first; null lets the game's seeded generator choose.",
)
"""The option every game has (rules/README.md): who starts."""


@dataclass(frozen=True)
class GameInfo:
    """What a game declares about itself: identity, player counts, options and score range."""

    id: str
    title: str
    min_players: int
    max_players: int
    options: tuple[Option, ...]
    score_range: tuple[int, int]
    summary: str = ""
    rules_version: int = 1
    """Recorded in each table's `GameCreated`. Raise it with any change that would decide a
    recorded game differently: the verifier then refuses the older games by name instead of
    finding a mismatch."""

    def resolve_options(self, players: int, given: Mapping[str, JSON]) -> dict[str, JSON]:
        """Return every option with defaults filled in; raise `OptionError` on anything else."""
        known = {option.name: option for option in self.options}
        for name in given:
            if name not in known:
                raise OptionError(name, f"is not an option of {self.id}; known: {sorted(known)}")
        resolved = {name: given.get(name, option.default) for name, option in known.items()}
        for name, value in resolved.items():
            known[name].check(value)
        first_seat = resolved.get(FIRST_SEAT.name)
        if first_seat is not None and first_seat >= players:
            raise OptionError(FIRST_SEAT.name, f"must be a seat number below {players}")
        return resolved


@dataclass(frozen=True)
class Result:
    """The outcome of a finished game: every winner (ties are shared) and each seat's score."""

    winners: tuple[int, ...]
    scores: tuple[int, ...]
    details: Mapping[str, JSON] = field(default_factory=dict)

    def to_json(self) -> dict[str, JSON]:
        """The JSON form recorded in `GameFinished` and returned by the API."""
        return {"winners": list(self.winners), "scores": list(self.scores), **self.details}

    def shares(self) -> tuple[float, ...]:
        """Each seat's share of the win: winners split 1 evenly, everyone else gets 0. A game
        nobody won (in Krass Kariert everyone can lose at once) is a tie of all seats."""
        if not self.winners:
            return (1 / len(self.scores),) * len(self.scores)
        share = 1 / len(self.winners)
        return tuple(share if seat in self.winners else 0.0 for seat in range(len(self.scores)))


class RuleError(Exception):
    """A move the rules forbid; `rule` is a stable slug naming the rule that was broken."""

    def __init__(self, rule: str, detail: str) -> None:
        super().__init__(f"{rule}: {detail}")
        self.rule = rule
        self.detail = detail


class OptionError(ValueError):
    """An option value the game does not accept."""

    def __init__(self, option: str, problem: str) -> None:
        super().__init__(f"option {option!r} {problem}")
        self.option = option


State = TypeVar("State")


class Rules(Protocol[State]):
    """The interface of one game; `State` is the game's own immutable state type.

    `decide` and `evolve` are separated as in event sourcing: `decide` validates a move and
    returns the events it causes (chance outcomes drawn from `rng` and written into them);
    `evolve` folds one event without validation or randomness. Neither mutates its input.
    """

    info: GameInfo

    def setup(self, players: int, options: Mapping[str, JSON], rng: Chance) -> list[Event]:
        """The opening events: deals, shuffles, the first player."""
        ...

    def initial_state(self, players: int, options: Mapping[str, JSON]) -> State:
        """The state before any event, which `setup`'s events are folded into."""
        ...

    def evolve(self, state: State, event: Event) -> State:
        """The state after `event`; pure, never validates, never draws randomness."""
        ...

    def to_act(self, state: State) -> frozenset[int]:
        """The seats whose action the table is waiting for; empty once the game is over.

        Public: shown to everyone, so it never depends on a hidden card. A seat that may act
        out of turn (a toss-in, a Jerk) is not waited for and is not in it.
        """
        ...

    def may_act(self, state: State) -> frozenset[int]:
        """Every seat with a legal move now: `to_act` and the seats that may act out of turn.

        Private: it tells who holds which hidden card, so it never leaves the server. The service
        validates moves and schedules bots by it; each seat learns its own part of it only from
        its own legal moves.
        """
        ...

    def legal_moves(self, state: State, seat: int) -> list[JSON]:
        """Every legal move of `seat`, JSON-able, in a stable order.

        The moves may be shared with other answers (a game may build them once and keep them):
        callers read them and never change them.
        """
        ...

    def decide(self, state: State, seat: int, move: JSON, rng: Chance) -> list[Event]:
        """Validate `move` and return its events; raise `RuleError` naming the broken rule."""
        ...

    def step(self, state: State, seat: int, move: JSON, rng: Chance) -> tuple[list[Event], State]:
        """`decide`, and the state its events lead to: what folding them with `evolve` gives.

        Whoever needs both (the table, the search bots, the engine bench) calls this, so that a
        game which folds its events while deciding them does not fold them twice.
        """
        ...

    def view(self, state: State, seat: int | None) -> dict[str, JSON]:
        """What `seat` (None: a spectator) may see of `state`."""
        ...

    def redact(self, event: Event, seat: int | None) -> Event | None:
        """`event` as `seat` (None: a spectator) may see it, or None if it must be hidden whole."""
        ...

    def result(self, state: State) -> Result | None:
        """The result once the game is over, None while it runs."""
        ...

    def scores(self, state: State) -> tuple[int, ...]:
        """Each seat's score as it stands; once the game is over it equals
        `result(state).scores`.

        Public: computed from what a spectator sees, so a score chart shows nobody a hidden card.
        """
        ...

    def conceal(self, state: State, seat: int | None, rng: Random) -> State:
        """A state `seat` cannot tell apart from `state`: everything hidden from it re-drawn.

        The conformance suite uses it to prove that `view` shows `seat` nothing it may not see:
        the view of the concealed state must equal the view of the real one.
        """
        ...

    def sample(
        self,
        players: int,
        options: Mapping[str, JSON],
        view: Mapping[str, JSON],
        seat: int,
        rng: Random,
    ) -> State:
        """A state `seat` could be in, built from nothing but its `view` (and the table's setup).

        Everything the view hides (unseen cards, unknown faces, the other hands) is drawn from
        what the view allows. Search bots plan on these samples, which is why they never read
        the true hidden state: the view of a sample equals `view`, and so do `seat`'s moves.
        """
        ...

    def evaluate(self, state: State) -> tuple[float, ...]:
        """Each seat's estimated share of the win from `state`, without playing on.

        Non-negative and summing to 1; once the game is over, exactly `result(state).shares()`.
        Search bots use it where they stop looking ahead.
        """
        ...


Rules_ = TypeVar("Rules_")


def remembers_last_answer(
    legal_moves: Callable[[Rules_, State, int], list[JSON]],
) -> Callable[[Rules_, State, int], list[JSON]]:
    """`legal_moves` answering a repeated question about the same state from memory.

    A move is listed and then decided on the same state, and deciding checks the move against
    that same list: remembering the last answer computes it once. States never change once built,
    so the same object means the same answer. The memory is one tuple replaced whole, which
    threads may share.
    """
    last: tuple[object, int, tuple[JSON, ...]] | None = None

    @functools.wraps(legal_moves)
    def remembered(rules: Rules_, state: State, seat: int) -> list[JSON]:
        nonlocal last
        known = last
        if known is not None and known[0] is state and known[1] == seat:
            return list(known[2])
        answer = legal_moves(rules, state, seat)
        last = (state, seat, tuple(answer))
        return answer

    return remembered


class Decision(Generic[State]):
    """The events a move causes, and the state they lead to, folded as each one is added.

    Rules whose later events depend on the earlier ones' outcome (a draw after a reshuffle, a
    round's end after the last card) decide with one of these and answer `step` from it.
    """

    __slots__ = ("_evolve", "_versions", "events", "state")

    def __init__(
        self,
        evolve: Callable[[State, Event], State],
        state: State,
        versions: Mapping[str, int] | None = None,
    ) -> None:
        self.events: list[Event] = []
        self.state = state
        self._evolve = evolve
        self._versions = versions or {}

    def add(self, type_: str, data: Mapping[str, JSON]) -> None:
        """Record the event `type_` with `data` (at its current schema version) and fold it."""
        # `Event.__new__` called as the function it is: calling the class takes `type.__call__`'s
        # slow path into it, a third of the cost of building a named tuple.
        event = Event.__new__(Event, type_, data, self._versions.get(type_, 1))
        self.events.append(event)
        self.state = self._evolve(self.state, event)

    def outcome(self) -> tuple[list[Event], State]:
        return self.events, self.state


Changes = dict[str, Any]
"""The fields of a game's state an event changes, by name, with their new values."""

Evolvers = Mapping[str, Callable[[State, Mapping[str, JSON]], Changes]]
"""A game's evolve as, for each event type, the fields an event of that type changes in a state
(given its `data`): the game's `evolve` is `frozen.replace(state, **changes)`."""


def evolved(game: str, evolvers: Evolvers[State], state: State, event: Event) -> State:
    """`state` after `event`: the `evolve` of a game whose evolve is a table of `evolvers`
    (`game` names it in the error for an event it does not have)."""
    try:
        evolver = evolvers[event.type]
    except KeyError:
        raise ValueError(f"{game} has no event {event.type!r}") from None
    changes = evolver(state, event.data)
    # An event that changes nothing (half of Roll'n Bump's collections) leaves the state itself.
    return replace(state, **changes) if changes else state


class FoldingDecision(Decision[State]):
    """A `Decision` that folds a move's events into one private copy of the state, made as the
    move begins, writing each event's changes into that copy, where `evolve` copies the whole
    state once per event.

    Nobody sees the copy before `outcome` hands it over, so no state anyone holds ever changes;
    but `state` is that one copy all along, so a state read from it before an `add` shows the
    event's changes after it too. The writes go past the frozen dataclass's `__setattr__`, as
    `frozen.replace` sets a new copy's fields.
    """

    __slots__ = ("_evolvers", "_fields")

    def __init__(
        self, evolvers: Evolvers[State], state: State, versions: Mapping[str, int] | None = None
    ) -> None:
        # Not `Decision.__init__`: this folds through `evolvers`, never through an `evolve`.
        self.events = []
        self.state = replace(state)
        self._versions = versions or {}
        self._evolvers = evolvers
        # Kept at hand: `__dict__` is a slow attribute to look up.
        self._fields = self.state.__dict__

    def add(self, type_: str, data: Mapping[str, JSON]) -> None:
        # `Event.__new__` called as the function it is, as `Decision.add` does and for its reason.
        event = Event.__new__(Event, type_, data, self._versions.get(type_, 1))
        self.events.append(event)
        # `|=` rather than `dict.update`, whose call packs its argument into a tuple first.
        self._fields |= self._evolvers[type_](self.state, data)


def listed(move: JSON, moves: Sequence[JSON]) -> bool:
    """Whether `move` is one of `moves` itself, the same object rather than an equal one.

    A move taken from a state's own `legal_moves` (as bots, search's playouts and the bench take
    theirs) is legal as it stands and needs no parsing or checking; found by identity, cheaply,
    since its caller has just filled the caches `legal_moves` answers from. A plain loop, not
    `any` over a generator, which costs more than the search.
    """
    for candidate in moves:  # noqa: SIM110 (the docstring says why)
        if candidate is move:
            return True
    return False


class FoldsAfterDeciding:
    """`step` for rules whose `decide` returns events without folding them all itself."""

    def step(self, state: Any, seat: int, move: JSON, rng: Chance) -> tuple[list[Event], Any]:
        rules = cast("Rules[Any]", self)
        events = rules.decide(state, seat, move, rng)
        for event in events:
            state = rules.evolve(state, event)
        return events, state


class DecidesBySteps:
    """`decide` for rules that decide by `step`, folding as they go: its events alone."""

    def decide(self, state: Any, seat: int, move: JSON, rng: Chance) -> list[Event]:
        events, _ = cast("Rules[Any]", self).step(state, seat, move, rng)
        return events
