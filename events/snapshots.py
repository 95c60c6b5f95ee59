"""Snapshots: folded tables kept in Redis every `every` events, so a cold read folds only the
events after the newest one.

A snapshot is a cache, never a source of truth: the log is. One is used only if everything it
was made under still holds, and is discarded (deleted, then the log folded) on any mismatch:
- its schema version (`SCHEMA`) and the game's rules version are today's;
- the code that folds the game (the table aggregate and the game's rules module) is byte for
  byte the code that wrote it, so a changed state shape never meets an old pickle;
- its payload hashes to the digest in its header (a torn or altered write);
- the stored event at its version has the head hash it was folded to (`read_on` checks this in
  the same round trip that fetches the events after it), so a snapshot of a stream that lost
  writes or was rewritten is never extended.

A snapshot holds the full state: every hidden card and whatever else the rules keep. It never
leaves the server: only `TableRepository` reads snapshots, and it hands out tables that reach a
client through `service.views.Views` alone. The audit and `spieltisch verify` read the log only.

Payloads are pickles (the fastest way back to a frozen-dataclass state), loaded by an unpickler
that resolves only the table's and the hosted games' own classes, so a snapshot written by
someone with access to Redis cannot name any other callable.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import pickle
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, cast

from redis import Redis
from redis.exceptions import RedisError, ResponseError

from domain.registry import GameRegistry
from domain.table import Table
from events.envelope import Position, canonical_json
from telemetry.metrics import SnapshotRecorder

LOG = logging.getLogger(__name__)
SCHEMA = 1
"""The snapshot format's version: bump it when the header or payload changes shape."""
DEFAULT_EVERY = 100
"""Events between snapshots: a cold read folds fewer than this many events after the newest."""
SAFE_BUILTINS = {
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("datetime", "datetime"),
    ("datetime", "timezone"),
    ("datetime", "timedelta"),
}


def snapshots_key(game_id: str) -> str:
    """A sorted set of a game's snapshots scored by version, in the game's hash slot."""
    return f"game:{{{game_id}}}:snapshots"


@cache
def code_digest(module_name: str) -> str:
    """The SHA-256 of a module's file: snapshots of a game fold only under the same code."""
    module = sys.modules[module_name]
    return hashlib.sha256(Path(str(module.__file__)).read_bytes()).hexdigest()


@dataclass(frozen=True)
class Snapshot:
    """A table as folded up to `position`."""

    table: Table
    position: Position


class RestrictedUnpickler(pickle.Unpickler):
    """Resolves only the classes a table is made of: the domain's, the `allowed` modules' (a
    game hosted from elsewhere) and a few builtins."""

    def __init__(self, payload: bytes, allowed: frozenset[str]) -> None:
        super().__init__(io.BytesIO(payload))
        self.allowed = allowed

    def find_class(self, module: str, name: str) -> Any:
        trusted = module in self.allowed or module.startswith("domain.")
        if trusted or (module, name) in SAFE_BUILTINS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"a snapshot may not name {module}.{name}")


