"""Tables as stored: loaded by folding their events (through a cache), committed by appending.

The one place the service and the workers read and write tables. A cached table is only ever
extended by the events after its position, and the store checks their chain from its head, so a
read costs the events new since the last one, not the whole game.

A cached table is never served ahead of its stream or diverged from it: every read fetches the
cached head along with what follows it, and a refused append reports the stream's own head, so
when Redis lost its last writes or was restored, the first read or write that meets the table
drops the cached state and folds the stream again. A write at the cached version appends on the
cached head without reading first (`head`): the append script checks the head itself, and only
a landed append is answered.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from domain.frozen import replace
from domain.table import Table, Tables
from events.envelope import START, Position, Recorded
from events.snapshots import SnapshotStore
from events.store import (
    AlreadyAppended,
    Appended,
    ConcurrencyConflict,
    EventStore,
    Mark,
    Quota,
)

LOG = logging.getLogger(__name__)
TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


class UnknownTable(LookupError):
    """No table has this id."""

    def __init__(self, table_id: str) -> None:
        super().__init__(f"there is no table {table_id!r}")
        self.table_id = table_id


def check_table_id(table_id: str) -> None:
    """Refuse ids no table can have before they reach a Redis key name."""
    if not TABLE_ID.fullmatch(table_id):
        raise UnknownTable(table_id)


@dataclass(frozen=True)
class Loaded:
    """A table folded up to `position` of its stream."""

    table: Table
    position: Position

    @property
    def version(self) -> int:
        return self.position.version


def stamped(table: Table, last: Recorded) -> Table:
    """`table` knowing when its latest event, `last`, was recorded: where its clock starts."""
    return replace(table, changed_at=datetime.fromisoformat(last.meta["time"]))


class TableCache:
    """Folded tables by id, least recently used dropped first; safe across threads."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[str, Loaded] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, table_id: str) -> Loaded | None:
        with self._lock:
            loaded = self._entries.get(table_id)
            if loaded is not None:
                self._entries.move_to_end(table_id)
            return loaded

    def put(self, table_id: str, loaded: Loaded) -> None:
        with self._lock:
            current = self._entries.get(table_id)
            if current is not None and current.position.version > loaded.position.version:
                return
            self._entries[table_id] = loaded
            self._entries.move_to_end(table_id)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def drop(self, table_id: str, stale: Loaded) -> None:
        """Forget `table_id`, unless another thread has cached a state other than `stale`."""
        with self._lock:
            if self._entries.get(table_id) is stale:
                del self._entries[table_id]


