"""The contract of `EventStore` and `SeedVault`, run on fakeredis and on a real Redis server."""

from __future__ import annotations

import hashlib
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeAlias, cast

import fakeredis
import pytest
import redis

from bench.cluster import Cluster
from domain.rules import Event
from events.connect import connect as client_of
from events.envelope import (
    GENESIS,
    START,
    ChainBroken,
    Position,
    Recorded,
    canonical_json,
    command_id,
    seal,
    verify_chain,
)
from events.packing import unpack
from events.secrets import SeedVault, seed_key
from events.store import (
    REPLICAS_RECHECK_SECONDS,
    AlreadyAppended,
    Appended,
    ConcurrencyConflict,
    EventStore,
    Mark,
    Quota,
    QuotaExceeded,
    stream_key,
)
from events.upcasting import Upcasters
from service.audit import default_upcasters
from tests.conftest import redis_named
from tests.faults import START_SECONDS, RedisServer
from tests.live import TEST_REDIS_URL

Client: TypeAlias = redis.Redis
Entries: TypeAlias = list[tuple[bytes, dict[bytes, bytes]]]
Connect: TypeAlias = "Callable[[], Client]"
Envelope: TypeAlias = dict[str, Any]

GAME = "g1"
OTHER_GAME = "g2"
META = {"seat": 0, "command": "c-1", "at": "2024-05-01T12:00:00Z"}


# --- helpers ------------------------------------------------------------------------------------


def counted(n: int, start: int = 1) -> list[Event]:
    """`n` distinct events."""
    return [Event("test.Counted", {"n": i}) for i in range(start, start + n)]


def appended(result: Appended | AlreadyAppended) -> Appended:
    assert isinstance(result, Appended), result
    return result


def add(
    store: EventStore, n: int, after: Position = START, game: str = GAME, **options: Any
) -> Position:
    """Append `n` events that must land; return the new position."""
    return appended(
        store.append(game, after, counted(n, after.version + 1), META, **options)
    ).position


def position_at(records: Sequence[Recorded], version: int) -> Position:
    return START if version == 0 else records[version - 1].position


def head_of(records: Sequence[Recorded], after: Position = START) -> Position:
    """Where the stream stands after reading `records` from `after`."""
    return records[-1].position if records else after


def seqs(records: Sequence[Recorded]) -> list[int]:
    return [record.seq for record in records]


def stored_length(client: Client, game: str = GAME) -> int:
    return cast(int, client.xlen(stream_key(game)))


def stored_entries(client: Client, game: str = GAME) -> Entries:
    """The raw stream entries (the clients here do not decode responses)."""
    return cast(Entries, client.xrange(stream_key(game)))


def rewrite_entry(client: Client, seq: int, change: Callable[[Envelope], Envelope]) -> None:
    """Test setup only: replace the stored envelope of event `seq` with `change(envelope)`.

    An entry is stored as `e`, the canonical JSON of what the envelope keeps of the event
    (v2: `t`, `v`, `d`, and `m` on a command's first event), and `h`, its hash. `change` sees
    the stored JSON with `seq`, `prev` and `hash` added, and may change any of them.
    """
    key = stream_key(GAME)
    entries = stored_entries(client)
    client.delete(key)
    prev = GENESIS
    for number, (entry_id, fields) in enumerate(entries, start=1):
        envelope = {**json.loads(unpack(fields[b"e"])), "hash": fields[b"h"].decode()}
        if number == seq:
            envelope = change({**envelope, "seq": number, "prev": prev})
        body = {k: v for k, v in envelope.items() if k not in ("hash", "seq", "prev")}
        client.xadd(key, {b"e": canonical_json(body), b"h": envelope["hash"]}, id=entry_id)
        prev = fields[b"h"].decode()


def rehashed(envelope: Envelope) -> Envelope:
    """The stored envelope with a hash that matches its (altered) content."""
    stored = {k: v for k, v in envelope.items() if k not in ("hash", "seq", "prev")}
    preimage = f"{envelope['seq']}:{envelope['prev']}:".encode() + canonical_json(stored)
    return {**envelope, "hash": hashlib.sha256(preimage).hexdigest()}


ON_EVERY_REDIS = [
    "fakeredis",
    pytest.param("redis", marks=pytest.mark.redis),
    pytest.param("cluster", marks=pytest.mark.cluster),
]
"""The contract holds on fakeredis, one Redis server and a Redis Cluster alike."""


@pytest.fixture(params=ON_EVERY_REDIS)
def any_redis(request: pytest.FixtureRequest) -> Client:
    """This module's tests run on a Redis Cluster too (tests/cluster.py)."""
    return redis_named(request)


@pytest.fixture
def store(any_redis: Client) -> EventStore:
    return EventStore(any_redis)


# --- append and read ----------------------------------------------------------------------------

