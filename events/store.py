"""The event store: one Redis stream per game, appended to by one atomic Lua script."""

from __future__ import annotations

import hashlib
import logging
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from importlib.resources import files
from typing import Any, cast

from redis import Redis
from redis.cluster import RedisCluster
from redis.exceptions import AskError, MovedError, NoScriptError, RedisError

from domain.rules import Event
from events.envelope import GENESIS, START, Position, Recorded, seal, verify_chain
from events.packing import pack, unpack
from events.upcasting import Upcasters

APPEND_SCRIPT = files("events").joinpath("append.lua").read_text()
LOG = logging.getLogger(__name__)
COMMAND_LOOKBACK = 16
"""Entries read back at a time to find the first event of the command a read starts inside."""
REPLICAS_RECHECK_SECONDS = 5.0
"""How long appends trust a master's count of its attached replicas, taken when a WAIT fell
short: a master left without its replica (it was the replica, and its master failed) would
otherwise make every append wait the whole timeout for a replica that is not there."""


def stream_key(game_id: str) -> str:
    # The hash tag keeps all of a game's keys in one cluster slot, as the Lua script needs.
    return f"game:{{{game_id}}}:events"


def idempotency_key(game_id: str) -> str:
    return f"game:{{{game_id}}}:idempotency"


def sharded_news(client: Redis) -> bool:
    """Whether appends through `client` publish their news on the stream's own shard (SPUBLISH,
    heard by readers subscribed with SSUBSCRIBE): on a Redis Cluster, where a classic PUBLISH
    goes to every node, so that the news of every table would cost every node. One server
    keeps the classic channels."""
    return isinstance(client, RedisCluster)


INDEX_SHARDS = 16
"""How many sorted sets the table index is spread over. Fixed: a game's shard follows from its
id, so changing the count would hide the games listed before."""


def created_index_key(game_id: str) -> str:
    """The sorted set listing `game_id` among games scored by creation time (`events.index`):
    one of `INDEX_SHARDS`, which a cluster spreads over its slots. The first keeps the name of
    the single set there was before, so an index written then is read on."""
    shard = zlib.crc32(game_id.encode()) % INDEX_SHARDS
    return created_index_shard(shard)


def created_index_shard(shard: int) -> str:
    return "games:created" if shard == 0 else f"games:created:{shard}"


class ConcurrencyConflict(Exception):
    """The stream is not at the version the append expected; `head`, where known, is the hash
    of the stream's last event."""

    def __init__(self, expected: int, actual: int, head: str | None = None) -> None:
        super().__init__(f"expected version {expected}, the stream is at {actual}")
        self.expected = expected
        self.actual = actual
        self.head = head

    @property
    def position(self) -> Position | None:
        """Where the stream stands, if the store said."""
        return None if self.head is None else Position(self.actual, self.head)


@dataclass(frozen=True)
class Appended:
    """The events were written; `records` as stored."""

    records: list[Recorded]
    replicas: int | None = None
    """How many replicas had the events when the append was answered; None: not asked
    (`EventStore`'s `wait_replicas` is 0)."""
    claimed: tuple[bool, ...] | None = None
    """Which of its mark's `claims` the append set (False: set already); None: it had none."""
    counted: tuple[WindowCount, ...] = ()
    """Each of its quotas' windows, counted with this append."""

    @property
    def position(self) -> Position:
        return self.records[-1].position


@dataclass(frozen=True)
class Mark:
    """What an append that lands also writes: `member` in the sorted set `key` at `score`
    (unless it is there already at a lower score, or whatever its score with `replace`), and
    each of `claims` set to 1 for `claim_ms` unless it is set already; with `stamps`, `stamp`
    recorded under `member` in that hash, so that whoever clears or moves the mark later can
    tell whether a newer append marked it since. Every key must be where the game's stream is
    (on a cluster, in its hash slot): the turn queue marks a table for the workers' sweep, and
    claims its bots' turns, this way when it shares the games' Redis, in the append's own round
    trip."""

    key: str
    member: str
    score: float
    replace: bool = False
    claims: tuple[str, ...] = ()
    claim_ms: int = 0
    stamps: str = ""
    stamp: int = 0


