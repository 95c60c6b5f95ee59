"""The table aggregate: one hosted game's lifecycle wrapped around the game's rules.

A table is created, its seats are taken, the last seat taken deals the game (the rules' `setup`),
moves are decided by the rules, and the move that ends the game also records `GameFinished`,
which reveals the seed. Wire names of the events: `table.<Event>` for the lifecycle,
`<game id>.<Event>` for the game's own events.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, ClassVar

from domain.bots import Turn
from domain.chance import CURRENT, GENERATORS, PYTHON_RANDOM, UnknownChance
from domain.dice import rng_at
from domain.frozen import replace, with_item
from domain.registry import AnyRules, GameRegistry
from domain.rules import JSON, Event

LIFECYCLE = "table"
GAME_CREATED = f"{LIFECYCLE}.GameCreated"
GAME_CREATED_VERSION = 3
"""v2 added `chance` (the generator's algorithm id) and `rules_version`, v3 the `clock`."""
SEAT_TAKEN = f"{LIFECYCLE}.SeatTaken"
SEAT_TAKEN_VERSION = 3
"""v2 added `bot` and `webhook`, v3 the bot's `level`."""
MOVE_SUBSTITUTED = f"{LIFECYCLE}.MoveSubstituted"
TABLE_EXPIRED = f"{LIFECYCLE}.TableExpired"
SEAT_HANDED_TO_BOT = f"{LIFECYCLE}.SeatHandedToBot"
"""A seat played by a bot for the rest of the game: its player timed out too often, or left."""
CLOCK_CHARGED = f"{LIFECYCLE}.ClockCharged"
"""A seat's time bank after a decision: what was left, less the time spent, plus the increment."""
PLAYER_RETURNED = f"{LIFECYCLE}.PlayerReturned"
"""A person who had timed out moved again: their count of timeouts in a row starts afresh."""
TIMEOUT = "timeout"
"""The `reason` of a move a stand-in made because the seat's time ran out."""
STAND_IN = "heuristic"
"""The built-in bot that plays a move its seat did not make in time, and a seat handed over."""
GAME_FINISHED = f"{LIFECYCLE}.GameFinished"
PRIVATE_SEAT_FIELDS = ("token_sha256", "webhook")
"""Fields of `SeatTaken` that never leave the server: a webhook URL may carry its own secret."""


class Status(StrEnum):
    OPEN = "open"
    RUNNING = "running"
    FINISHED = "finished"
    EXPIRED = "expired"
    """Its seats were never all taken in time: nobody sits down any more."""


@dataclass(frozen=True)
class TimeControl:
    """A table's clock: how long each decision may take, how many timeouts in a row hand a
    person's seat to a bot, and how soon bots act at a table where people play."""

    turn_seconds: float = 24 * 3600.0
    """The limit per decision: the seats waited for must act by then, or a stand-in does."""
    timeouts: int = 3
    """Timeouts in a row after which a person's seat is played by a bot for the rest of the game."""
    bot_delay_seconds: float = 1.0
    """At a table with a person, a bot acts no sooner than this after it was given the move."""
    reaction_seconds: float = 2.0
    """At a table with a person, no bot acts sooner than this while another seat may react."""
    bank_seconds: float | None = None
    """A time bank per seat instead of a limit per decision: each decision spends from it."""
    increment_seconds: float = 0.0
    """With a bank: what each decision made adds back to it."""

    LIMITS: ClassVar[dict[str, tuple[float, float]]] = {
        "turn_seconds": (1.0, 7 * 24 * 3600.0),
        "timeouts": (1, 100),
        "bot_delay_seconds": (0.0, 60.0),
        "reaction_seconds": (0.0, 60.0),
        "bank_seconds": (1.0, 7 * 24 * 3600.0),
        "increment_seconds": (0.0, 3600.0),
    }

    @classmethod
    def from_json(cls, data: Mapping[str, JSON] | None) -> TimeControl:
        """The clock `data` asks for, the defaults filling what it leaves out."""
        given = dict(data or {})
        unknown = set(given) - set(cls.LIMITS)
        if unknown:
            raise ClockError(f"a clock has no {sorted(unknown)}; it has {sorted(cls.LIMITS)}")
        for name, (low, high) in cls.LIMITS.items():
            value = given.get(name)
            if value is not None and (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not low <= value <= high
            ):
                raise ClockError(f"the clock's {name} must be a number from {low} to {high}")
        if "timeouts" in given and not isinstance(given["timeouts"], int):
            raise ClockError("the clock's timeouts must be a whole number")
        return cls(**{name: value for name, value in given.items() if value is not None})

    def to_json(self) -> dict[str, JSON]:
        return {name: getattr(self, name) for name in self.LIMITS}


DEFAULT_CLOCK = TimeControl()


@dataclass(frozen=True)
class CreateGame:
    """Open a table for `game` with `seats` seats, its chance drawn by the generator `chance`,
    under the game's rules at `rules_version` (None: its current rules)."""

    table_id: str
    game: str
    seats: int
    options: Mapping[str, JSON]
    commitment: str
    entropy: str | None = None
    chance: str = CURRENT
    rules_version: int | None = None
    clock: Mapping[str, JSON] | None = None
    """The table's `TimeControl` (None: the default one)."""


@dataclass(frozen=True)
class TakeSeat:
    """Sit down at `seat` (None: the lowest free seat); the last seat taken starts the game.

    A seat is played by whoever holds its token, by the built-in `bot` named (at its `level`,
    if it has levels), or by the external bot answering at `webhook`.
    """

    seat: int | None
    name: str
    token_sha256: str | None
    entropy: str | None = None
    bot: str | None = None
    webhook: str | None = None
    level: str | None = None


@dataclass(frozen=True)
class MakeMove:
    """Play `move` for `seat`; `substituted` says why a stand-in bot chose it (else None)."""

    seat: int
    move: JSON
    substituted: str | None = None
    spent: float | None = None
    """Seconds since the table last changed, as the service's clock said: what the decision
    costs a seat's time bank (recorded, so that the audit charges the same)."""


@dataclass(frozen=True)
class Leave:
    """The person at `seat` resigns or leaves: a bot plays the seat for the rest of the game."""

    seat: int


@dataclass(frozen=True)
class Expire:
    """Close a table whose seats were not all taken in time."""


Command = CreateGame | TakeSeat | MakeMove | Leave | Expire
COMMANDS: dict[str, type[Command]] = {
    cls.__name__: cls for cls in (CreateGame, TakeSeat, MakeMove, Leave, Expire)
}


def command_to_json(command: Command) -> dict[str, JSON]:
    """The JSON form recorded in each event's metadata, so an audit can re-decide it."""
    args = {arg.name: getattr(command, arg.name) for arg in fields(command)}
    return {"type": type(command).__name__, "args": args}


def command_from_json(data: Mapping[str, JSON]) -> Command:
    args = data["args"]
    if data["type"] == CreateGame.__name__ and "chance" not in args:
        # Recorded before generators were named: those games were dealt with Python's.
        args = {**args, "chance": PYTHON_RANDOM}
    return COMMANDS[data["type"]](**args)


def seat_taken_v1_to_v2(data: Mapping[str, JSON]) -> dict[str, JSON]:
    """Seats taken before bots existed were all played by their token holders."""
    return {**data, "bot": None, "webhook": None}


def seat_taken_v2_to_v3(data: Mapping[str, JSON]) -> dict[str, JSON]:
    """The only bot before levels existed had none."""
    return {**data, "level": None}


def game_created_v1_to_v2(data: Mapping[str, JSON]) -> dict[str, JSON]:
    """Games created before generators and rules were versioned were dealt with Python's
    generator, under the first version of every game's rules."""
    return {**data, "chance": PYTHON_RANDOM, "rules_version": 1}


def game_created_v2_to_v3(data: Mapping[str, JSON]) -> dict[str, JSON]:
    """Tables created before clocks existed have the default one."""
    return {**data, "clock": DEFAULT_CLOCK.to_json()}


UPCASTS = (
    (SEAT_TAKEN, 1, seat_taken_v1_to_v2),
    (SEAT_TAKEN, 2, seat_taken_v2_to_v3),
    (GAME_CREATED, 1, game_created_v1_to_v2),
    (GAME_CREATED, 2, game_created_v2_to_v3),
)
"""Every schema step of the lifecycle events: (type, from version, function)."""


class TableError(Exception):
    """A command the table's state does not allow (as opposed to a move the rules forbid)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class PlayerCountError(TableError):
    """A table for more or fewer players than its game allows."""


class SeatUnavailable(TableError):
    """A seat that does not exist or is taken, or a table with none free."""


class GameNotRunning(TableError):
    """A move before the game started or after it ended."""


class NotYourTurn(TableError):
    """A move by a seat that has none now."""


class ClockError(TableError):
    """A clock with settings no table may have."""


class UnsupportedVersion(TableError):
    """The table was created with a generator or rules this code does not have: deciding it
    with others would silently decide differently, so nothing is decided."""


@dataclass(frozen=True)
class Seat:
    name: str
    token_sha256: str | None
    bot: str | None = None
    webhook: str | None = None
    level: str | None = None

    @property
    def player(self) -> str | None:
        """Who plays the seat when no token holder does: a bot's name, "webhook" or None."""
        return self.bot or ("webhook" if self.webhook else None)


@dataclass(frozen=True)
class Table:
    id: str
    game: str
    options: Mapping[str, JSON]
    commitment: str
    entropy: tuple[str, ...]
    seats: tuple[Seat | None, ...]
    state: Any
    version: int
    chance: str
    """The algorithm id of the generator every chance outcome is drawn with."""
    rules_version: int
    result: Mapping[str, JSON] | None = None
    seed: str | None = None
    clock: TimeControl = DEFAULT_CLOCK
    timeouts: tuple[int, ...] = ()
    """Each seat's timeouts in a row."""
    banks: tuple[float, ...] = ()
    """Each seat's time bank, when the clock has one."""
    expired: bool = False
    changed_at: datetime | None = field(default=None, compare=False)
    """When the latest event was recorded: the start of the decisions the table waits for. The
    service stamps it from the log's metadata (the domain reads no clock); None when unknown."""

    @property
    def status(self) -> Status:
        if self.result is not None:
            return Status.FINISHED
        if self.expired:
            return Status.EXPIRED
        if all(self.seats):
            return Status.RUNNING
        return Status.OPEN

    @property
    def has_people(self) -> bool:
        """Whether a person plays a seat (then bots keep a human pace)."""
        return any(seat is not None and seat.player is None for seat in self.seats)

    def bots_among(self, seats: Sequence[int]) -> list[int]:
        """The seats among `seats` that a bot or a webhook plays."""
        return [seat for seat in seats if (taken := self.seats[seat]) and taken.player]

    def seat_of(self, token_sha256: str) -> int | None:
        """The seat holding the token with this hash, if any."""
        for number, seat in enumerate(self.seats):
            if seat is not None and seat.token_sha256 == token_sha256:
                return number
        return None


class Tables:
    """Decides and folds table events for every game in a registry."""

    def __init__(self, registry: GameRegistry) -> None:
        self.registry = registry
        self._waiting: tuple[Table | None, list[int]] = (None, [])
        """The table `to_act` answered last, and its answer: a move's answer, its view, its
        turns and its timeouts ask it of the same table some five times."""

    def rules(self, table: Table) -> AnyRules:
        """The rules `table` is played under: its game's at the table's rules version."""
        return self._rules_at(table.game, table.rules_version)

    def _rules_at(self, game: str, rules_version: int) -> AnyRules:
        """`game`'s rules at `rules_version`, or its current rules if this code no longer decides
        that version: a table's log is still read with them (nothing is decided under them, as
        `check_versions` refuses it)."""
        current = self.registry[game]
        if current.info.rules_version == rules_version:
            return current
        return self.registry.game(game).rules_at(rules_version) or current

    def decides(self, table: Table) -> bool:
        """Whether this code decides `table` at all: its generator and rules version (see
        `check_versions`). Nobody may act at a table it does not decide, and no clock runs."""
        try:
            self.check_versions(table.game, table.chance, table.rules_version)
        except UnsupportedVersion:
            return False
        return True

    def check_versions(self, game: str, chance: str, rules_version: int) -> None:
        """Raise `UnsupportedVersion` unless this code decides `game` with generator `chance` under
        `rules_version` exactly as when the table was created."""
        if chance not in GENERATORS:
            raise UnsupportedVersion(str(UnknownChance(chance)))
        declared = self.registry.game(game)
        if declared.rules_at(rules_version) is None:
            *older, newest = declared.rules_versions()
            decided = (
                f"versions {', '.join(map(str, older))} and {newest}"
                if older
                else f"version {newest}"
            )
            raise UnsupportedVersion(
                f"{game} was created under rules version {rules_version}; "
                f"this code decides {decided} only"
            )

    # -- decide ---------------------------------------------------------------------------------

    def decide(self, table: Table | None, command: Command, seed: bytes) -> list[Event]:
        """The events `command` causes; raises `TableError`, `RuleError` or `OptionError`."""
        if isinstance(command, CreateGame):
            if table is not None:
                raise TableError(f"table {command.table_id} already exists")
            return [self._create(command)]
        if table is None:
            raise TableError("no such table")
        if isinstance(command, TakeSeat):
            return self._take_seat(table, command, seed)
        if isinstance(command, Leave):
            return self._leave(table, command)
        if isinstance(command, Expire):
            if table.status is not Status.OPEN:
                raise TableError(f"table {table.id} is {table.status.value}: it does not expire")
            return [Event(TABLE_EXPIRED, {})]
        return self._move(table, command, seed)

    @staticmethod
    def _leave(table: Table, command: Leave) -> list[Event]:
        # Every game's bots can play any seat of it, so a game goes on without the person
        # who left; none of the five needs to end early.
        if table.status is not Status.RUNNING:
            raise GameNotRunning(
                f"table {table.id} is {table.status.value}: there is no game to leave"
            )
        taken = table.seats[command.seat]
        if taken is None or taken.player is not None:
            raise SeatUnavailable(f"seat {command.seat} is played by a bot already")
        return [hand_to_bot(command.seat, "left")]

    def _create(self, command: CreateGame) -> Event:
        info = self.registry[command.game].info
        if not info.min_players <= command.seats <= info.max_players:
            raise PlayerCountError(
                f"{info.id} is played by {info.min_players} to {info.max_players} players, "
                f"not {command.seats}"
            )
        options = info.resolve_options(command.seats, command.options)
        rules_version = (
            info.rules_version if command.rules_version is None else command.rules_version
        )
        self.check_versions(command.game, command.chance, rules_version)
        clock = TimeControl.from_json(command.clock)
        data = {
            "table": command.table_id,
            "game": command.game,
            "seats": command.seats,
            "options": options,
            "commitment": command.commitment,
            "entropy": command.entropy,
            "chance": command.chance,
            "rules_version": rules_version,
            "clock": clock.to_json(),
        }
        return Event(GAME_CREATED, data, GAME_CREATED_VERSION)

    def _take_seat(self, table: Table, command: TakeSeat, seed: bytes) -> list[Event]:
        if table.status is Status.EXPIRED:
            raise SeatUnavailable(f"table {table.id} expired before its seats were all taken")
        if table.status is not Status.OPEN:
            raise SeatUnavailable(f"every seat at table {table.id} is taken")
        seat = command.seat
        if seat is None:
            seat = table.seats.index(None)
        elif not 0 <= seat < len(table.seats):
            raise SeatUnavailable(f"table {table.id} has seats 0 to {len(table.seats) - 1}")
        elif table.seats[seat] is not None:
            raise SeatUnavailable(f"seat {seat} is already taken")
        if command.token_sha256 is not None and table.seat_of(command.token_sha256) is not None:
            raise SeatUnavailable("that token already holds a seat here")
        if command.bot is not None and command.webhook is not None:
            raise TableError("a seat is played by a bot or by a webhook, not by both")
        taken = Event(
            SEAT_TAKEN,
            {
                "seat": seat,
                "name": command.name,
                "token_sha256": command.token_sha256,
                "entropy": command.entropy,
                "bot": command.bot,
                "webhook": command.webhook,
                "level": command.level,
            },
            SEAT_TAKEN_VERSION,
        )
        if sum(s is None for s in table.seats) > 1:
            return [taken]
        entropy = (*table.entropy, *([command.entropy] if command.entropy else []))
        rules = self.rules(table)
        self.check_versions(table.game, table.chance, table.rules_version)
        rng = rng_at(seed, entropy, table.version + 1, table.chance)
        setup = rules.setup(len(table.seats), table.options, rng)
        return [taken, *(self._wire(table, event) for event in setup)]

    def _move(self, table: Table, command: MakeMove, seed: bytes) -> list[Event]:
        if table.status is not Status.RUNNING:
            raise GameNotRunning(f"table {table.id} is {table.status.value}, no moves are taken")
        rules = self.rules(table)
        self.check_versions(table.game, table.chance, table.rules_version)
        if command.seat not in rules.may_act(table.state):
            raise NotYourTurn(f"seat {command.seat} may not act now")
        rng = rng_at(seed, table.entropy, table.version + 1, table.chance)
        events, state = rules.step(table.state, command.seat, command.move, rng)
        wired = [self._wire(table, event) for event in events]
        seat = command.seat
        if command.substituted is not None:
            substituted = {"seat": seat, "reason": command.substituted}
            wired.insert(0, Event(MOVE_SUBSTITUTED, substituted))
        elif table.timeouts[seat]:
            wired.insert(0, Event(PLAYER_RETURNED, {"seat": seat}))
        if table.banks and command.spent is not None and seat in rules.to_act(table.state):
            clock = table.clock
            bank = max(0.0, table.banks[seat] - command.spent) + clock.increment_seconds
            wired.insert(0, Event(CLOCK_CHARGED, {"seat": seat, "bank": bank}))
        result = rules.result(state)
        if result is not None:
            wired.append(Event(GAME_FINISHED, {"result": result.to_json(), "seed": seed.hex()}))
        elif (
            self._counts_timeout(table, command)
            and table.timeouts[seat] + 1 >= table.clock.timeouts
        ):
            wired.append(hand_to_bot(seat, f"{table.clock.timeouts} timeouts in a row"))
        return wired

    @staticmethod
    def _counts_timeout(table: Table, command: MakeMove) -> bool:
        """Whether the move is a stand-in's for a person whose time ran out (a webhook's own
        timeouts are its own business: it keeps its seat)."""
        seat = table.seats[command.seat]
        return command.substituted == TIMEOUT and seat is not None and seat.player is None

    @staticmethod
    def _wire(table: Table, event: Event) -> Event:
        return Event(f"{table.game}.{event.type}", event.data, event.v)

    # -- evolve ---------------------------------------------------------------------------------

    def evolve(self, table: Table | None, event: Event) -> Table:
        """The table after `event`; never validates."""
        if table is None:
            if event.type != GAME_CREATED:
                raise ValueError(f"a table's first event is {GAME_CREATED}, not {event.type}")
            data = event.data
            rules = self._rules_at(data["game"], data["rules_version"])
            return Table(
                id=data["table"],
                game=data["game"],
                options=data["options"],
                commitment=data["commitment"],
                entropy=(data["entropy"],) if data["entropy"] else (),
                seats=(None,) * data["seats"],
                state=rules.initial_state(data["seats"], data["options"]),
                version=1,
                chance=data["chance"],
                rules_version=data["rules_version"],
                clock=(clock := TimeControl.from_json(data["clock"])),
                timeouts=(0,) * data["seats"],
                banks=() if clock.bank_seconds is None else (clock.bank_seconds,) * data["seats"],
            )
        version = table.version + 1
        if event.type == SEAT_TAKEN:
            data = event.data
            seats = list(table.seats)
            seats[data["seat"]] = Seat(
                data["name"], data["token_sha256"], data["bot"], data["webhook"], data["level"]
            )
            entropy = (*table.entropy, data["entropy"]) if data["entropy"] else table.entropy
            return replace(table, seats=tuple(seats), entropy=entropy, version=version)
        if event.type == MOVE_SUBSTITUTED:
            seat = event.data["seat"]
            taken = table.seats[seat]
            if event.data["reason"] != TIMEOUT or taken is None or taken.player is not None:
                return replace(table, version=version)
            return replace(
                table,
                timeouts=with_item(table.timeouts, seat, table.timeouts[seat] + 1),
                version=version,
            )
        if event.type == CLOCK_CHARGED:
            banks = with_item(table.banks, event.data["seat"], event.data["bank"])
            return replace(table, banks=banks, version=version)
        if event.type == TABLE_EXPIRED:
            return replace(table, expired=True, version=version)
        if event.type == PLAYER_RETURNED:
            return replace(
                table, timeouts=with_item(table.timeouts, event.data["seat"], 0), version=version
            )
        if event.type == SEAT_HANDED_TO_BOT:
            seat = event.data["seat"]
            taken = table.seats[seat]
            assert taken is not None
            handed = with_item(
                table.seats, seat, replace(taken, bot=event.data["bot"], webhook=None)
            )
            return replace(table, seats=handed, version=version)
        if event.type == GAME_FINISHED:
            return replace(
                table, result=event.data["result"], seed=event.data["seed"], version=version
            )
        game_event = self._unwire(table, event)
        state = self.rules(table).evolve(table.state, game_event)
        return replace(table, state=state, version=version)

    def fold(self, events: Iterable[Event], table: Table | None = None) -> Table | None:
        last = deque(self.history(events, table), maxlen=1)
        return last.pop() if last else table

    def history(self, events: Iterable[Event], table: Table | None = None) -> Iterator[Table]:
        """The table after each of `events` in turn: one fold, every version on its way."""
        for event in events:
            table = self.evolve(table, event)
            yield table

    @staticmethod
    def _unwire(table: Table, event: Event) -> Event:
        prefix, _, name = event.type.partition(".")
        if prefix != table.game:
            raise ValueError(f"event {event.type} does not belong to a {table.game} table")
        return Event(name, event.data, event.v)

    # -- what a seat may see --------------------------------------------------------------------

    def to_act(self, table: Table) -> list[int]:
        """The seats the table is waiting for: public."""
        # A table never changes, so the same one has the same answer (one pair, swapped whole).
        last, seats = self._waiting
        if last is not table:
            if table.status is not Status.RUNNING:
                return []
            seats = sorted(self.rules(table).to_act(table.state))
            self._waiting = (table, seats)
        return list(seats)

    def may_act(self, table: Table) -> list[int]:
        """Every seat with a legal move now, out-of-turn reactions included: never public."""
        if table.status is not Status.RUNNING or not self.decides(table):
            return []
        return sorted(self.rules(table).may_act(table.state))

    def race_open(self, table: Table) -> bool:
        """Whether seats may act out of turn now, whoever holds the cards to: public."""
        races = self.registry.game(table.game).races
        return table.status is Status.RUNNING and races is not None and races(table.state)

    def legal_moves(self, table: Table, seat: int) -> list[JSON]:
        if table.status is not Status.RUNNING:
            return []
        return self.rules(table).legal_moves(table.state, seat)

    def turn(self, table: Table, seat: int) -> Turn:
        """What a bot playing `seat` is shown: the seat's view and legal moves, not the state."""
        rules = self.rules(table)
        view = rules.view(table.state, seat)
        moves = self.legal_moves(table, seat)
        return Turn(rules, seat, len(table.seats), table.options, view, moves)

    def deadlines(self, table: Table) -> dict[int, datetime]:
        """When each seat the table waits for must have acted (public, as `to_act` is); none
        while the time of the latest event is unknown."""
        if table.changed_at is None or not self.decides(table):
            return {}
        start = table.changed_at
        if table.banks:
            return {
                seat: start + timedelta(seconds=table.banks[seat]) for seat in self.to_act(table)
            }
        return dict.fromkeys(
            self.to_act(table), start + timedelta(seconds=table.clock.turn_seconds)
        )

    def scores(self, table: Table) -> list[int] | None:
        """Each seat's score as it stands (public), or None while the table is open."""
        if table.status is Status.OPEN:
            return None
        return list(self.rules(table).scores(table.state))

    def summary(self, table: Table) -> dict[str, JSON]:
        """The public outline of a table, for lists: no state, no options, nothing hidden."""
        return {
            "id": table.id,
            "game": table.game,
            "status": table.status.value,
            "version": table.version,
            "seats": seats_json(table),
            "to_act": self.to_act(table),
        }

    def view(self, table: Table, seat: int | None) -> dict[str, JSON]:
        """Everything `seat` (None: a spectator) may see of the table."""
        rules = self.rules(table)
        started = table.status is not Status.OPEN
        return {
            **self.summary(table),
            "options": dict(table.options),
            "commitment": table.commitment,
            "you": seat,
            "state": rules.view(table.state, seat) if started else None,
            "result": dict(table.result) if table.result is not None else None,
            "seed": table.seed,
            "clock": table.clock.to_json(),
            "deadlines": self.view_deadlines(table),
        }

    def view_deadlines(self, table: Table) -> dict[str, JSON]:
        """`deadlines` as JSON: ISO times by seat number."""
        return {str(seat): moment.isoformat() for seat, moment in self.deadlines(table).items()}

    def redact(self, table: Table, event: Event, seat: int | None) -> Event | None:
        """`event` of `table`'s log as `seat` may see it now; the whole log once it is finished."""
        if event.type == SEAT_TAKEN:
            public = {k: v for k, v in event.data.items() if k not in PRIVATE_SEAT_FIELDS}
            return Event(event.type, public, event.v)
        if event.type.startswith(f"{LIFECYCLE}.") or table.status is Status.FINISHED:
            return event
        redacted = self.rules(table).redact(self._unwire(table, event), seat)
        return None if redacted is None else self._wire(table, redacted)


def hand_to_bot(seat: int, reason: str) -> Event:
    """The event giving `seat` to the stand-in bot for the rest of the game."""
    return Event(SEAT_HANDED_TO_BOT, {"seat": seat, "bot": STAND_IN, "reason": reason})


def seats_json(table: Table) -> list[JSON]:
    """Every seat as anyone may see it: who sits there, and the bot playing it (if any)."""
    return [
        {
            "seat": number,
            "name": seat.name if seat else None,
            "taken": seat is not None,
            "bot": seat.player if seat else None,
            "level": seat.level if seat else None,
        }
        for number, seat in enumerate(table.seats)
    ]
