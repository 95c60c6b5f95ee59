"""Caps on what one client address keeps going: tables not yet ended, and tables only bots play.

Each cap is a Redis sorted set per address of the table ids it opened, scored by when. Nothing
is counted up or down: when a new table takes the set past its cap, the set's members are
looked up in the event store, and those whose log ends in `GameFinished` or `TableExpired` (or
that have no log a minute after they were admitted: their append failed) leave it. So however a
table ends, by a move, a bot, a timeout or expiry, it stops counting, and no counter can drift.
Below the cap no log is read: tables that ended only make the count smaller, so a set within
its cap counting them is within it without them, and a new table costs a few commands however
many the address keeps, rather than a read of every one of them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from redis import Redis

from domain.table import GAME_FINISHED, TABLE_EXPIRED
from events.store import EventStore
from service.tables import ServiceError

ENDED = frozenset({GAME_FINISHED, TABLE_EXPIRED})
UNBORN_SECONDS = 60.0
"""How long a table admitted may have no log before it counts as never made."""
KEEP_SECONDS = 7 * 24 * 3600
"""How long an address's sets outlive its last new table: tables going longer stop counting."""


class TableQuotaExceeded(ServiceError):
    """The client address has as many tables going as it may."""


@dataclass(frozen=True)
class Quotas:
    """Admits a new table for the address that opens it, or refuses it."""

    redis: Redis
    store: EventStore
    max_open: int
    """Tables one address may have open or running."""
    max_bot_tables: int
    """Tables one address may have running with bots in every seat."""
    clock: Callable[[], float] = time.time

    def admit(self, owner: str, table_id: str, *, all_bots: bool) -> None:
        """Count `table_id` for `owner`, or raise `TableQuotaExceeded` counting nothing."""
        self._admit(f"quota:open:{owner}", table_id, self.max_open, "tables open or running")
        if not all_bots:
            return
        try:
            self._admit(
                f"quota:bots:{owner}", table_id, self.max_bot_tables, "tables of bots only running"
            )
        except TableQuotaExceeded:
            self.redis.zrem(f"quota:open:{owner}", table_id)
            raise

    def _admit(self, key: str, table_id: str, limit: int, what: str) -> None:
        now = self.clock()
        # Added first, counted after: two tables racing for the last place both see the other
        # and both are refused, so a cap is never passed.
        pipe = self.redis.pipeline(transaction=False)
        pipe.zadd(key, {table_id: now})
        pipe.expire(key, KEEP_SECONDS)
        pipe.zcard(key)
        if pipe.execute()[-1] <= limit:
            return
        members = cast(list[tuple[bytes, float]], self.redis.zrange(key, 0, -1, withscores=True))
        ids = [member.decode() for member, _ in members]
        last = self.store.last_types(ids)
        ended = [
            game_id
            for game_id, (_, admitted), kind in zip(ids, members, last, strict=True)
            if kind in ENDED or (kind is None and now - admitted > UNBORN_SECONDS)
        ]
        if ended:
            self.redis.zrem(key, *ended)
        going = len(ids) - len(ended)
        if going > limit:
            self.redis.zrem(key, table_id)
            raise TableQuotaExceeded(
                f"this address has {going - 1} {what}, the most it may; "
                "open another when one has ended",
                limit=limit,
            )
