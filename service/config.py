"""Service settings, read from the environment once, in `create_app`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Config:
    redis_url: str | None = None
    """None runs embedded: an in-process fakeredis instead of a server."""
    max_body_bytes: int = 16 * 1024
    cache_size: int = 2048
    """How many tables' folded states each process keeps, newest used first."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Config:
        return cls(
            redis_url=environ.get("REDIS_URL") or None,
            max_body_bytes=int(environ.get("SPIELTISCH_MAX_BODY_BYTES", cls.max_body_bytes)),
            cache_size=int(environ.get("SPIELTISCH_CACHE_SIZE", cls.cache_size)),
        )