class SnapshotStore:
    """Writes and reads a game's snapshots; every failure to read one is a miss, not an error."""

    def __init__(
        self,
        redis: Redis,
        registry: GameRegistry,
        every: int = DEFAULT_EVERY,
        metrics: SnapshotRecorder | None = None,
    ) -> None:
        if every < 1:
            raise ValueError("snapshots are taken every 1 or more events")
        self._redis = redis
        self.registry = registry
        self.every = every
        self._metrics = metrics

    def stamp(self, game: str) -> dict[str, Any]:
        """What a snapshot of a `game` table must have been written under to be used today."""
        rules_module = type(self.registry[game]).__module__
        return {
            "schema": SCHEMA,
            "rules_version": self.registry[game].info.rules_version,
            "code": [code_digest(Table.__module__), code_digest(rules_module)],
        }

    def due(self, before: int, after: int) -> bool:
        """Whether an append taking a table from version `before` to `after` crossed a multiple
        of `every`: then the table after it is worth a snapshot."""
        return after // self.every > before // self.every

    def save(self, table_id: str, table: Table, position: Position) -> None:
        """Keep `table` as folded up to `position`; best effort: a failure is logged, as the
        log alone is the truth and the next snapshot will do."""
        payload = pickle.dumps(table, protocol=pickle.HIGHEST_PROTOCOL)
        header = {
            **self.stamp(table.game),
            "game": table.game,
            "version": position.version,
            "head": position.head,
            "digest": hashlib.sha256(payload).hexdigest(),
        }
        blob = canonical_json(header) + b"\n" + payload
        try:
            self._redis.zadd(snapshots_key(table_id), {blob: position.version})
        except RedisError:
            LOG.warning("table %s: no snapshot at version %d", table_id, position.version)
            return
        if self._metrics:
            self._metrics.snapshot_written()

    def newest(self, table_id: str, at_most: int | None = None) -> Snapshot | None:
        """The newest usable snapshot at or below version `at_most` (None: any); one that is not
        usable is deleted and None returned, so the caller folds the log."""
        upper = "+inf" if at_most is None else at_most
        try:
            found = cast(
                list[bytes],
                self._redis.zrevrangebyscore(
                    snapshots_key(table_id), upper, "-inf", start=0, num=1
                ),
            )
        except ResponseError as error:  # not a sorted set: nothing usable, the log will do
            LOG.warning("table %s: no snapshot read: %s", table_id, error)
            return None
        if not found:
            self._record_read("miss")
            return None
        snapshot = self._usable(found[0])
        if snapshot is None:
            self.discard(table_id, found[0], "it does not match what reads it today")
        else:
            self._record_read("hit")
        return snapshot

    def _record_read(self, result: str) -> None:
        if self._metrics:
            self._metrics.snapshot_read(result)

    def _usable(self, blob: bytes) -> Snapshot | None:
        """The snapshot in `blob` if it was written under today's stamp and is intact."""
        head_line, _, payload = blob.partition(b"\n")
        try:
            header = json.loads(head_line)
            game = header["game"]
            if game not in self.registry or any(
                header.get(name) != value for name, value in self.stamp(game).items()
            ):
                return None
            if hashlib.sha256(payload).hexdigest() != header["digest"]:
                return None
            table = RestrictedUnpickler(payload, self._modules(game)).load()
        except (ValueError, KeyError, TypeError, pickle.UnpicklingError, EOFError):
            return None
        if not isinstance(table, Table) or (table.game, table.version) != (game, header["version"]):
            return None
        return Snapshot(table, Position(header["version"], header["head"]))

    def _modules(self, game: str) -> frozenset[str]:
        """The modules a `game` table's pickle may name classes of."""
        return frozenset({Table.__module__, type(self.registry[game]).__module__})

    def discard(self, table_id: str, blob: bytes | Snapshot, why: str) -> None:
        """Delete a snapshot that must not be used (best effort: it is checked on every use)."""
        LOG.warning("table %s: discarded a snapshot: %s", table_id, why)
        self._record_read("rejected")
        try:
            if isinstance(blob, Snapshot):
                self._redis.zremrangebyscore(
                    snapshots_key(table_id), blob.position.version, blob.position.version
                )
            else:
                self._redis.zrem(snapshots_key(table_id), blob)
        except RedisError:
            LOG.warning("table %s: could not delete a discarded snapshot", table_id)


def kept_key(game_id: str, name: str) -> str:
    return f"game:{{{game_id}}}:kept:{name}"


class KeptAnswers:
    """Answers derived from a game's log (its score timeline, a finished game's audit), kept in
    Redis beside it with the position they cover and the stamp of the code that made them.

    Like snapshots they are a cache: one made under another stamp is ignored, and the caller
    checks the position it covers against the stream before it extends or serves one. They hold
    only what every caller may see (they are served as they are).
    """

    def __init__(self, redis: Redis, snapshots: SnapshotStore) -> None:
        self._redis = redis
        self._snapshots = snapshots

    def get(self, game_id: str, name: str) -> tuple[Position, Any] | None:
        """The kept `name` of the game and the position it covers, if made under today's stamp."""
        try:
            raw: bytes | None = self._redis.get(kept_key(game_id, name))  # type: ignore[assignment]
            if raw is None:
                return None
            kept = json.loads(raw)
            if kept["game"] not in self._snapshots.registry:
                return None
            if kept["stamp"] != self._snapshots.stamp(kept["game"]):
                return None
            return Position(kept["version"], kept["head"]), kept["value"]
        except (RedisError, ValueError, KeyError, TypeError):
            return None

    def put(self, game_id: str, name: str, game: str, position: Position, value: Any) -> None:
        """Keep `value`, derived from the game's log up to `position`; best effort."""
        kept = {
            "game": game,
            "stamp": self._snapshots.stamp(game),
            "version": position.version,
            "head": position.head,
            "value": value,
        }
        try:
            self._redis.set(kept_key(game_id, name), canonical_json(kept))
        except RedisError:
            LOG.warning("game %s: could not keep its %s", game_id, name)
