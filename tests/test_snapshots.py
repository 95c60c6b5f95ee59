"""Snapshots in Redis: a cold read from one answers exactly what a fold of the whole log does;
one written under other rules or code, tampered with, or of another history is discarded and the
answer is still right; writing one never fails a move. Run on fakeredis and a real Redis."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import pytest
import redis
from flask.testing import FlaskClient

from bootstrap import web_app
from domain.registry import default_registry
from domain.table import Table, Tables
from events.envelope import Recorded, canonical_json
from events.packing import pack
from events.repository import TableCache, TableRepository, stamped
from events.snapshots import SnapshotStore, snapshots_key
from events.store import EventStore, stream_key
from service.audit import default_upcasters
from telemetry.metrics import Metrics
from tests.conftest import IN_PROCESS
from tests.test_api import new_game
from tests.test_lost_writes import play
from tests.test_operations import value

GOLDEN = Path(__file__).resolve().parent / "golden"
PLAYED = ["pig10", "krasskariert", "rollnbump", "wobble-rules3", "krumme10-rules2"]
"""A finished game of each game, under today's rules."""
REGISTRY = default_registry()
TABLES = Tables(REGISTRY)
EVERY = 5
TABLE_ID = "snapped"


def stored(name: str, client: redis.Redis) -> list[Recorded]:
    """Write the golden log `name` into `TABLE_ID`'s stream as it was stored; its records."""
    records = [
        Recorded.from_json(event)
        for event in json.loads((GOLDEN / f"{name}.json").read_text())["events"]
    ]
    for record in records:
        raw = canonical_json(record.stored_body())
        client.xadd(
            stream_key(TABLE_ID),
            {"e": pack(raw) if record.envelope > 1 else raw, "h": record.hash},
            id=f"{record.seq}-0",
        )
    return records


def repository(client: redis.Redis, snapshots: SnapshotStore | None = None) -> TableRepository:
    """A process's repository with an empty cache."""
    return TableRepository(
        EventStore(client, default_upcasters()),
        TABLES,
        TableCache(8),
        snapshots or SnapshotStore(client, REGISTRY, EVERY),
    )


def folded(records: list[Recorded], version: int) -> Table:
    """The table at `version` by a fold of the whole log, no snapshot involved."""
    upcasters = default_upcasters()
    table = TABLES.fold(upcasters.upcast(record).event for record in records[:version])
    assert table is not None
    return stamped(table, records[version - 1])


def seen(table: Table) -> list[Any]:
    """Everything every seat and a spectator see of `table`."""
    return [TABLES.view(table, seat) for seat in [None, *range(len(table.seats))]]


def snapshot_versions(client: redis.Redis) -> list[int]:
    entries: list[tuple[bytes, float]] = client.zrange(
        snapshots_key(TABLE_ID), 0, -1, withscores=True
    )  # type: ignore[assignment]
    return [int(score) for _, score in entries]


@pytest.mark.parametrize("name", PLAYED)
def test_a_snapshot_answers_as_a_full_fold_at_every_version(
    any_redis: redis.Redis, name: str
) -> None:
    records = stored(name, any_redis)
    repo = repository(any_redis)
    for version in range(1, len(records) + 1):
        from_snapshot = repo.load_at(TABLE_ID, version)
        full = folded(records, version)
        assert from_snapshot.table == full, f"version {version}"
        assert seen(from_snapshot.table) == seen(full), f"version {version}"
        assert from_snapshot.position == records[version - 1].position
    snapshots = snapshot_versions(any_redis)
    assert snapshots, "reads left snapshots"
    assert max(snapshots) > len(records) - 2 * EVERY, "later reads used snapshots"
    cold = repository(any_redis).load(TABLE_ID)
    assert cold.table == folded(records, len(records))


def test_a_cold_read_folds_only_the_events_after_the_newest_snapshot(
    any_redis: redis.Redis,
) -> None:
    records = stored("pig10", any_redis)
    repository(any_redis).load(TABLE_ID)  # the first fold of the whole log leaves a snapshot
    assert snapshot_versions(any_redis) == [len(records)]
    any_redis.xtrim(stream_key(TABLE_ID), minid=f"{len(records)}-0")
    # Only the snapshot's own event is left: a read that folded the log would find no table.
    assert repository(any_redis).load(TABLE_ID).table == folded(records, len(records))


class OlderRules(SnapshotStore):
    """Snapshots as an older release wrote them: under the previous rules version."""

    def stamp(self, game: str) -> dict[str, Any]:
        return {**super().stamp(game), "rules_version": super().stamp(game)["rules_version"] - 1}


class OtherCode(SnapshotStore):
    """Snapshots written by other code for the same rules version."""

    def stamp(self, game: str) -> dict[str, Any]:
        return {**super().stamp(game), "code": ["0" * 64, "1" * 64]}


@pytest.mark.parametrize("writer", [OlderRules, OtherCode])
def test_a_snapshot_written_under_other_rules_or_code_is_discarded(
    any_redis: redis.Redis, writer: type[SnapshotStore]
) -> None:
    records = stored("krasskariert", any_redis)
    middle = len(records) // 2
    old = writer(any_redis, REGISTRY, EVERY)
    old.save(TABLE_ID, replace(folded(records, middle), state=None), records[middle - 1].position)
    blob = only_snapshot(any_redis)
    loaded = repository(any_redis).load_at(TABLE_ID, middle)
    assert loaded.table == folded(records, middle)
    assert any_redis.zscore(snapshots_key(TABLE_ID), blob) is None, "the old one is deleted"


