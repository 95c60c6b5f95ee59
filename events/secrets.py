"""Game seeds, kept apart from the public log until `GameFinished` reveals them."""

from __future__ import annotations

from redis import Redis


def seed_key(game_id: str) -> str:
    return f"game:{{{game_id}}}:seed"


class SeedVault:
    """Stores each game's secret seed; only the service reads it back."""

    def __init__(self, redis: Redis) -> None:
        self._redis = redis

    def put(self, game_id: str, seed: bytes) -> None:
        if not self._redis.set(seed_key(game_id), seed, nx=True):
            raise KeyError(f"game {game_id} already has a seed")

    def get(self, game_id: str) -> bytes:
        seed: bytes | None = self._redis.get(seed_key(game_id))  # type: ignore[assignment]
        if seed is None:
            raise KeyError(f"game {game_id} has no seed")
        return seed
