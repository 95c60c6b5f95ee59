"""Rate limits (Flask-Limiter): per client address on opening tables, taking seats, live streams
and heavy reads; per seat token on moves. Counted in Redis, so every web process shares them.

A refusal is `429 rate-limited` problem details with `Retry-After` and the `RateLimit-Limit`,
`RateLimit-Remaining` and `RateLimit-Reset` headers, which every limited answer carries.
"""

from __future__ import annotations

import time
from typing import Any, cast

from flask import Flask, current_app, g, has_app_context, request
from flask.typing import RouteCallable
from flask_limiter import HeaderNames, Limiter, RequestLimit
from flask_limiter.util import get_remote_address
from limits.storage import RedisClusterStorage, RedisStorage

from service.config import Config
from service.tables import token_hash
from telemetry.metrics import UNMATCHED, Metrics

HEADERS = {
    HeaderNames.LIMIT: "RateLimit-Limit",
    HeaderNames.REMAINING: "RateLimit-Remaining",
    HeaderNames.RESET: "RateLimit-Reset",
    HeaderNames.RETRY_AFTER: "Retry-After",
}
HEAVY_READS = (
    "api.list_events",
    "api.replay",
    "api.score_timeline",
    "api.audit",
    "api.export",
)


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


def limiter_for(config: Config) -> Limiter:
    """The limiter, counting in the service's Redis (embedded: in this process's memory)."""
    storage = CountingRedisStorage.SCHEME + config.redis_url if config.redis_url else "memory://"
    return Limiter(
        get_remote_address,
        storage_uri=storage,
        headers_enabled=True,
        header_name_mapping=HEADERS,
        key_prefix="limits",
        # A limiter that cannot reach Redis lets the request through: the request itself will
        # meet the outage and say so.
        swallow_errors=True,
        enabled=config.rate_limits,
        on_breach=count_refusal,
    )


def count_refusal(_: RequestLimit) -> None:
    """Count a request the limiter refuses, by its route (the refusal itself is the 429)."""
    metrics: Metrics = current_app.extensions["spieltisch.metrics"]
    metrics.refused(request.url_rule.rule if request.url_rule else UNMATCHED)


def by_seat() -> str:
    """A seat's token (hashed) when the request carries one, else the client's address."""
    token = request.headers.get("Authorization")
    if token is None:
        return f"address:{get_remote_address()}"
    return "seat:" + token_hash(token)


def limit_routes(app: Flask, limiter: Limiter, config: Config) -> None:
    """Put each limit on its routes (registered on `app` already)."""
    limiter.init_app(app)
    # The limited views hold their limiter weakly: the app must keep it alive.
    app.extensions["spieltisch.limiter"] = limiter
    by_address = get_remote_address
    limits = {
        "api.create_table": (config.limit_tables, by_address),
        "api.take_seat": (config.limit_seats, by_address),
        "api.make_move": (config.limit_moves, by_seat),
        "api.leave": (config.limit_moves, by_seat),
        "api.stream_events": (config.limit_streams, by_address),
        **dict.fromkeys(HEAVY_READS, (config.limit_reads, by_address)),
    }
    for endpoint, (limit, key) in limits.items():
        view = app.view_functions[endpoint]
        # Flask-Limiter types its wrapper as possibly async; these views are all sync.
        app.view_functions[endpoint] = cast(RouteCallable, limiter.limit(limit, key_func=key)(view))