MIXED = [
    Event("test.Started", {"seats": 2, "names": ["Ada", "Bo"]}),
    Event("test.Counted", {"n": 1}, 2),
    Event("test.Said", {"text": "grüß dich 🎲", "none": None, "ok": True, "x": 1.5}),
]


def test_append_then_read_returns_the_events_numbered_and_chained(store: EventStore) -> None:
    result = appended(store.append(GAME, START, MIXED, META))
    records = store.read(GAME)
    assert seqs(records) == [1, 2, 3]
    assert [record.event for record in records] == MIXED
    assert [record.v for record in records] == [1, 2, 1]
    # The command's meta comes back with every event of it, named by its first event's hash.
    assert all(
        record.meta == {**META, "command_id": command_id(records[0].hash)} for record in records
    )
    assert [record.prev for record in records] == [GENESIS] + [r.hash for r in records[:-1]]
    assert records == result.records
    assert result.position == Position(3, records[-1].hash)


def test_a_command_id_is_its_first_events_hash_written_as_a_uuid() -> None:
    for n in range(200):
        digest = hashlib.sha256(str(n).encode()).hexdigest()
        assert command_id(digest) == str(uuid.UUID(hex=digest[:32]))


def test_appends_continue_the_numbering(store: EventStore) -> None:
    first = add(store, 2)
    second = appended(store.append(GAME, first, counted(3, 3), META))
    assert seqs(second.records) == [3, 4, 5]
    assert seqs(store.read(GAME)) == [1, 2, 3, 4, 5]
    assert [record.data["n"] for record in store.read(GAME)] == [1, 2, 3, 4, 5]


def test_read_after_a_position_returns_only_later_events(store: EventStore) -> None:
    first = add(store, 2)
    later = appended(store.append(GAME, first, counted(3, 3), META)).records
    assert store.read(GAME, after=first) == later
    assert store.read(GAME, after=later[-1].position) == []


@pytest.mark.parametrize(
    ("after", "until", "expected"),
    [
        (0, 2, [1, 2]),
        (1, 3, [2, 3]),
        (0, 99, [1, 2, 3, 4, 5]),
        (4, None, [5]),
        (2, 2, []),
        (3, 1, []),
        (5, None, []),
    ],
)
def test_read_is_bounded_by_after_and_until(
    store: EventStore, after: int, until: int | None, expected: list[int]
) -> None:
    add(store, 5)
    everything = store.read(GAME)
    assert seqs(store.read(GAME, after=position_at(everything, after), until=until)) == expected


def test_an_unknown_game_reads_empty_and_does_not_exist(store: EventStore) -> None:
    assert store.read("nobody") == []
    assert store.read("nobody", until=3) == []
    assert not store.exists("nobody")
    add(store, 1)
    assert store.exists(GAME)
    assert not store.exists("nobody")


def test_an_empty_append_is_refused(store: EventStore) -> None:
    with pytest.raises(ValueError, match="at least one event"):
        store.append(GAME, START, [], META)
    assert not store.exists(GAME)


# --- conditional, all-or-nothing append ---------------------------------------------------------

OFF_POSITIONS: dict[str, Callable[[Position, Position], Position]] = {
    "stale version": lambda first, second: first,
    "from the start": lambda first, second: START,
    "ahead of the stream": lambda first, second: Position(3, second.head),
    "right version, wrong head": lambda first, second: Position(2, first.head),
    "right version, genesis head": lambda first, second: Position(2),
}


@pytest.mark.parametrize("batch", [1, 4])
@pytest.mark.parametrize("off", OFF_POSITIONS.values(), ids=OFF_POSITIONS.keys())
def test_an_append_not_at_the_head_conflicts_and_writes_nothing(
    any_redis: Client,
    store: EventStore,
    off: Callable[[Position, Position], Position],
    batch: int,
) -> None:
    first = add(store, 1)
    second = add(store, 1, after=first)
    before = store.read(GAME)
    expected = off(first, second)
    with pytest.raises(ConcurrencyConflict) as conflict:
        store.append(GAME, expected, counted(batch, 100), META)
    assert (conflict.value.expected, conflict.value.actual) == (expected.version, 2)
    assert conflict.value.position == second, "the conflict reports where the stream stands"
    assert stored_length(any_redis) == 2
    assert store.read(GAME) == before


def test_an_append_to_an_unknown_game_must_expect_the_start(store: EventStore) -> None:
    with pytest.raises(ConcurrencyConflict) as conflict:
        store.append(GAME, Position(1, "f" * 64), counted(2), META)
    assert (conflict.value.expected, conflict.value.actual) == (1, 0)
    assert conflict.value.position == START
    assert not store.exists(GAME)


def test_a_read_on_a_position_the_stream_holds_returns_what_follows(store: EventStore) -> None:
    first = add(store, 2)
    add(store, 3, after=first)
    assert store.read_on(GAME, first) == store.read(GAME, first)
    assert store.read_on(GAME, START) == store.read(GAME)
    assert store.read_on(GAME, head_of(store.read(GAME))) == []