class TableRepository:
    """Loads tables (store + fold + cache) and commits the events decided on them."""

    def __init__(
        self,
        store: EventStore,
        tables: Tables,
        cache: TableCache,
        snapshots: SnapshotStore | None = None,
    ) -> None:
        self.store = store
        self.tables = tables
        self.cache = cache
        self.snapshots = snapshots

    def load(self, table_id: str) -> Loaded:
        """The table as of its latest event; `UnknownTable` if it has none."""
        check_table_id(table_id)
        cached = self.cache.get(table_id)
        if cached is not None:
            records = self.store.read_on(table_id, cached.position)
            if records is None:
                self._forget(table_id, cached, "the stream no longer holds it")
            elif not records:
                return cached
            else:
                loaded = self._extended(cached, records)
                self.cache.put(table_id, loaded)
                return loaded
        loaded = self.load_at(table_id)
        self.cache.put(table_id, loaded)
        return loaded

    def load_at(self, table_id: str, version: int | None = None) -> Loaded:
        """The table as of `version` (None: its latest event), folded from the newest usable
        snapshot at or below it, else from the start; `UnknownTable` if it has no events.

        A fold of `snapshots.every` events or more leaves a snapshot of what it made, so a log
        written before snapshots (or one whose snapshots were discarded) costs a full fold once.
        """
        check_table_id(table_id)
        base: Loaded | None = None
        records: list[Recorded] | None = None
        snapshot = None if self.snapshots is None else self.snapshots.newest(table_id, version)
        if snapshot is not None:
            records = self.store.read_on(table_id, snapshot.position, until=version)
            if records is None:
                assert self.snapshots is not None
                self.snapshots.discard(table_id, snapshot, "the stream differs at its version")
            else:
                base = Loaded(snapshot.table, snapshot.position)
        if records is None:
            records = self.store.read(table_id, START, until=version)
        if base is None and not records:
            raise UnknownTable(table_id)
        loaded = self._extended(base, records)
        if self.snapshots is not None and len(records) >= self.snapshots.every:
            self._snapshot(table_id, loaded)
        return loaded

    def _extended(self, base: Loaded | None, records: Sequence[Recorded]) -> Loaded:
        """`base` (None: no table yet) with `records` folded in."""
        if not records:
            assert base is not None
            return base
        table = self.tables.fold([r.event for r in records], base.table if base else None)
        assert table is not None
        return Loaded(stamped(table, records[-1]), records[-1].position)

    def _snapshot(self, table_id: str, loaded: Loaded) -> None:
        """Keep a snapshot of `loaded`. A snapshot is only a cache: failing to write one is
        logged and never fails the read or the committed move that asked for it."""
        assert self.snapshots is not None
        try:
            self.snapshots.save(table_id, loaded.table, loaded.position)
        except Exception:
            LOG.exception("table %s: no snapshot at version %d", table_id, loaded.version)

    def head(self, table_id: str, version: int) -> tuple[Loaded, bool]:
        """The table to decide a write on that expects `version`, and whether it is the cached
        table taken unread (optimistic). Nothing decided on an optimistic table may be answered
        before its append lands: the append script checks that the cached head is still the
        stream's, and a refused append drops it (`commit`), so the writer reads and decides
        again (`load`). Otherwise, the table as `load` reads it."""
        check_table_id(table_id)
        cached = self.cache.get(table_id)
        if cached is not None and cached.version == version:
            return cached, True
        return self.load(table_id), False

    def _forget(self, table_id: str, stale: Loaded, why: str) -> None:
        # Worth a warning: the stream lost writes it had acknowledged, or was restored.
        LOG.warning("table %s: dropped the cached version %d: %s", table_id, stale.version, why)
        self.cache.drop(table_id, stale)

    def followed(self, table_id: str, records: Sequence[Recorded]) -> Loaded:
        """The table through the last of `records`, the newest events of its stream (read or
        published by the append, their chain verified), or further: the cached table, extended
        by those of them it lacks when they follow it, or as it is when it is further on; else
        as `load` reads it. Live streams learn of a move this way with no read of their own:
        one fold, or none in the move's own process."""
        cached = self.cache.get(table_id)
        if cached is not None:
            newer = [record for record in records if record.seq > cached.version]
            if not newer and cached.position == records[-1].position:
                return cached
            if records[-1].seq < cached.version:
                # Old news: this process read or appended the table further since it was
                # published (a move it served overtook the news of the one before). A read now
                # would find the cached table. Writes Redis lost are found where they can be
                # lost: the news connection drops with the server, and its topics read again.
                return cached
            if (
                newer
                and newer[0].seq == cached.version + 1
                and newer[0].prev == cached.position.head
            ):
                loaded = self._extended(cached, newer)
                self.cache.put(table_id, loaded)
                return loaded
        return self.load(table_id)

    def cached(self, table_id: str) -> Loaded | None:
        """The table as this process last saw it, without asking the store."""
        return self.cache.get(table_id)

    def commit(
        self,
        table_id: str,
        records: Sequence[Recorded],
        after: Loaded,
        *,
        idempotency: str | None = None,
        receipt: str = "",
        receipts_ttl: int = 0,
        mark: Mark | None = None,
        quotas: Sequence[Quota] = (),
    ) -> Appended | AlreadyAppended:
        """Append `records` (sealed on the table's head) and cache `after`, the table they make;
        an append that lands writes `mark` too, and counts its request in `quotas`
        (`EventStore.append_sealed`).

        Raises `ConcurrencyConflict` if the table moved on since they were decided; if the
        stream stands behind or beside the cached table, the cache forgets it."""
        try:
            outcome = self.store.append_sealed(
                table_id,
                list(records),
                idempotency=idempotency,
                receipt=receipt,
                receipts_ttl=receipts_ttl,
                mark=mark,
                quotas=quotas,
            )
        except ConcurrencyConflict as conflict:
            cached = self.cache.get(table_id)
            stream = conflict.position
            if (
                cached is not None
                and stream is not None
                and stream.version <= cached.position.version
                and stream != cached.position
            ):
                self._forget(table_id, cached, f"the stream stands at version {stream.version}")
            raise
        if isinstance(outcome, Appended):
            self.cache.put(table_id, after)
            if self.snapshots is not None and self.snapshots.due(records[0].seq - 1, after.version):
                self._snapshot(table_id, after)
        return outcome
