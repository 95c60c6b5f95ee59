"""The tables by creation time: a projection of the streams, kept to list tables newest first.

The streams stay the only source of truth. The index is a Redis sorted set of game ids scored by
the time their `GameCreated` records, in whole microseconds since the epoch (exact in a double
until the year 2255), so a listing reads ids newest first and loads each table from its stream.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from redis import Redis

from events.store import created_index_key

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class TableIndex:
    """Game ids by creation time, newest first."""

    def __init__(self, redis: Redis) -> None:
        self._redis = redis

    def add(self, game_id: str, created: datetime) -> None:
        """List `game_id` as created at `created`; adding it again changes nothing but the time."""
        self._redis.zadd(
            created_index_key(), {game_id: (created - EPOCH) // timedelta(microseconds=1)}
        )

    def newest(self, count: int) -> list[tuple[str, datetime]]:
        """The `count` newest game ids with their creation times, newest first."""
        entries: list[tuple[bytes, float]] = self._redis.zrevrange(  # type: ignore[assignment]
            created_index_key(), 0, count - 1, withscores=True
        )
        return [
            (member.decode(), EPOCH + timedelta(microseconds=int(score)))
            for member, score in entries
        ]