def test_a_read_on_a_position_the_stream_lost_or_never_had_is_none(
    any_redis: Client, store: EventStore
) -> None:
    head = add(store, 3)
    assert store.read_on(GAME, Position(4, head.head)) is None, "ahead of the stream"
    assert store.read_on(GAME, Position(3, "f" * 64)) is None, "beside it"
    any_redis.xdel(stream_key(GAME), "3-0")
    assert store.read_on(GAME, head) is None, "its last write lost"
    assert store.read_on(OTHER_GAME, head) is None, "no stream at all"


def test_a_batch_at_the_head_lands_whole(store: EventStore) -> None:
    head = add(store, 2)
    assert seqs(appended(store.append(GAME, head, counted(5, 3), META)).records) == [3, 4, 5, 6, 7]
    assert seqs(store.read(GAME)) == [1, 2, 3, 4, 5, 6, 7]


# --- idempotency --------------------------------------------------------------------------------


@pytest.mark.parametrize("receipt", ["receipt-1", ""])
def test_a_repeated_key_returns_the_first_receipt_and_writes_nothing(
    any_redis: Client, store: EventStore, receipt: str
) -> None:
    head = add(store, 2, idempotency="cmd-1", receipt=receipt)
    for expected in (head, START):  # at the head, and at a version that is now stale
        repeat = store.append(GAME, expected, counted(3), META, idempotency="cmd-1", receipt="x")
        assert repeat == AlreadyAppended(receipt)
    assert stored_length(any_redis) == 2
    assert seqs(store.read(GAME)) == [1, 2]


def test_different_keys_append_normally(any_redis: Client, store: EventStore) -> None:
    head = add(store, 1, idempotency="cmd-1")
    head = add(store, 1, after=head, idempotency="cmd-2")
    assert head.version == 2
    assert store.append(GAME, head, counted(1), META, idempotency="cmd-1") == AlreadyAppended("")
    assert stored_length(any_redis) == 2


def test_keys_are_per_game(any_redis: Client, store: EventStore) -> None:
    add(store, 1, idempotency="cmd-1", receipt="first game")
    add(store, 2, game=OTHER_GAME, idempotency="cmd-1", receipt="other game")
    assert stored_length(any_redis, OTHER_GAME) == 2
    repeat = store.append(OTHER_GAME, START, counted(1), META, idempotency="cmd-1")
    assert repeat == AlreadyAppended("other game")


def test_a_conflicting_append_does_not_use_up_its_key(store: EventStore) -> None:
    head = add(store, 1)
    with pytest.raises(ConcurrencyConflict):
        store.append(GAME, START, counted(1), META, idempotency="cmd-1")
    assert add(store, 1, after=head, idempotency="cmd-1").version == 2


# --- the hash chain -----------------------------------------------------------------------------


def at(records: list[Recorded], index: int, **changes: Any) -> list[Recorded]:
    return [*records[:index], replace(records[index], **changes), *records[index + 1 :]]


def rehash_at(records: list[Recorded], index: int) -> list[Recorded]:
    return at(records, index, hash=records[index].computed_hash())


TAMPERINGS: dict[str, tuple[Callable[[list[Recorded]], list[Recorded]], int]] = {
    "changed data": (lambda r: at(r, 2, data={"n": 99}), 3),
    "changed meta": (lambda r: at(r, 1, meta={"seat": 1}), 2),
    "changed type": (lambda r: at(r, 4, type="test.Other"), 5),
    "changed version": (lambda r: at(r, 0, v=2), 1),
    "changed prev": (lambda r: at(r, 3, prev=r[1].hash), 4),
    "changed data, rehashed": (lambda r: rehash_at(at(r, 1, data={"n": 99}), 1), 3),
    "changed seq": (lambda r: at(r, 2, seq=4), 4),
    "removed entry": (lambda r: [r[0], *r[2:]], 3),
    "reordered entries": (lambda r: [r[0], r[2], r[1], *r[3:]], 3),
    "inserted entry": (lambda r: [r[0], r[1], r[1], *r[2:]], 2),
}


def test_the_chain_of_what_was_read_verifies(store: EventStore) -> None:
    head = add(store, 5)
    records = store.read(GAME)
    assert verify_chain(records) == head
    assert verify_chain(records[2:], after=records[1].position) == head


def test_a_chain_resumed_from_the_wrong_position_is_broken(store: EventStore) -> None:
    add(store, 5)
    records = store.read(GAME)
    with pytest.raises(ChainBroken) as broken:
        verify_chain(records[2:], after=Position(2, records[0].hash))
    assert broken.value.seq == 3