@dataclass(frozen=True)
class Quota:
    """A fixed window an append counts its request in before it writes anything: `amount`
    requests per `seconds`, counted under `key`, which must be where the game's stream is (on a
    cluster, in its hash slot). The web app counts a move's rate limit this way, in the append's
    own round trip."""

    key: str
    amount: int
    seconds: int


@dataclass(frozen=True)
class WindowCount:
    """A quota window's count, with this request, and the seconds until the window ends."""

    hits: int
    ttl: int


class QuotaExceeded(Exception):
    """The append's request went past one of its quotas: nothing was written."""

    def __init__(self, quota: Quota, counted: WindowCount) -> None:
        super().__init__(f"{counted.hits} requests in {quota.key}'s window; {quota.amount} allowed")
        self.quota = quota
        self.counted = counted


@dataclass(frozen=True)
class AlreadyAppended:
    """The idempotency key was used before: nothing was written; `receipt` is what it stored."""

    receipt: str


def entry_record(
    entry: tuple[bytes, dict[bytes, bytes]], prev: str = "", meta: Mapping[str, Any] | None = None
) -> Recorded:
    """The record a stream entry holds, numbered by the entry's id; a v2 one follows `prev` and
    takes `meta`, its command's, unless it stores that itself (`Recorded.from_stored`)."""
    entry_id, fields = entry
    seq = int(entry_id.split(b"-", 1)[0])
    return Recorded.from_stored(unpack(fields[b"e"]), fields[b"h"].decode(), seq, prev, meta)