def only_snapshot(client: redis.Redis) -> bytes:
    """The one snapshot `TABLE_ID` has."""
    blobs: list[bytes] = client.zrange(snapshots_key(TABLE_ID), 0, -1)  # type: ignore[assignment]
    assert len(blobs) == 1
    return blobs[0]


Change = Callable[[dict[str, Any], bytes], tuple[dict[str, Any], bytes]]


def tampered(client: redis.Redis, change: Change) -> bytes:
    """Rewrite the one snapshot of `TABLE_ID` as `change(header, payload)` returns it."""
    blob = only_snapshot(client)
    score = cast(float | None, client.zscore(snapshots_key(TABLE_ID), blob))
    assert score is not None
    head_line, _, payload = blob.partition(b"\n")
    header, payload = change(json.loads(head_line), payload)
    bad = canonical_json(header) + b"\n" + payload
    client.delete(snapshots_key(TABLE_ID))
    client.zadd(snapshots_key(TABLE_ID), {bad: score})
    return bad


def flip_a_byte(header: dict[str, Any], payload: bytes) -> tuple[dict[str, Any], bytes]:
    return header, payload[:-3] + bytes([payload[-3] ^ 1]) + payload[-2:]


def another_head(header: dict[str, Any], payload: bytes) -> tuple[dict[str, Any], bytes]:
    return {**header, "head": "f" * 64}, payload


def another_state(header: dict[str, Any], payload: bytes) -> tuple[dict[str, Any], bytes]:
    """The table of the version before, its digest made to match."""
    table: Table = pickle.loads(payload)
    forged = pickle.dumps(replace(table, version=table.version - 1))
    return {**header, "digest": hashlib.sha256(forged).hexdigest()}, forged


class Exploit:
    """A pickle that would run a command if an unpickler resolved `os.system`."""

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (os.system, ("touch /tmp/spieltisch-snapshot-pwned",))


def foreign_callable(header: dict[str, Any], payload: bytes) -> tuple[dict[str, Any], bytes]:
    forged = pickle.dumps(Exploit())
    return {**header, "digest": hashlib.sha256(forged).hexdigest()}, forged


@pytest.mark.parametrize("change", [flip_a_byte, another_head, another_state, foreign_callable])
def test_a_tampered_snapshot_is_discarded_and_the_answer_is_still_right(
    any_redis: redis.Redis, change: Change
) -> None:
    records = stored("rollnbump", any_redis)
    version = 3 * EVERY
    repository(any_redis).load_at(TABLE_ID, version)  # folds 15 events: leaves a snapshot
    assert snapshot_versions(any_redis) == [version]
    bad = tampered(any_redis, change)
    loaded = repository(any_redis).load_at(TABLE_ID, version + 1)
    assert loaded.table == folded(records, version + 1)
    assert seen(loaded.table) == seen(folded(records, version + 1))
    assert any_redis.zscore(snapshots_key(TABLE_ID), bad) is None, "the bad one is deleted"
    assert not Path("/tmp/spieltisch-snapshot-pwned").exists()


def client_snapshotting(client: redis.Redis, every: int) -> FlaskClient:
    """A web process of its own that takes a snapshot every `every` events."""
    return web_app(replace(IN_PROCESS, snapshot_every=every), redis_client=client).test_client()


def test_moves_leave_a_snapshot_every_k_events(any_redis: redis.Redis) -> None:
    game = new_game(client_snapshotting(any_redis, EVERY), 2, first_seat=0)
    version = play(game, 12)
    entries: list[tuple[bytes, float]] = any_redis.zrange(  # type: ignore[assignment]
        snapshots_key(game.id), 0, -1, withscores=True
    )
    versions = [int(score) for _, score in entries]
    assert len(versions) == version // EVERY
    # Each was taken by the append that crossed a multiple of `every`, at its last event.
    assert [v // EVERY for v in versions] == list(range(1, version // EVERY + 1))
    cold = repository(any_redis).load(game.id)
    assert cold.version == version
    assert cold.table == TABLES.fold(
        r.event for r in EventStore(any_redis, default_upcasters()).read(game.id)
    )


def test_a_move_lands_and_is_acknowledged_when_its_snapshot_cannot_be_written(
    any_redis: redis.Redis,
) -> None:
    game = new_game(client_snapshotting(any_redis, 1), 2, first_seat=0)
    any_redis.delete(snapshots_key(game.id))
    any_redis.set(snapshots_key(game.id), "not a sorted set")  # every ZADD fails
    before = game.get("")["version"]
    after = play(game, 3)
    assert after > before
    assert (
        repository(any_redis, SnapshotStore(any_redis, REGISTRY, 1)).load_at(game.id).version
        == after
    )


def test_snapshots_written_read_and_discarded_are_counted(any_redis: redis.Redis) -> None:
    """The snapshot store reports to the process's metrics: each write, and each read by what
    it found (none, a usable one, one it had to discard)."""
    metrics = Metrics()
    store = SnapshotStore(any_redis, REGISTRY, EVERY, metrics)
    records = stored("pig10", any_redis)
    repository(any_redis, store).load(TABLE_ID)  # nothing to start from: a miss, then a write
    repository(any_redis, store).load(TABLE_ID)  # a cold read from that snapshot
    repository(any_redis, OlderRules(any_redis, REGISTRY, EVERY, metrics)).load(TABLE_ID)
    text = metrics.render().decode()
    assert value(text, "spieltisch_snapshots_read_total", result="miss") >= 1
    assert value(text, "spieltisch_snapshots_read_total", result="hit") >= 1
    assert value(text, "spieltisch_snapshots_read_total", result="rejected") >= 1
    assert value(text, "spieltisch_snapshots_written_total") >= 1
    assert snapshot_versions(any_redis) == [len(records)]