@pytest.mark.parametrize(("tamper", "seq"), TAMPERINGS.values(), ids=TAMPERINGS.keys())
def test_tampered_records_break_the_chain_at_the_right_event(
    store: EventStore, tamper: Callable[[list[Recorded]], list[Recorded]], seq: int
) -> None:
    add(store, 5)
    with pytest.raises(ChainBroken) as broken:
        verify_chain(tamper(store.read(GAME)))
    assert broken.value.seq == seq


STORED_TAMPERINGS: dict[str, tuple[int, Callable[[Envelope], Envelope], int]] = {
    "changed data": (2, lambda e: {**e, "d": {"n": 99}}, 2),
    "changed data, rehashed": (2, lambda e: rehashed({**e, "d": {"n": 99}}), 3),
    "hashed on another prev": (3, lambda e: rehashed({**e, "prev": GENESIS}), 3),
    "meta added, rehashed": (4, lambda e: rehashed({**e, "m": {}}), 5),
    "meta changed": (1, lambda e: {**e, "m": {**e["m"], "seat": 1}}, 1),
}


@pytest.mark.parametrize(
    ("seq", "change", "broken_at"), STORED_TAMPERINGS.values(), ids=STORED_TAMPERINGS.keys()
)
def test_reading_a_tampered_stream_raises(
    any_redis: Client,
    store: EventStore,
    seq: int,
    change: Callable[[Envelope], Envelope],
    broken_at: int,
) -> None:
    add(store, 5)
    original = store.read(GAME)
    rewrite_entry(any_redis, seq, change)
    for after in [p for p in (START, original[0].position) if p.version < seq]:
        with pytest.raises(ChainBroken) as broken:
            store.read(GAME, after=after)
        assert broken.value.seq == broken_at
    unchecked = store.read(GAME, verify=False)
    assert seqs(unchecked) == [1, 2, 3, 4, 5]
    changed = change({**json.loads(original[seq - 1].raw), "seq": seq, "prev": "", "hash": ""})
    assert json.loads(unchecked[seq - 1].raw) == {
        k: v for k, v in changed.items() if k not in ("hash", "seq", "prev")
    }


def test_an_append_that_lands_writes_its_mark_and_a_refused_one_does_not(
    any_redis: Client, store: EventStore
) -> None:
    marks = f"game:{{{GAME}}}:marks"  # where the stream is: on a cluster, in its hash slot
    head = add(store, 2, mark=Mark(marks, "first", 10))
    assert any_redis.zscore(marks, "first") == 10
    add(store, 1, after=head, mark=Mark(marks, "first", 99))
    assert any_redis.zscore(marks, "first") == 10, "a mark there already keeps its score"
    with pytest.raises(ConcurrencyConflict):
        store.append(GAME, head, counted(1, 9), META, mark=Mark(marks, "refused", 1))
    assert any_redis.zscore(marks, "refused") is None, "nothing written"


def test_an_append_that_lands_claims_its_marks_keys_and_says_which_it_won(
    any_redis: Client, store: EventStore
) -> None:
    marks, free, taken = (f"game:{{{GAME}}}:{name}" for name in ("marks", "free", "taken"))
    any_redis.set(taken, "someone else's")
    head = add(store, 1, mark=Mark(marks, "table", 50))
    claiming = Mark(marks, "table", 70, replace=True, claims=(free, taken), claim_ms=60_000)
    landed = appended(store.append(GAME, head, counted(1, 2), META, mark=claiming))
    assert landed.claimed == (True, False)
    assert any_redis.get(free) == b"1"
    assert 0 < cast(int, any_redis.pttl(free)) <= 60_000, "a claim runs out"
    assert any_redis.get(taken) == b"someone else's", "a claim held already is left as it is"
    assert any_redis.zscore(marks, "table") == 70, "`replace`: the later score replaces it"
    assert appended(store.append(GAME, landed.position, counted(1, 3), META)).claimed is None
    refused = Mark(marks, "table", 1, replace=True, claims=(f"game:{{{GAME}}}:refused",))
    with pytest.raises(ConcurrencyConflict):
        store.append(GAME, head, counted(1, 2), META, mark=refused)
    assert not any_redis.exists(f"game:{{{GAME}}}:refused"), "a refused append claims nothing"
    assert any_redis.zscore(marks, "table") == 70


def test_an_append_that_lands_stamps_its_mark_and_still_claims(
    any_redis: Client, store: EventStore
) -> None:
    marks, stamps, free = (f"game:{{{GAME}}}:{name}" for name in ("marks", "stamps", "free"))
    head = add(store, 1, mark=Mark(marks, "table", 50, stamps=stamps, stamp=1))
    assert cast(bytes | None, any_redis.hget(stamps, "table")) == b"1"
    stamped = Mark(marks, "table", 70, claims=(free,), claim_ms=60_000, stamps=stamps, stamp=3)
    landed = appended(store.append(GAME, head, counted(1, 2), META, mark=stamped))
    assert cast(bytes | None, any_redis.hget(stamps, "table")) == b"3", "the newest change's stamp"
    assert landed.claimed == (True,), "the claims come after the stamp's hash"
    assert any_redis.get(free) == b"1"
    assert [record.seq for record in store.read(GAME, START)] == [1, 2], "the events too"
    with pytest.raises(ConcurrencyConflict):
        store.append(GAME, head, counted(1, 9), META, mark=replace(stamped, stamp=9))
    assert cast(bytes | None, any_redis.hget(stamps, "table")) == b"3", (
        "a refused append stamps nothing"
    )


