"""Rate limits: per client address on opening tables, taking seats, live streams and heavy reads;
per seat token on moves. Counted by the `limits` library's fixed window in Redis, so every web
process shares them (embedded: in this process's memory).

A refusal is `429 rate-limited` problem details with `Retry-After`; every limited answer carries
the `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` headers.

One `before_request` hook counts a request once and keeps the count for its headers. Flask-Limiter,
the Flask glue over `limits` used before, evaluated each request's limits three times (before the
view, in the view's decorator, for the headers): a tenth of a move's CPU besides its round trip.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from flask import Flask, Response, current_app, g, has_app_context, request
from limits import RateLimitItem, parse_many
from limits.errors import StorageError
from limits.storage import RedisClusterStorage, RedisStorage, storage_from_string
from limits.strategies import FixedWindowRateLimiter
from werkzeug.exceptions import TooManyRequests

from service.config import Config
from service.tables import token_hash
from telemetry.metrics import UNMATCHED, Metrics

HEAVY_READS = (
    "api.list_events",
    "api.replay",
    "api.score_timeline",
    "api.audit",
    "api.export",
)
KEY_PREFIX = "limits"
LOG = logging.getLogger(__name__)


class CountingRedisStorage(RedisStorage):
    """limits' Redis storage, which answers a request's `RateLimit-*` headers from the hit that
    counted the request: the count and the window's time to live come back in the one round
    trip of the increment, where limits would ask Redis twice more for them."""

    SCHEME = "spieltisch+"
    # Read once, when the class is made, to register the schemes with limits.
    STORAGE_SCHEME = [f"{SCHEME}redis", f"{SCHEME}rediss", f"{SCHEME}redis+unix"]  # noqa: RUF012
    COUNT = b"""
local count = redis.call("incrby", KEYS[1], ARGV[2])
if count == tonumber(ARGV[2]) then
    redis.call("expire", KEYS[1], ARGV[1])
end
return {count, redis.call("ttl", KEYS[1])}
"""

    def __init__(self, uri: str, **options: Any) -> None:
        super().__init__(uri.removeprefix(self.SCHEME), **options)
        self.lua_count = self.get_connection().register_script(self.COUNT)

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        count, ttl = self.lua_count([self.prefixed_key(key)], [expiry, amount])
        if has_app_context():
            g.spieltisch_counted = (key, int(count), time.time() + max(int(ttl), 0))
        return int(count)

    def get(self, key: str) -> int:
        counted = self._counted(key)
        return counted[1] if counted else super().get(key)

    def get_expiry(self, key: str) -> float:
        counted = self._counted(key)
        return counted[2] if counted else super().get_expiry(key)

    @staticmethod
    def _counted(key: str) -> tuple[str, int, float] | None:
        """What this request's hit on `key` answered, if it hit it."""
        counted = g.get("spieltisch_counted") if has_app_context() else None
        return counted if counted and counted[0] == key else None


class CountingRedisClusterStorage(CountingRedisStorage, RedisClusterStorage):
    """The same over a Redis Cluster (`redis+cluster://`): a count is one key, so one slot."""

    STORAGE_SCHEME = [f"{CountingRedisStorage.SCHEME}redis+cluster"]  # noqa: RUF012


@dataclass(frozen=True)
class RouteLimit:
    """A route's limits, smallest window first, and whose requests they count together."""

    items: tuple[RateLimitItem, ...]
    key: Callable[[], str]

    @classmethod
    def of(cls, expression: str, key: Callable[[], str]) -> RouteLimit:
        """From a `limits` expression such as `100/second` or `10/second;300/minute`."""
        return cls(tuple(sorted(parse_many(expression))), key)


@dataclass(frozen=True)
class Counted:
    """What a request's count answered, for its headers."""

    item: RateLimitItem
    remaining: int
    reset_at: float
    refused: bool


class Limiter:
    """Counts requests to limited routes in the fixed windows of a `limits` storage."""

    def __init__(self, storage_uri: str, *, enabled: bool = True) -> None:
        self.enabled = enabled
        # Storage errors come wrapped (StorageError), so an outage is told from a bug.
        storage = storage_from_string(storage_uri, wrap_exceptions=True)
        self.windows = FixedWindowRateLimiter(storage)

    def count(self, endpoint: str, limit: RouteLimit) -> Counted | None:
        """Count this request against each of the route's windows, up to the first it exceeds.
        None when the storage cannot be reached: the request goes on, and meets the outage
        itself if it needs Redis."""
        identifiers = (KEY_PREFIX, limit.key(), endpoint)
        counted = None
        try:
            for item in limit.items:
                allowed = self.windows.hit(item, *identifiers)
                reset_at, remaining = self.windows.get_window_stats(item, *identifiers)
                if counted is None or not allowed:
                    counted = Counted(item, remaining, reset_at, refused=not allowed)
                if not allowed:
                    break
        except StorageError as error:
            LOG.warning("rate limits not counted: %s", error)
            return None
        return counted


def limiter_for(config: Config) -> Limiter:
    """The limiter, counting in the service's Redis (embedded: in this process's memory)."""
    storage = CountingRedisStorage.SCHEME + config.redis_url if config.redis_url else "memory://"
    return Limiter(storage, enabled=config.rate_limits)


def client_address() -> str:
    """The client's address, as the trusted proxies (if any) saw it."""
    return request.remote_addr or "127.0.0.1"


def by_seat() -> str:
    """A seat's token (hashed) when the request carries one, else the client's address."""
    token = request.headers.get("Authorization")
    if token is None:
        return f"address:{client_address()}"
    return "seat:" + token_hash(token)


def route_limits(config: Config) -> Mapping[str, RouteLimit]:
    """Each limited endpoint's limits."""
    moves = RouteLimit.of(config.limit_moves, by_seat)
    reads = RouteLimit.of(config.limit_reads, client_address)
    return {
        "api.create_table": RouteLimit.of(config.limit_tables, client_address),
        "api.take_seat": RouteLimit.of(config.limit_seats, client_address),
        "api.make_move": moves,
        "api.leave": moves,
        "api.stream_events": RouteLimit.of(config.limit_streams, client_address),
        **dict.fromkeys(HEAVY_READS, reads),
    }


def limit_routes(app: Flask, limiter: Limiter, config: Config) -> None:
    """Count the limited routes' requests before their views, and answer their headers."""
    if not limiter.enabled:
        return
    limits = route_limits(config)

    @app.before_request
    def count() -> None:
        endpoint = request.endpoint or ""
        limit = limits.get(endpoint)
        if limit is None:
            return
        counted = g.rate_limit = limiter.count(endpoint, limit)
        if counted is not None and counted.refused:
            metrics: Metrics = current_app.extensions["spieltisch.metrics"]
            metrics.refused(request.url_rule.rule if request.url_rule else UNMATCHED)
            raise TooManyRequests(description=str(counted.item))

    @app.after_request
    def headers(response: Response) -> Response:
        counted: Counted | None = g.get("rate_limit")
        if counted is not None:
            response.headers["RateLimit-Limit"] = str(counted.item.amount)
            response.headers["RateLimit-Remaining"] = str(counted.remaining)
            response.headers["RateLimit-Reset"] = str(int(counted.reset_at))
            if counted.refused:
                response.headers["Retry-After"] = str(max(1, int(counted.reset_at - time.time())))
        return response