class EventStore:
    """Appends to and reads from game streams; the same contract over Redis and fakeredis."""

    def __init__(
        self,
        redis: Redis,
        upcasters: Upcasters | None = None,
        *,
        blocking: Redis | None = None,
        wait_replicas: int = 0,
        wait_ms: int = 250,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._redis = redis
        # An append is answered once `wait_replicas` replicas of the stream's master have it
        # (Redis's WAIT), or `wait_ms` has passed: then a failover keeps what was acknowledged.
        self._wait_replicas = wait_replicas
        self._wait_ms = wait_ms
        self._clock = clock
        # Per master with fewer replicas attached than `wait_replicas`: how many it has, and
        # until when that count is trusted (`REPLICAS_RECHECK_SECONDS`).
        self._attached: dict[str, tuple[int, float]] = {}
        # Blocking reads need a client whose socket timeout outlasts the block (see `wait`).
        self._blocking = blocking or redis
        self._upcasters = upcasters or Upcasters()
        self._append_sha = hashlib.sha1(APPEND_SCRIPT.encode()).hexdigest()
        self._publish = "SPUBLISH" if sharded_news(redis) else "PUBLISH"

    def append(
        self,
        game_id: str,
        expected: Position,
        events: Sequence[Event],
        meta: Mapping[str, Any],
        *,
        idempotency: str | None = None,
        receipt: str = "",
        receipts_ttl: int = 0,
        mark: Mark | None = None,
        quotas: Sequence[Quota] = (),
    ) -> Appended | AlreadyAppended:
        """Append all of `events` or none: only if the stream is at `expected`.

        With an `idempotency` key that was used before on this game, nothing is written and the
        receipt stored with the first append is returned instead. A `receipts_ttl` (seconds)
        makes all of the game's receipts expire that long after this append. An append that
        lands writes its `mark` too, and each append counts its request in `quotas`
        (`append_sealed`).
        """
        return self.append_sealed(
            game_id,
            seal(events, meta, expected),
            idempotency=idempotency,
            receipt=receipt,
            receipts_ttl=receipts_ttl,
            mark=mark,
            quotas=quotas,
        )

    def append_sealed(
        self,
        game_id: str,
        records: Sequence[Recorded],
        *,
        idempotency: str | None = None,
        receipt: str = "",
        receipts_ttl: int = 0,
        mark: Mark | None = None,
        quotas: Sequence[Quota] = (),
    ) -> Appended | AlreadyAppended:
        """`append` for records already numbered and chained by `seal` (onto their first `prev`).
        With a `mark`, the append that lands also writes it, in the same script. `quotas` are
        counted once the version holds: past any of them, `QuotaExceeded` and nothing written
        (a repeated idempotency key, or a conflict, is answered before they are counted)."""
        if not records:
            raise ValueError("an append needs at least one event")
        expected = Position(records[0].seq - 1, records[0].prev)
        keys = [stream_key(game_id), idempotency_key(game_id)]
        args: list[str | bytes | int | float] = [
            expected.version,
            expected.head,
            idempotency or "",
            receipt,
            receipts_ttl,
            "" if mark is None else mark.member,
            0 if mark is None else mark.score,
            "" if mark is not None and mark.replace else "LT",
            0 if mark is None else mark.claim_ms,
            "" if mark is None or not mark.stamps else mark.stamp,
            self._publish,
            len(quotas),
        ]
        if mark is not None:
            keys += [mark.key, *([mark.stamps] if mark.stamps else []), *mark.claims]
        for quota in quotas:
            keys.append(quota.key)
            args += [quota.amount, quota.seconds]
        for record in records:
            args += [pack(record.raw) if record.envelope > 1 else record.raw, record.hash]
        replicas = None
        if self._wait_replicas:
            (outcome, value, *rest), replicas = self._run_replicated_append(keys, args)
        else:
            outcome, value, *rest = self._run_append(keys, args)
        if outcome == b"ok":
            if replicas is not None and replicas < self._wait_replicas:
                LOG.warning(
                    "game %s: %d of %d replicas had the append when it was answered; it "
                    "stands, but a failover before they catch up would lose it",
                    keys[0],
                    replicas,
                    self._wait_replicas,
                )
            claims = len(mark.claims) if mark else 0
            claimed = tuple(bool(won) for won in rest[:claims]) if claims else None
            counts = [int(number) for number in rest[claims:]]
            counted = tuple(map(WindowCount, counts[::2], counts[1::2]))
            return Appended(list(records), replicas, claimed, counted)
        if outcome == b"limited":
            hits, ttl = rest
            raise QuotaExceeded(quotas[int(value) - 1], WindowCount(int(hits), int(ttl)))
        if outcome == b"duplicate":
            return AlreadyAppended(value.decode())
        raise ConcurrencyConflict(expected.version, int(value), rest[0].decode())

    def _run_append(self, keys: list[str], args: list[str | bytes | int | float]) -> list[bytes]:
        # EVALSHA straight away (redis-py's Script wrapper costs more than the script's own work);
        # the script is loaded only when the server does not know it yet.
        try:
            reply = self._redis.evalsha(self._append_sha, len(keys), *keys, *args)
        except NoScriptError:
            self._redis.script_load(APPEND_SCRIPT)
            reply = self._redis.evalsha(self._append_sha, len(keys), *keys, *args)
        return cast(list[bytes], reply)

    def _run_replicated_append(
        self, keys: list[str], args: list[str | bytes | int | float]
    ) -> tuple[list[bytes], int]:
        """The append script and a WAIT for the replicas in one round trip, on one connection
        to the stream's master: WAIT counts only the writes made on the connection it is sent
        on, which a cluster client would send to every node instead. A master that no longer
        holds the stream's slot (after a failover or a slot move) is looked up again once."""
        for attempt in range(2):
            name, master = self._master(keys[0])
            wanted = self._replicas_attached(name)
            with master.pipeline(transaction=False) as pipe:
                pipe.evalsha(self._append_sha, len(keys), *keys, *args)
                if wanted:
                    pipe.wait(wanted, self._wait_ms)
                reply, *waited = pipe.execute(raise_on_error=False)
            if isinstance(reply, NoScriptError):
                master.script_load(APPEND_SCRIPT)
            elif (
                isinstance(reply, MovedError | AskError)
                and isinstance(self._redis, RedisCluster)
                and attempt == 0
            ):
                self._redis.nodes_manager.initialize()
            elif isinstance(reply, Exception):
                raise reply
            else:
                replicas = int(waited[0]) if waited else 0
                if wanted == self._wait_replicas and replicas < wanted:
                    self._count_attached(name, master)
                return list(reply), replicas
        raise RuntimeError("the append found no master for its stream twice")  # pragma: no cover

    def _master(self, key: str) -> tuple[str, Redis]:
        """The name and a client of the master holding `key` (one server: itself)."""
        if isinstance(self._redis, RedisCluster):
            node = self._redis.get_node_from_key(key)
            return node.name, self._redis.get_redis_connection(node)
        return "", self._redis

    def _replicas_attached(self, master: str) -> int:
        """How many replicas an append to `master` waits for: `wait_replicas`, unless a WAIT there
        fell short lately and the master then had fewer attached."""
        attached, until = self._attached.get(master, (self._wait_replicas, 0.0))
        if attached < self._wait_replicas and self._clock() < until:
            return attached
        return self._wait_replicas

    def _count_attached(self, master: str, client: Redis) -> None:
        """Ask `master` how many replicas it has (ROLE) after a WAIT there fell short; appends
        wait for those only until `REPLICAS_RECHECK_SECONDS` have passed. Never raises: the
        append it follows is made and must be answered so."""
        try:
            role = cast(list[Any], client.execute_command("ROLE"))  # type: ignore[no-untyped-call]
        except RedisError as error:
            LOG.warning("master %s: its replicas could not be counted: %s", master or "-", error)
            return
        attached = len(role[2]) if role[0] in (b"master", "master") else self._wait_replicas
        if attached >= self._wait_replicas:
            self._attached.pop(master, None)  # there, only behind: WAIT for them as before
            return
        self._attached[master] = (attached, self._clock() + REPLICAS_RECHECK_SECONDS)
        LOG.warning(
            "master %s has %d of the %d replicas appends wait for; appends there wait for those "
            "only for %.0f s, then ask again",
            master or "-",
            attached,
            self._wait_replicas,
            REPLICAS_RECHECK_SECONDS,
        )

    def receipt(self, game_id: str, idempotency: str) -> str | None:
        """The receipt stored by the append that first used `idempotency`, if any."""
        raw: bytes | None = self._redis.hget(idempotency_key(game_id), idempotency)  # type: ignore[assignment]
        return None if raw is None else raw.decode()

    def read(
        self,
        game_id: str,
        after: Position = START,
        *,
        until: int | None = None,
        verify: bool = True,
        upcast: bool = True,
    ) -> list[Recorded]:
        """Events after `after`, up to version `until`, upcast to current schema versions.

        With `verify` the hash chain is checked from `after` on, so a cached state built up to
        `after` is only ever extended by events that follow it. `upcast=False` returns the
        stored form, over which the chain was computed.
        """
        upper = "+" if until is None else f"{until}-0"
        if until is not None and until <= after.version:
            return []
        records = self._range(game_id, after.version + 1, upper, prev=after.head)
        if verify:
            verify_chain(records, after, hash_of=Recorded.stored_hash)
        if not upcast:
            return records
        return [self._upcasters.upcast(record) for record in records]

    def read_on(
        self, game_id: str, position: Position, *, until: int | None = None
    ) -> list[Recorded] | None:
        """The events after `position` (up to version `until`), verified and upcast, if the
        stream still holds `position` itself; None if it does not (it lost its last writes, or
        was restored or rewritten since), whatever follows there.

        The event at `position` is read along with those after it, in the same round trip, so
        a table cached at `position` is checked against the stream on every read for free.
        """
        if position.version == 0:
            return self.read(game_id, position, until=until)
        upper = "+" if until is None else f"{until}-0"
        records = self._range(game_id, position.version, upper, whole_first=False)
        if not records or records[0].position != position:
            return None
        verify_chain(records[1:], position, hash_of=Recorded.stored_hash)
        return [self._upcasters.upcast(record) for record in records[1:]]

    def head(self, game_id: str) -> Position:
        """Where the stream stands: its last event's version and hash (`START` if empty)."""
        entries: list[tuple[bytes, dict[bytes, bytes]]] = self._redis.xrevrange(  # type: ignore[assignment]
            stream_key(game_id), count=1
        )
        if not entries:
            return START
        entry_id, fields = entries[0]
        return Position(int(entry_id.split(b"-")[0]), fields[b"h"].decode())

    def _range(
        self, game_id: str, first: int, upper: str, *, prev: str = "", whole_first: bool = True
    ) -> list[Recorded]:
        """The stored records from version `first` up to the stream id `upper`; the first
        follows `prev` (where known; a v2 event's hash binds it, so a wrong one fails the chain).
        With `whole_first` a first event that does not open its command is given its meta."""
        # The client is made without decode_responses, so entries are (id, {field: bytes}).
        entries: list[tuple[bytes, dict[bytes, bytes]]] = self._redis.xrange(  # type: ignore[assignment]
            stream_key(game_id), f"{first}-0", upper
        )
        return self._records(game_id, entries, GENESIS if first == 1 else prev, whole_first)

    def _records(
        self,
        game_id: str,
        entries: list[tuple[bytes, dict[bytes, bytes]]],
        prev: str,
        whole_first: bool,
    ) -> list[Recorded]:
        """Stream entries as records, each v2 one given its predecessor's hash and the meta of
        the command it belongs to (looked up, if it began before the first entry; not for the
        first itself without `whole_first`)."""
        records: list[Recorded] = []
        meta: Mapping[str, Any] | None = None
        for entry in entries:
            record = entry_record(entry, prev, meta)
            if record.envelope > 1 and not record.meta and (records or whole_first):
                record = replace(record, meta=self._command_meta(game_id, record.seq))
            records.append(record)
            prev, meta = record.hash, record.meta
        return records

    def _command_meta(self, game_id: str, seq: int) -> Mapping[str, Any]:
        """The meta of the command event `seq` belongs to: stored with the first of its events."""
        upper = seq - 1
        while upper >= 1:
            entries: list[tuple[bytes, dict[bytes, bytes]]] = self._redis.xrevrange(  # type: ignore[assignment]
                stream_key(game_id), f"{upper}-0", "-", count=COMMAND_LOOKBACK
            )
            for entry in entries:
                opening = entry_record(entry)
                if opening.meta:
                    return opening.meta
            upper -= COMMAND_LOOKBACK
        return {}

    def wait(self, game_id: str, after: int, timeout_ms: int) -> list[Recorded]:
        """Events after version `after`, blocking up to `timeout_ms` until there are some.

        Redis blocks the read (XREAD BLOCK), so a waiting reader costs no polling. The chain is
        not checked here: a reader that needs it folds what it gets into a verified table. The
        read goes through the `blocking` client: with redis-py's default socket timeout (5 s) a
        longer block would end in a timeout error instead of an empty answer.
        """
        # The client is made without decode_responses: [(key, [(id, {field: bytes})])].
        found: list[tuple[bytes, list[tuple[bytes, dict[bytes, bytes]]]]] = self._blocking.xread(  # type: ignore[assignment]
            {stream_key(game_id): f"{after}-0"}, block=timeout_ms
        )
        if not found:
            return []
        _, entries = found[0]
        return [
            self._upcasters.upcast(record) for record in self._records(game_id, entries, "", True)
        ]

    def close(self) -> None:
        """Close the connections of the client for blocking reads, if it is one of its own
        (the other client belongs to whoever handed it in)."""
        if self._blocking is not self._redis:
            self._blocking.close()

    def upcast(self, record: Recorded) -> Recorded:
        """`record` with its data at the current schema version."""
        return self._upcasters.upcast(record)

    def last_types(self, game_ids: Sequence[str]) -> list[str | None]:
        """The type of each game's newest event (None: it has no stream), in one round trip."""
        pipe = self._redis.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.xrevrange(stream_key(game_id), "+", "-", count=1)
        found: list[list[tuple[bytes, dict[bytes, bytes]]]] = pipe.execute()
        return [entry_record(entries[0]).type if entries else None for entries in found]

    def exists(self, game_id: str) -> bool:
        return bool(self._redis.exists(stream_key(game_id)))