def test_an_append_counts_its_quotas_and_past_one_writes_nothing(
    any_redis: Client, store: EventStore
) -> None:
    second, minute = (f"game:{{{GAME}}}:quota:{name}" for name in ("second", "minute"))
    quotas = (Quota(second, 5, 60), Quota(minute, 2, 3600))
    head = add(store, 1)
    landed = appended(store.append(GAME, head, counted(1, 2), META, quotas=quotas))
    assert [window.hits for window in landed.counted] == [1, 1]
    ttls = [window.ttl for window in landed.counted]
    assert 0 < ttls[0] <= 60 < ttls[1] <= 3600
    head = add(store, 1, after=landed.position, quotas=quotas)
    with pytest.raises(QuotaExceeded) as refused:
        store.append(GAME, head, counted(1, 9), META, quotas=quotas)
    assert refused.value.quota == quotas[1], "the window it went past"
    assert refused.value.counted.hits == 3
    assert 0 < refused.value.counted.ttl <= 3600
    assert store.read(GAME, head) == [], "nothing written"
    assert int(cast(bytes | None, any_redis.get(second)) or 0) == 3, (
        "the windows before it counted it too"
    )
    assert appended(store.append(GAME, head, counted(1, 9), META)).counted == (), "no quotas"


def test_a_conflicting_or_repeated_append_counts_no_quota(
    any_redis: Client, store: EventStore
) -> None:
    window = f"game:{{{GAME}}}:quota"
    quotas = (Quota(window, 10, 60),)
    head = add(store, 1, idempotency="k", quotas=quotas)
    with pytest.raises(ConcurrencyConflict):
        store.append(GAME, START, counted(1), META, quotas=quotas)
    again = store.append(GAME, head, counted(1, 2), META, idempotency="k", quotas=quotas)
    assert isinstance(again, AlreadyAppended)
    assert any_redis.get(window) == b"1", "only the append that landed counted"
    (window_count,) = appended(store.append(GAME, head, counted(1, 2), META, quotas=quotas)).counted
    assert window_count.hits == 2
    assert 0 < window_count.ttl <= 60


# --- private values -----------------------------------------------------------------------------

SECRET = "https://bot.example/hook?key=never-shown"
"""A private value: what a webhook URL or a seat's token hash is to an export."""


def add_private(store: EventStore) -> list[Recorded]:
    """A command of two events, the first carrying `SECRET` in its data and its command's meta
    (as a seat taken carries its webhook), appended after three plain events; all read back."""
    head = add(store, 3)
    events = [Event("test.SeatTaken", {"seat": 1, "webhook": SECRET}), *counted(1, 5)]
    meta = {**META, "command": {"args": {"seat": 1, "webhook": SECRET}}}
    records = seal(events, meta, head, private=("webhook",))
    appended(store.append_sealed(GAME, records))
    return store.read(GAME)


def test_an_event_that_only_spells_a_private_key_out_is_sealed_as_it_is() -> None:
    """The bytes are searched for a private key before the event is walked: a value that
    spells one out costs the walk, which finds no key, and the event is sealed as without."""
    events = [Event("test.Said", {"text": '"webhook": is a word here', "n": [{"webhook": None}]})]
    (plain,) = seal(events, META, START)
    (searched,) = seal(events, META, START, private=("webhook",))
    assert searched.envelope == plain.envelope == 2
    assert (searched.hash, searched.raw) == (plain.hash, plain.raw)


def test_private_values_are_read_back_but_hashed_as_commitments(store: EventStore) -> None:
    records = add_private(store)
    taken, after = records[3], records[4]
    assert (taken.envelope, after.envelope) == (3, 2), "only the event holding one is sealed"
    assert taken.event.data["webhook"] == SECRET, "the service reads the value back"
    assert set(taken.data["webhook"]) == {"sha256"}, "the hashed body holds its commitment"
    assert SECRET not in json.dumps(taken.meta) + json.dumps(after.meta)
    exported = [record.to_json() for record in records]
    assert SECRET not in json.dumps(exported)
    again = [Recorded.from_json(event) for event in exported]
    assert verify_chain(again) == records[-1].position, "the export verifies without it"
    assert again[3].event.data == taken.data, "and shows only the commitment"


