"""The tables by creation time: a projection of the streams, kept to list tables newest first.

The streams stay the only source of truth. The index is Redis sorted sets of game ids scored by
the time their `GameCreated` records, in whole microseconds since the epoch (exact in a double
until the year 2255), so a listing reads ids newest first and loads each table from its stream.
The ids are spread over `INDEX_SHARDS` sets by their hash, so that on a Redis Cluster no one node
holds (and takes every new table's write for) the whole index; a listing reads the newest of
each set in one pipeline and merges them.
"""

from __future__ import annotations

import heapq
from datetime import UTC, datetime, timedelta
from itertools import islice

from redis import Redis

from events.store import INDEX_SHARDS, created_index_key, created_index_shard

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class TableIndex:
    """Game ids by creation time, newest first."""

    def __init__(self, redis: Redis) -> None:
        self._redis = redis

    def add(self, game_id: str, created: datetime) -> None:
        """List `game_id` as created at `created`; adding it again changes nothing but the time."""
        self._redis.zadd(
            created_index_key(game_id), {game_id: (created - EPOCH) // timedelta(microseconds=1)}
        )

    def newest(self, count: int) -> list[tuple[str, datetime]]:
        """The `count` newest game ids with their creation times, newest first."""
        # Not a transaction: each set is read on its own (on a cluster, from its own node).
        pipe = self._redis.pipeline(transaction=False)
        for shard in range(INDEX_SHARDS):
            pipe.zrevrange(created_index_shard(shard), 0, count - 1, withscores=True)
        shards: list[list[tuple[bytes, float]]] = pipe.execute()
        entries = heapq.merge(*shards, key=lambda entry: entry[1], reverse=True)
        return [
            (member.decode(), EPOCH + timedelta(microseconds=int(score)))
            for member, score in islice(entries, count)
        ]
