"""The application service: commands and queries on tables, free of HTTP.

`TableCommands` decide and append; `TableQueries` read and never write. Both work on tables
through one `TableRepository` (load, cache, commit). They raise typed errors (below, and the
domain's and store's own); `service.errors` maps each to its HTTP problem. Every answer that
carries a table, its state, events, seats or moves is built by `service.views.Views` for the
caller that asked: they return `Shown` bodies only.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from domain.catalogue import BotCatalogue, UnknownBot
from domain.dice import SEED_BYTES, commitment
from domain.rules import JSON, RuleError
from domain.table import (
    GAME_FINISHED,
    PRIVATE_SEAT_FIELDS,
    TABLE_EXPIRED,
    Command,
    CreateGame,
    Expire,
    Leave,
    MakeMove,
    NotYourTurn,
    Table,
    TableError,
    TakeSeat,
    command_to_json,
)
from events.envelope import START, Position, Recorded, canonical_json, seal
from events.index import TableIndex
from events.repository import Loaded, TableRepository, UnknownTable, check_table_id, stamped
from events.secrets import SeedVault
from events.snapshots import KeptAnswers
from events.store import (
    AlreadyAppended,
    Appended,
    ConcurrencyConflict,
    Mark,
    Quota,
    WindowCount,
)
from service import bundle
from service.audit import audit
from service.signing import Signer
from service.views import (
    SPECTATOR,
    Caller,
    Listing,
    LogOf,
    MoveMade,
    MovesOf,
    ScoresOf,
    SeatGiven,
    SeatsOf,
    Shown,
    TableOf,
    Views,
)
from telemetry.metrics import Metrics


class ServiceError(Exception):
    """A request the application service refuses; `extra` adds members to its problem."""

    def __init__(self, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.extra = extra


class GameNotHosted(ServiceError):
    """A table asked for a game this service does not host."""


class BusyTable(ServiceError):
    """The table changed on every attempt to decide a command on it."""


class MissingToken(ServiceError):
    """A seat's action without a seat's token."""


class InvalidToken(ServiceError):
    """A token that holds no seat at this table, or a malformed Authorization header."""


class IdempotencyKeyReused(ServiceError):
    """An Idempotency-Key sent again with a different move."""


class UnknownVersion(ServiceError):
    """A version the table never had."""


class GameNotFinished(ServiceError):
    """Something only a finished game has (its audit, its export) asked of a running one."""


LOG = logging.getLogger(__name__)
Clock = Callable[[], datetime]
SEAT_ATTEMPTS = 5
LIST_SCAN = 10
EXPORT_PAGE = 500
"""Versions of the log read at a time while the whole of it is streamed."""
SCORES = "scores"
AUDIT = "audit"
"""Names of the answers kept in Redis (`KeptAnswers`)."""
"""A listing looks at no more than this many times `limit` of the newest tables."""


def utc_now() -> datetime:
    return datetime.now(UTC)


def random_name(nbytes: int) -> str:
    """`nbytes` random bytes as URL-safe text that never starts with `-`, which a command line
    (the examples' `--join <table>`, say) would take for an option."""
    while (name := secrets.token_urlsafe(nbytes)).startswith("-"):
        pass
    return name


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def bot_seat_name(bot: str | None) -> str:
    """The name shown for a seat a machine plays, unless its creator gave one."""
    return f"{bot} bot" if bot else "webhook bot"


@dataclass(frozen=True)
class Pending:
    """Decided commands: their events as they will be stored, and the table after them."""

    records: list[Recorded]
    after: Loaded

    def then(self, following: Pending) -> Pending:
        """These commands and `following`, decided on the table after them, as one append."""
        return Pending(self.records + following.records, following.after)


@dataclass(frozen=True)
class SeatAnswer:
    """The answer to taking a seat, and whether it is the replay of an earlier request's."""

    shown: Shown
    replayed: bool = False


@dataclass(frozen=True)
class MoveAsked:
    """A seat's move request: the move, the version it was decided on, the seat-scoped
    idempotency key (if any) and the fingerprint its receipt holds."""

    move: JSON
    expected_version: int
    key: str | None
    fingerprint: str
    quotas: Sequence[Quota] = ()
    """Where the append counts the request (its rate limit), if it gets that far."""


@dataclass(frozen=True)
class MoveAnswer:
    shown: Shown
    replayed: bool = False
    counted: tuple[WindowCount, ...] | None = None
    """The request's count in each of its quotas, when its append counted it; None: it did not
    (a replayed answer, or no quotas given)."""


@dataclass(frozen=True)
class BotSeat:
    """A seat given to a machine at creation: a built-in `bot` by name, at its `level`."""

    seat: int
    bot: str
    name: str | None = None
    level: str | None = None


class Scheduled(Protocol):
    @property
    def kept(self) -> int | None:
        """The bot seat whose turn, due at once, the worker that asked plays itself."""
        ...


class Turns(Protocol):
    """Where the bot seats' turns go once a table has changed (the workers' `TurnQueue`)."""

    def expect(self, table: Table, *, marked: bool = False) -> Mark | None:
        """Before `table` is appended: have the sweep look at it soon, in case `schedule`
        never runs or fails after the append; the mark for the append to write, if it is
        the append's to write. `marked`: the sweep will look at the table anyway (a queued
        bot turn's claim holds it), so a mark is only worth the append's carrying it."""
        ...

    def schedule(
        self, table: Table, *, keep: bool = False, claimed: Sequence[bool] | None = None
    ) -> Scheduled:
        """After `table` is appended: queue its bot turns (and what else it waits for).
        `claimed`: which of the claims in `expect`'s mark the append won."""
        ...

    def recheck(self, table: Table) -> None:
        """Have the sweep schedule `table` again at once: what was scheduled was overwritten."""
        ...

    def refused(self, table: Table, actual: int) -> None:
        """The append of `table` that `expect` was told of was refused: the stream is at
        `actual`."""
        ...


@dataclass(frozen=True)
class BotMoved:
    """A bot's move appended: the table after it, and the bot seat whose turn came due at once
    and was left to the worker that made the move (None: any such turn was queued)."""

    after: Loaded
    kept: int | None


class Admission(Protocol):
    """Whether the client opening a table may have one more (`service.quotas.Quotas`)."""

    def admit(self, owner: str, table_id: str, *, all_bots: bool) -> None:
        """Count `table_id` for `owner`, or refuse it with a `ServiceError`."""
        ...


def held(loaded: Loaded, caller: Caller) -> Loaded:
    """`loaded`, if the caller's token still holds its seat there. The seat was found in a table
    this process had cached; if the stream has since lost the event that gave it (Redis lost
    its last writes), the token holds nothing, and must not be shown that seat's view."""
    digest = caller.token_sha256
    if digest is not None and loaded.table.seat_of(digest) != caller.seat:
        raise InvalidToken("this token holds no seat at this table")
    return loaded


def same_request(stored: str, fingerprint: str, what: str = "move") -> None:
    """Refuse a key sent again with another request (a move at another version, another seat)."""
    if stored != fingerprint:
        raise IdempotencyKeyReused(
            f"this Idempotency-Key was already used for a different {what}; use a new key"
        )


def request_fingerprint(request: JSON) -> str:
    """What a receipt keeps of the request that wrote it, to tell a retry from another request
    under the same key."""
    return hashlib.sha256(canonical_json(request)).hexdigest()


def _masked(data: bytes, idempotency_key: str) -> bytes:
    """`data` XOR a stream drawn from `idempotency_key`: masking twice gives `data` back."""
    stream = hashlib.shake_256(b"spieltisch seat token\0" + idempotency_key.encode())
    mask = stream.digest(len(data))
    return bytes(a ^ b for a, b in zip(data, mask, strict=True))


def seal_token(token: str, idempotency_key: str) -> str:
    """`token` masked (hex) for the receipt of a seat taken under `idempotency_key`: Redis keeps
    tokens only as hashes, and this one is of no use to a reader of Redis who does not know the
    key, which only the client that took the seat sends."""
    return _masked(token.encode(), idempotency_key).hex()


def unseal_token(sealed: str, idempotency_key: str) -> str:
    """The token `seal_token` masked, given the same key again."""
    return _masked(bytes.fromhex(sealed), idempotency_key).decode()


def seated(caller: Caller) -> int:
    """The caller's seat; `MissingToken` for a spectator."""
    if caller.seat is None:
        raise MissingToken("send the seat's token as 'Authorization: Bearer <token>' to act for it")
    return caller.seat


class TableCommands:
    """Creates tables, seats players, takes moves: decides commands and appends their events."""

    def __init__(
        self,
        *,
        repository: TableRepository,
        vault: SeedVault,
        views: Views,
        clock: Clock = utc_now,
        new_seed: Callable[[], bytes] = lambda: secrets.token_bytes(SEED_BYTES),
        new_token: Callable[[], str] = lambda: random_name(32),
        new_id: Callable[[], str] = lambda: random_name(9),
        turns: Turns | None = None,
        bots: BotCatalogue | None = None,
        index: TableIndex | None = None,
        default_clock: Mapping[str, JSON] | None = None,
        receipts_ttl_seconds: int = 24 * 3600,
        metrics: Metrics | None = None,
        quotas: Admission | None = None,
    ) -> None:
        self.repository = repository
        self.metrics = metrics
        self.quotas = quotas
        self.default_clock = dict(default_clock or {})
        self.receipts_ttl_seconds = receipts_ttl_seconds
        self.tables = repository.tables
        self.vault = vault
        self.views = views
        self.clock = clock
        self.new_seed = new_seed
        self.new_token = new_token
        self.new_id = new_id
        self.turns = turns
        self.bots = bots
        self.index = index
        # A seed never changes once stored, so each process asks Redis for it once.
        self._seeds = functools.lru_cache(maxsize=repository.cache.size)(vault.get)

    def create(
        self,
        game: str,
        seats: int,
        options: Mapping[str, JSON],
        entropy: str | None,
        bots: Sequence[BotSeat] = (),
        *,
        clock: Mapping[str, JSON] | None = None,
        owner: str | None = None,
    ) -> Shown:
        """Open a table, with `bots` already seated, on `clock` (what it leaves out: this
        service's defaults); the seed stays secret, `GameCreated` carries only its commitment.
        A table whose every seat is a bot plays itself. `owner` (the client's address) is
        counted against the quotas; None counts nothing.

        The table is listed in the index before its events are appended, so that nothing
        after the append can fail and an acknowledged table is always listed; an id whose
        append then failed names no stream, and `list_tables` skips it.
        """
        if game not in self.tables.registry:
            known = self.tables.registry.ids()
            raise GameNotHosted(f"there is no game {game!r}; known: {known}")
        levels = [self._bot_level(bot_seat.bot, bot_seat.level, game) for bot_seat in bots]
        table_id, seed = self.new_id(), self.new_seed()
        command = CreateGame(
            table_id,
            game,
            seats,
            dict(options),
            commitment(seed),
            entropy,
            clock={**self.default_clock, **(clock or {})},
        )
        pending = self._decide(None, command, seed, seat=None)
        for bot_seat, level in zip(bots, levels, strict=True):
            name = bot_seat.name or bot_seat_name(bot_seat.bot)
            sit = TakeSeat(bot_seat.seat, name, None, bot=bot_seat.bot, level=level)
            pending = pending.then(self._decide(pending.after, sit, seed, seat=None))
        if owner is not None and self.quotas is not None:
            self.quotas.admit(owner, table_id, all_bots=len(bots) == seats)
        self.vault.put(table_id, seed)
        if self.index is not None:
            self.index.add(table_id, datetime.fromisoformat(pending.records[0].meta["time"]))
        self._commit(table_id, pending)
        return self.views.show(TableOf(pending.after.table), SPECTATOR)

    def take_seat(
        self,
        table_id: str,
        caller: Caller,
        seat: int | None,
        name: str | None,
        entropy: str | None,
        *,
        bot: str | None = None,
        level: str | None = None,
        webhook: str | None = None,
        idempotency_key: str | None = None,
    ) -> SeatAnswer:
        """Sit a player, a built-in `bot` (at `level`) or a `webhook` down. The answer holds the
        seat's token, never shown again; a built-in bot's seat has none, as nobody else plays it.
        The table in it is as the new seat's holder sees it, or for a seat given to a machine,
        as `caller` does.

        Sent again with its `idempotency_key` (its answer was lost), the request is answered with
        the seat it took and that seat's token, and the table as it is now: nothing is taken
        twice. The key's receipt holds the token masked by the key (`seal_token`)."""
        fingerprint = request_fingerprint([seat, name, entropy, bot, level, webhook])
        # Apart from moves' keys, which begin with a seat.
        key = None if idempotency_key is None else f"seat:{idempotency_key}"
        loaded = held(self.repository.load(table_id), caller)
        if bot is not None:
            level = self._bot_level(bot, level, loaded.table.game)
        token = None if bot is not None else self.new_token()
        name = name or bot_seat_name(bot)
        command = TakeSeat(
            seat,
            name,
            None if token is None else token_hash(token),
            entropy,
            bot=bot,
            webhook=webhook,
            level=level,
        )
        for attempt in range(SEAT_ATTEMPTS):
            if attempt:
                loaded = self.repository.load(table_id)
            try:
                pending = self._decide(loaded, command, self._seeds(loaded.table.id), seat=None)
            except TableError:
                # A repeated key is answered with its first answer: the append script finds it,
                # and a request refused before it got there (the first took the seat) looks here.
                first = None if key is None else self.repository.store.receipt(table_id, key)
                if first is None:
                    raise
                assert idempotency_key is not None
                return self._seat_replay(table_id, caller, first, fingerprint, idempotency_key)
            taken: int = pending.records[0].data["seat"]
            receipt = ""
            if idempotency_key is not None:
                kept = "-" if token is None else seal_token(token, idempotency_key)
                receipt = f"{fingerprint} {taken} {kept}"
            try:
                outcome, _ = self._commit(table_id, pending, idempotency=key, receipt=receipt)
            except ConcurrencyConflict:
                continue  # someone else sat down meanwhile: decide again on the new state
            if isinstance(outcome, AlreadyAppended):  # a request with this key was first
                assert idempotency_key is not None
                return self._seat_replay(
                    table_id, caller, outcome.receipt, fingerprint, idempotency_key
                )
            shown = self.views.show(SeatGiven(pending.after.table, taken, token), caller)
            return SeatAnswer(shown)
        raise BusyTable("the table changed on every attempt; try again")

    def _seat_replay(
        self, table_id: str, caller: Caller, receipt: str, fingerprint: str, idempotency_key: str
    ) -> SeatAnswer:
        """The answer to the seat a receipt records: that seat, its token, the table now."""
        stored, taken, kept = receipt.split()
        same_request(stored, fingerprint, what="seat")
        token = None if kept == "-" else unseal_token(kept, idempotency_key)
        table = self.repository.load(table_id).table
        return SeatAnswer(self.views.show(SeatGiven(table, int(taken), token), caller), True)

    def move(
        self,
        table_id: str,
        caller: Caller,
        move: JSON,
        expected_version: int,
        idempotency_key: str | None,
        *,
        quotas: Sequence[Quota] = (),
    ) -> MoveAnswer:
        """Decide and append a move; a repeated idempotency key gets the first answer back.
        The append counts the request in `quotas` (`QuotaExceeded` past one: nothing written).

        Of concurrent requests with one key, one is written and every other is answered with
        its replay: the append script looks the key up before the version, and a request
        refused before it got there (the table moved on under it) looks again.
        """
        seat = seated(caller)
        fingerprint = request_fingerprint([move, expected_version])
        key = None if idempotency_key is None else f"{seat}:{idempotency_key}"
        asked = MoveAsked(move, expected_version, key, fingerprint, quotas)
        loaded, unread = self.repository.head(table_id, expected_version)
        try:
            try:
                return self._move(loaded, caller, asked)
            except (ConcurrencyConflict, RuleError, TableError):
                if not unread:
                    raise
            # Decided on the cached table unread: only the stream's own table may refuse it.
            return self._move(self.repository.load(table_id), caller, asked)
        except (ConcurrencyConflict, RuleError, TableError):
            # A repeated key is answered with its first answer: the append script finds it
            # before the version, and a request refused before it got there looks here.
            if key is None or (first := self.repository.store.receipt(table_id, key)) is None:
                raise
            return self._replay(table_id, caller, first, fingerprint)

    def _move(self, unheld: Loaded, caller: Caller, asked: MoveAsked) -> MoveAnswer:
        """The move `asked`, decided on `unheld` and appended on its head."""
        seat = seated(caller)
        table_id = unheld.table.id
        move, fingerprint, key = asked.move, asked.fingerprint, asked.key
        loaded = held(unheld, caller)
        if asked.expected_version != loaded.table.version:
            raise ConcurrencyConflict(asked.expected_version, loaded.table.version)
        if (taken := loaded.table.seats[seat]) is not None and taken.bot is not None:
            raise NotYourTurn(f"seat {seat} was handed to a bot; it plays the seat from now on")
        command = MakeMove(seat, move, spent=self._spent(loaded))
        pending = self._decide(loaded, command, self._seeds(table_id), seat=seat)
        # The receipt names the versions the move appended; a replay shows them again.
        receipt = f"{fingerprint} {pending.records[0].seq} {pending.records[-1].seq}"
        outcome, _ = self._commit(
            table_id,
            pending,
            idempotency=key,
            receipt=receipt if key else "",
            quotas=asked.quotas,
        )
        if isinstance(outcome, AlreadyAppended):
            return self._replay(table_id, caller, outcome.receipt, fingerprint)
        self._count_move(loaded.table.game, "person")
        shown = self.views.show(MoveMade(pending.after.table, pending.records), caller)
        return MoveAnswer(shown, counted=outcome.counted if asked.quotas else None)

    def leave(self, table_id: str, caller: Caller) -> Shown:
        """The caller resigns: a bot plays its seat for the rest of the game (recorded)."""
        seat = seated(caller)
        for _ in range(SEAT_ATTEMPTS):
            loaded = self.repository.load(table_id)
            pending = self._decide(loaded, Leave(seat), self._seeds(table_id), seat=seat)
            try:
                self._commit(table_id, pending)
            except ConcurrencyConflict:
                continue  # a move landed meanwhile: leave the table as it is now
            return self.views.show(TableOf(pending.after.table), caller)
        raise BusyTable("the table changed on every attempt; try again")

    def expire(self, loaded: Loaded) -> bool:
        """Close `loaded`, an open table nobody sat down at in time; False if it changed."""
        pending = self._decide(loaded, Expire(), self._seeds(loaded.table.id), seat=None)
        try:
            self._commit(loaded.table.id, pending)
        except ConcurrencyConflict:
            return False
        return True

    def recheck(self, loaded: Loaded) -> None:
        """Have the workers' sweep schedule what `loaded`'s table waits for again, at once (a
        stale timeout job found its seat still waited for: see `TurnPlayer.time_out`)."""
        if self.turns is not None:
            self.turns.recheck(loaded.table)

    def play_for(
        self,
        loaded: Loaded,
        seat: int,
        move: JSON,
        substituted: str | None = None,
        *,
        queued: bool = False,
        keep: bool = False,
    ) -> BotMoved | None:
        """Append a bot's move for `seat` on `loaded`; None if the table moved on meanwhile.

        `substituted` is why a stand-in chose the move instead of the seat's own bot. `queued`:
        this is the bot seat's own queued turn, so the table is marked as waiting already.
        `keep`: the caller plays the next bot turn due at once itself (`Turns.schedule`).
        """
        command = MakeMove(seat, move, substituted, self._spent(loaded))
        pending = self._decide(loaded, command, self._seeds(loaded.table.id), seat=seat)
        try:
            # A bot's turn was queued by a `schedule` that marked the table as waiting until the
            # turn's claim runs out, so the sweep finds it already.
            _, scheduled = self._commit(loaded.table.id, pending, marked=queued, keep=keep)
        except ConcurrencyConflict:
            return None
        self._count_move(loaded.table.game, "bot" if substituted is None else "stand_in")
        return BotMoved(pending.after, scheduled.kept if scheduled else None)

    def _count_move(self, game: str, by: str) -> None:
        if self.metrics is not None:
            self.metrics.move(game, by)

    def _spent(self, loaded: Loaded) -> float | None:
        """What a decision now costs a seat's time bank: the time since the table last changed
        (None at a table without banks, where nothing is charged)."""
        changed = loaded.table.changed_at
        if not loaded.table.banks or changed is None:
            return None
        return max(0.0, (self.clock() - changed).total_seconds())

    def _bot_level(self, bot: str, level: str | None, game: str) -> str | None:
        """The level `bot` will play `game` at; `UnknownBot` naming what is wrong if it cannot."""
        if self.bots is None:
            raise UnknownBot("this service has no bots")
        return self.bots.level(bot, level, game)

    def _replay(self, table_id: str, caller: Caller, receipt: str, fingerprint: str) -> MoveAnswer:
        """The answer to the move a receipt records, built again from the log for `caller`
        (the key is the seat's own, so the caller is the seat that made the move)."""
        if receipt.startswith("{"):
            # Written before receipts were compact: it holds the answer itself.
            legacy = json.loads(receipt)
            same_request(legacy["fingerprint"], fingerprint)
            return MoveAnswer(Shown(legacy["body"]), replayed=True)
        stored, first, last = receipt.split()
        same_request(stored, fingerprint)
        records = self.repository.store.read(table_id, START, until=int(last))
        table = self.tables.fold(record.event for record in records)
        assert table is not None
        made = MoveMade(stamped(table, records[-1]), records[int(first) - 1 :])
        return MoveAnswer(self.views.show(made, caller), replayed=True)

    def _decide(
        self, loaded: Loaded | None, command: Command, seed: bytes, seat: int | None
    ) -> Pending:
        """Decide `command` and fold its events, without writing anything yet."""
        before = loaded.table if loaded else None
        events = self.tables.decide(before, command, seed)
        # The command's id is its first event's hash (`seal`), known once it is sealed.
        meta = {
            "command": command_to_json(command),
            "seat": seat,
            "time": self.clock().isoformat(),
        }
        records = seal(
            events, meta, loaded.position if loaded else START, private=PRIVATE_SEAT_FIELDS
        )
        table = self.tables.fold(events, before)
        assert table is not None
        return Pending(records, Loaded(stamped(table, records[-1]), records[-1].position))

    def _commit(
        self,
        table_id: str,
        pending: Pending,
        *,
        idempotency: str | None = None,
        receipt: str = "",
        marked: bool = False,
        keep: bool = False,
        quotas: Sequence[Quota] = (),
    ) -> tuple[Appended | AlreadyAppended, Scheduled | None]:
        """Append `pending`, then queue its bot turns (`keep`: see `Turns.schedule`); what was
        appended, and what was scheduled (None: nothing). Once the append has landed the command
        is done: a failure to queue is logged, never raised, and the sweep queues them. The
        append that ends the game sets its receipts to expire; its log never does. `marked`:
        the sweep will look at the table anyway (see `Turns.expect`). `quotas`: where the append
        counts its request (`EventStore.append_sealed`)."""
        table = pending.after.table
        mark = None if self.turns is None else self.turns.expect(table, marked=marked)
        # A table's last append: its receipts (moves', seats') are kept a while, then dropped.
        ends = any(record.type in (GAME_FINISHED, TABLE_EXPIRED) for record in pending.records)
        try:
            outcome = self.repository.commit(
                table_id,
                pending.records,
                pending.after,
                idempotency=idempotency,
                receipt=receipt,
                receipts_ttl=self.receipts_ttl_seconds if ends else 0,
                mark=mark,
                quotas=quotas,
            )
        except ConcurrencyConflict as conflict:
            if self.turns is not None:
                self.turns.refused(table, conflict.actual)
            raise
        scheduled = None
        if isinstance(outcome, Appended) and self.turns is not None:
            try:
                scheduled = self.turns.schedule(table, keep=keep, claimed=outcome.claimed)
            except Exception:
                LOG.exception(
                    "table %s is stored at version %d, but its bot turns could not be queued; "
                    "the sweep will queue them",
                    table_id,
                    table.version,
                )
        return outcome, scheduled


class TableQueries:
    """Answers what a caller may see of tables; never writes."""

    def __init__(
        self,
        *,
        repository: TableRepository,
        views: Views,
        index: TableIndex | None,
        signer: Signer,
        kept: KeptAnswers | None = None,
    ) -> None:
        self.repository = repository
        self.kept = kept
        self.tables = repository.tables
        self.store = repository.store
        self.views = views
        self.index = index
        self.signer = signer

    def caller(self, table_id: str, token: str | None) -> Caller:
        """The caller a bearer token (or its absence) stands for at this table."""
        if token is None:
            return SPECTATOR
        digest = token_hash(token)
        # A seat, once taken, is never given up: a seat found in the cached table is still right.
        cached = self.repository.cached(table_id)
        seat = cached.table.seat_of(digest) if cached else None
        if seat is None:
            seat = self.repository.load(table_id).table.seat_of(digest)
        if seat is None:
            raise InvalidToken("this token holds no seat at this table")
        return Caller(seat, digest)

    def load(self, table_id: str, caller: Caller) -> Loaded:
        """The table as of its latest event, loaded for `caller` (see `held`)."""
        return held(self.repository.load(table_id), caller)

    def current(self, table_id: str) -> Table | None:
        """The table as it is now, or None if there is no such table."""
        try:
            return self.repository.load(table_id).table
        except UnknownTable:
            return None

    def view(self, table_id: str, caller: Caller) -> Shown:
        return self.views.show(TableOf(self.load(table_id, caller).table), caller)

    def seats(self, table_id: str) -> Shown:
        return self.views.show(SeatsOf(self.repository.load(table_id).table), SPECTATOR)

    def list_tables(self, status: str | None, game: str | None, limit: int) -> Shown:
        """Up to `limit` tables, newest first, of `status` and `game` (None: any), as anyone
        may see them: the public outline and when the table was opened.

        Ids come from the index; each table is loaded from its stream (through the cache),
        and an id with no stream (its creation's append failed) is skipped. Only the
        `LIST_SCAN * limit` newest ids are looked at, so a rare filter may find fewer than
        `limit` though older tables match. A game this service does not host has no tables.
        """
        found: list[tuple[Table, datetime]] = []
        if game is not None and game not in self.tables.registry:
            return self.views.show(Listing(found), SPECTATOR)
        newest = self.index.newest(limit * LIST_SCAN) if self.index is not None else []
        for table_id, created in newest:
            try:
                table = self.repository.load(table_id).table
            except UnknownTable:
                continue  # listed before its append, which failed
            if status not in (None, table.status.value) or game not in (None, table.game):
                continue
            found.append((table, created))
            if len(found) == limit:
                break
        return self.views.show(Listing(found), SPECTATOR)

    def score_timeline(self, table_id: str) -> Shown:
        """Each seat's score from the version the game started at up to the current one:
        `[version, scores]` where the scores changed, and at the last. Scores are public, so
        every caller gets the same timeline."""
        check_table_id(table_id)
        current, timeline = self._score_changes(table_id)
        scores = self.tables.scores(current)
        if scores is not None and (not timeline or timeline[-1][0] != current.version):
            timeline.append((current.version, scores))
        return self.views.show(ScoresOf(current, timeline), SPECTATOR)

    def _score_changes(self, table_id: str) -> tuple[Table, list[tuple[int, list[int]]]]:
        """The table now, and the versions up to it where the scores changed (the first
        scored one too).

        The changes are kept in Redis with the position they cover and extended by the events
        after it only, folded onto the table there (from the nearest snapshot); changes the
        stream no longer holds are made again from the start.
        """
        kept = self.kept.get(table_id, SCORES) if self.kept is not None else None
        base: Loaded | None = None
        changes: list[tuple[int, list[int]]] = []
        if kept is not None:
            covered, value = kept
            head = self.store.head(table_id)
            if covered == head:
                return self.repository.load(table_id).table, [(v, scores) for v, scores in value]
            if covered.version < head.version:
                there = self.repository.load_at(table_id, covered.version)
                if there.position == covered:
                    base, changes = there, [(v, scores) for v, scores in value]
        records = self.store.read(table_id, base.position if base else START)
        if base is None and not records:
            raise UnknownTable(table_id)
        table = base.table if base else None
        for past in self.tables.history((record.event for record in records), table):
            scores = self.tables.scores(past)
            if scores is not None and (not changes or scores != changes[-1][1]):
                changes.append((past.version, scores))
            table = past
        assert table is not None
        if self.kept is not None and records:
            self.kept.put(table_id, SCORES, table.game, records[-1].position, changes)
        return table, changes

    def legal_moves(self, table_id: str, caller: Caller) -> Shown:
        seated(caller)
        return self.views.show(MovesOf(self.load(table_id, caller).table), caller)

    def events(self, table_id: str, caller: Caller, after: int, limit: int | None = None) -> Shown:
        """The log after version `after`, up to `limit` versions of it (None: up to the current
        one), as the caller may see it now; `through` in the answer is the last version the
        page covers, the `after` of the next (the table's version: there is no next)."""
        table = self.load(table_id, caller).table
        through = table.version if limit is None else min(table.version, after + limit)
        records = self.store.read(table_id, Position(after), until=through, verify=False)
        return self.views.show(LogOf(table, records, through), caller)

    def event_pages(self, table_id: str, caller: Caller, after: int) -> Iterator[Shown]:
        """The whole log after `after` as the caller may see it now, in pages of `EXPORT_PAGE`
        versions read one at a time: a long log is streamed, never held whole. The table is
        loaded (and the caller checked) before the first page is asked for."""
        table = self.load(table_id, caller).table

        def pages() -> Iterator[Shown]:
            for first in range(after, table.version, EXPORT_PAGE) or [after]:
                through = min(table.version, first + EXPORT_PAGE)
                records = self.store.read(table_id, Position(first), until=through, verify=False)
                yield self.views.show(LogOf(table, records, through), caller)

        return pages()

    def replay(self, table_id: str, version: int, caller: Caller) -> Shown:
        """The caller's view of the table as it stood at `version`, folded from the nearest
        snapshot at or below it."""
        current = self.load(table_id, caller).table
        if not 1 <= version <= current.version:
            raise UnknownVersion(
                f"table {table_id} has versions 1 to {current.version}, not {version}"
            )
        past = self.repository.load_at(table_id, version).table
        return self.views.show(TableOf(past), caller)

    def audit(self, table_id: str) -> dict[str, JSON]:
        """Verify a finished game: chain, seed commitment, versions, every command decided again.
        Its log never changes once finished, so it is audited once and the finding kept with
        the head it covers (served while the stream's head is that one)."""
        check_table_id(table_id)
        kept = self.kept.get(table_id, AUDIT) if self.kept is not None else None
        if kept is not None and kept[0] == self.store.head(table_id):
            found: dict[str, JSON] = kept[1]
            return found
        # The audit reads the stored log itself, unverified, so that it can report a broken chain
        # instead of failing on it.
        records = self._finished_log(table_id, verify=False)
        found = audit(self.tables, records, self.store.upcast).to_json()
        game = self.store.upcast(records[0]).data.get("game")
        if self.kept is not None and isinstance(game, str) and game in self.tables.registry:
            self.kept.put(table_id, AUDIT, game, records[-1].position, found)
        return found

    def export(self, table_id: str) -> dict[str, JSON]:
        """A finished game's signed bundle, for `spieltisch verify`. The chain is checked first:
        the service signs only a log it can vouch for."""
        return bundle.build(self._finished_log(table_id), self.store.upcast, self.signer)

    def _finished_log(self, table_id: str, *, verify: bool = True) -> list[Recorded]:
        """A finished game's events as stored; a problem if there is none or it still runs."""
        check_table_id(table_id)
        records = self.store.read(table_id, START, verify=verify, upcast=False)
        if not records:
            raise UnknownTable(table_id)
        if all(record.type != GAME_FINISHED for record in records):
            raise GameNotFinished(
                f"table {table_id} is still being played; its seed is revealed when it ends"
            )
        return records