def test_a_private_value_changed_in_storage_breaks_the_chain(
    any_redis: Client, store: EventStore
) -> None:
    add_private(store)

    def forged(envelope: Envelope) -> Envelope:
        return {**envelope, "x": {**envelope["x"], "s": {"webhook": "https://evil.example/"}}}

    rewrite_entry(any_redis, 4, forged)
    with pytest.raises(ChainBroken) as broken:
        store.read(GAME)
    assert (broken.value.seq, broken.value.reason) == (
        4,
        "a private value does not match its commitment",
    )


# --- upcasting ----------------------------------------------------------------------------------


def scored_upcasters() -> Upcasters:
    """`test.Scored` v1 `{score}` -> v2 `{points}` -> v3 `{points, bonus}`."""
    upcasters = Upcasters()
    upcasters.register("test.Scored", 1, lambda data: {"points": data["score"]})
    upcasters.register("test.Scored", 2, lambda data: {**data, "bonus": 0})
    return upcasters


STORED_FORMS = [
    Event("test.Scored", {"score": 5}, 1),
    Event("test.Scored", {"points": 6}, 2),
    Event("test.Scored", {"points": 7, "bonus": 1}, 3),
    Event("test.Other", {"score": 1}, 1),
]


def test_reads_are_upcast_to_the_newest_version(any_redis: Client, store: EventStore) -> None:
    store.append(GAME, START, STORED_FORMS, META)
    records = EventStore(any_redis, scored_upcasters()).read(GAME)
    assert [record.event for record in records] == [
        Event("test.Scored", {"points": 5, "bonus": 0}, 3),
        Event("test.Scored", {"points": 6, "bonus": 0}, 3),
        Event("test.Scored", {"points": 7, "bonus": 1}, 3),
        Event("test.Other", {"score": 1}, 1),
    ]


def test_the_chain_verifies_over_the_stored_form(any_redis: Client, store: EventStore) -> None:
    head = appended(store.append(GAME, START, STORED_FORMS, META)).position
    stored = store.read(GAME)
    assert [record.event for record in stored] == STORED_FORMS
    assert verify_chain(stored) == head
    upcasting = EventStore(any_redis, scored_upcasters())
    resumed = upcasting.read(GAME, after=upcasting.read(GAME, until=2)[-1].position)
    assert seqs(resumed) == [3, 4]
    assert [record.hash for record in upcasting.read(GAME)] == [r.hash for r in stored]


def test_an_upcaster_step_cannot_be_registered_twice() -> None:
    upcasters = scored_upcasters()
    with pytest.raises(ValueError, match="already has an upcaster"):
        upcasters.register("test.Scored", 1, dict)


# --- never trimmed ------------------------------------------------------------------------------


def test_the_stream_is_never_trimmed(any_redis: Client, store: EventStore) -> None:
    head = START
    for _ in range(200):
        head = add(store, 1, after=head)
    head = add(store, 100, after=head)
    assert head.version == 300
    assert stored_length(any_redis) == 300
    assert seqs(store.read(GAME)) == list(range(1, 301))


# --- the race -----------------------------------------------------------------------------------

THREADS = 8
ROUNDS = 12
Marker: TypeAlias = tuple[int, int]  # (thread, attempt)


@pytest.fixture(params=ON_EVERY_REDIS)
def connect(request: pytest.FixtureRequest) -> Iterator[Connect]:
    """Makes a new client per call, all on one server: a shared FakeServer, db 13, or the
    cluster."""
    if request.param == "fakeredis":
        server = fakeredis.FakeServer()
        yield lambda: fakeredis.FakeRedis(server=server)
    elif request.param == "redis":
        request.getfixturevalue("real_redis")  # pings, and flushes db 13 before and after
        yield lambda: redis.Redis.from_url(TEST_REDIS_URL)
    else:
        cluster: Cluster = request.getfixturevalue("redis_cluster")
        request.getfixturevalue("cluster_redis")  # empties it before and after
        yield lambda: client_of(cluster.url)


class Race:
    """Each thread reads the head, all append to it at once, and so on for ROUNDS rounds."""

    def __init__(self, connect: Connect) -> None:
        self.connect = connect
        self.barrier = threading.Barrier(THREADS, timeout=30)
        self.wins: dict[int, list[Marker]] = {}
        self.losses: list[tuple[Marker, Position, ConcurrencyConflict]] = []
        self.errors: list[BaseException] = []
        self.lock = threading.Lock()

    def run(self) -> None:
        threads = [threading.Thread(target=self.contend, args=(n,)) for n in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def contend(self, thread: int) -> None:
        client = self.connect()
        store = EventStore(client)
        head = START
        try:
            for attempt in range(ROUNDS):
                head = head_of(store.read(GAME, after=head), head)
                self.barrier.wait()
                self.attempt(store, head, (thread, attempt))
                self.barrier.wait()
        except BaseException as error:
            self.errors.append(error)
            self.barrier.abort()
        finally:
            client.close()

    def attempt(self, store: EventStore, head: Position, marker: Marker) -> None:
        event = Event("test.Raced", {"thread": marker[0], "attempt": marker[1]})
        try:
            won = appended(store.append(GAME, head, [event], META)).position.version
        except ConcurrencyConflict as conflict:
            with self.lock:
                self.losses.append((marker, head, conflict))
        else:
            with self.lock:
                self.wins.setdefault(won, []).append(marker)


def test_concurrent_appends_at_one_version_let_exactly_one_win(connect: Connect) -> None:
    race = Race(connect)
    race.run()
    assert race.errors == []
    assert sorted(race.wins) == list(range(1, ROUNDS + 1))
    assert all(len(markers) == 1 for markers in race.wins.values())
    assert len(race.losses) == (THREADS - 1) * ROUNDS
    for _, head, conflict in race.losses:
        assert (conflict.expected, conflict.actual) == (head.version, head.version + 1)

    client = connect()
    stream = EventStore(client).read(GAME)
    assert client.xlen(stream_key(GAME)) == len(race.wins)
    assert seqs(stream) == list(range(1, len(race.wins) + 1))
    assert verify_chain(stream) == head_of(stream)
    stored = {record.seq: (record.data["thread"], record.data["attempt"]) for record in stream}
    assert stored == {version: markers[0] for version, markers in race.wins.items()}
    assert len(set(stored.values())) == len(stream)
    assert not {marker for marker, _, _ in race.losses} & set(stored.values())
    client.close()


# --- waiting for replicas -----------------------------------------------------------------------


@pytest.mark.redis
def test_an_append_no_replica_acknowledged_in_time_still_stands(
    real_redis: Client, caplog: pytest.LogCaptureFixture
) -> None:
    """The tests' server has no replicas: WAIT runs out, and the append, which its master holds,
    is answered as made (a committed move is never reported as failed), with a warning."""
    store = EventStore(real_redis, wait_replicas=1, wait_ms=20)
    first = appended(store.append(GAME, START, counted(2), META))
    assert first.replicas == 0
    assert "0 of 1 replicas had the append" in caplog.text
    second = appended(store.append(GAME, first.position, counted(1, 3), META))
    assert seqs(store.read(GAME)) == [1, 2, 3]
    assert second.position.version == 3
    with pytest.raises(ConcurrencyConflict):
        store.append(GAME, first.position, counted(1, 3), META)
    assert stored_length(real_redis) == 3, "a stale append writes nothing, waiting or not"


def command_calls(client: Client, command: str) -> int:
    """How often `command` ran on the server since it started (INFO commandstats)."""
    stats = cast(dict[str, dict[str, int]], client.info("commandstats"))
    return stats.get(f"cmdstat_{command}", {}).get("calls", 0)


@pytest.mark.fault
def test_a_master_without_its_replica_is_not_waited_on_in_vain(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A master with fewer replicas than appends wait for (a replica that took over from a
    master that failed has none) makes one append wait the whole timeout; the next ones wait
    for the replicas it has, until the count is taken again, and then for the one that came."""
    now = [0.0]
    servers = [RedisServer(tmp_path / name) for name in ("master", "replica")]
    for server in servers:
        server.directory.mkdir()
    master, replica = servers
    master.start()
    client = master.client()
    try:
        store = EventStore(client, wait_replicas=1, wait_ms=2000, clock=lambda: now[0])
        answered = appended(store.append(GAME, START, counted(1), META))
        assert answered.replicas == 0, "answered as made: the master holds it"
        waits = command_calls(client, "wait")
        assert command_calls(client, "role") == 1, "the replicas were counted"
        for version in (2, 3):
            answered = appended(store.append(GAME, answered.position, counted(1, version), META))
            assert answered.replicas == 0
        assert command_calls(client, "wait") == waits, "only the first append waited in vain"
        assert command_calls(client, "role") == 1
        assert "has 0 of the 1 replicas appends wait for" in caplog.text

        replica.options = ("--replicaof", "127.0.0.1", str(master.port))
        replica.start()
        deadline = time.monotonic() + START_SECONDS
        while (
            cast(dict[str, Any], client.info("replication")).get("slave0", {}).get("state")
            != "online"
        ):
            assert time.monotonic() < deadline, "the replica never came online"
            time.sleep(0.05)
        answered = appended(store.append(GAME, answered.position, counted(1, 4), META))
        assert command_calls(client, "wait") == waits, "the count is trusted for a while"
        now[0] += REPLICAS_RECHECK_SECONDS
        answered = appended(store.append(GAME, answered.position, counted(1, 5), META))
        assert command_calls(client, "wait") == waits + 1, "then appends wait for replicas again"
        assert answered.replicas == 1
        copy = replica.client()
        try:
            assert copy.xlen(stream_key(GAME)) == 5, "the replica had it when it was answered"
        finally:
            copy.close()
    finally:
        client.close()
        for server in servers:
            server.stop()


@pytest.mark.cluster
def test_on_a_cluster_an_acknowledged_append_is_on_its_masters_replica(
    cluster_redis: Client, redis_cluster: Cluster
) -> None:
    """WAIT is sent on the connection that appended, to the stream's master: a cluster client
    would send it to every node, where it counts nothing."""
    cluster_redis.script_flush()  # every node: the append must load its script itself
    store = EventStore(cluster_redis, wait_replicas=1)
    result = appended(store.append(GAME, START, counted(3), META))
    assert result.replicas == 1
    master = redis_cluster.master_of(stream_key(GAME)).client()
    try:
        replica_port = cast(dict[str, Any], master.info("replication"))["slave0"]["port"]
    finally:
        master.close()
    replica = redis.Redis(port=int(replica_port), single_connection_client=True)
    try:
        replica.execute_command("READONLY")  # type: ignore[no-untyped-call]
        assert replica.xlen(stream_key(GAME)) == 3, "the replica had it when it was answered"
    finally:
        replica.close()


# --- the seed vault -----------------------------------------------------------------------------

SEED = b"\x00secret seed\xff" * 2


@pytest.fixture
def vault(any_redis: Client) -> SeedVault:
    return SeedVault(any_redis)


def test_a_seed_round_trips_per_game(vault: SeedVault) -> None:
    vault.put(GAME, SEED)
    vault.put(OTHER_GAME, b"another")
    assert vault.get(GAME) == SEED
    assert vault.get(OTHER_GAME) == b"another"


def test_a_seed_is_put_once(vault: SeedVault) -> None:
    vault.put(GAME, SEED)
    with pytest.raises(KeyError):
        vault.put(GAME, b"replacement")
    assert vault.get(GAME) == SEED


def test_an_unknown_seed_raises(vault: SeedVault) -> None:
    with pytest.raises(KeyError):
        vault.get("nobody")


def test_the_seed_is_not_in_the_event_stream(
    any_redis: Client, store: EventStore, vault: SeedVault
) -> None:
    vault.put(GAME, SEED)
    assert not store.exists(GAME)
    assert store.read(GAME) == []
    add(store, 3)
    assert seed_key(GAME) != stream_key(GAME)
    stored = b"".join(value for _, fields in stored_entries(any_redis) for value in fields.values())
    assert SEED not in stored
    assert SEED.hex().encode() not in stored
    assert vault.get(GAME) == SEED


def test_the_service_upcasts_every_game_event_whose_shape_changed(
    any_redis: Client, store: EventStore
) -> None:
    # A Krumme10 exact hit stored before jackpot pink 4s could be flipped.
    old = {"seat": 0, "card": 1, "flip": False, "face": 4, "pink": False, "points": 4}
    stored = Event("krumme10.TargetHit", {**old, "jackpot": [7], "jackpot_points": 4}, 1)
    store.append(GAME, START, [stored], META)
    (record,) = EventStore(any_redis, default_upcasters()).read(GAME)
    assert record.event == Event(
        "krumme10.TargetHit",
        {
            **old,
            "jackpot": [{"card": 7, "flip": False, "face": 4, "pink": True}],
            "jackpot_points": 4,
        },
        2,
    )


def test_a_log_written_in_envelope_v1_goes_on_in_v2(store: EventStore) -> None:
    old = seal(counted(3), {**META, "command_id": "c-old"}, START, envelope=1)
    head = appended(store.append_sealed(GAME, old)).position
    new = appended(store.append(GAME, head, counted(3, 4), META)).position
    records = store.read(GAME)
    assert [(r.seq, r.envelope) for r in records] == [
        (1, 1),
        (2, 1),
        (3, 1),
        (4, 2),
        (5, 2),
        (6, 2),
    ]
    assert verify_chain(records) == new
    assert [r.hash for r in records[:3]] == [r.hash for r in old], "v1 events read as written"
    assert records[3].prev == old[-1].hash
    assert [r.meta["command_id"] for r in records] == ["c-old"] * 3 + [
        command_id(records[3].hash)
    ] * 3
    # A read starting inside a v2 command still gives its events their command's meta.
    assert store.read(GAME, after=records[3].position) == records[4:]
    assert verify_chain([Recorded.from_json(r.to_json()) for r in records]) == new


def test_a_v2_event_stores_its_commands_meta_once(any_redis: Client, store: EventStore) -> None:
    add(store, 3)
    stored = [json.loads(unpack(fields[b"e"])) for _, fields in stored_entries(any_redis)]
    assert [sorted(entry) for entry in stored] == [["d", "e", "m", "t", "v"]] + [
        ["d", "e", "t", "v"]
    ] * 2
    assert stored[0]["m"] == META
