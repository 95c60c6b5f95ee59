"""Rate limits: per client address on opening tables, taking seats, live streams and heavy reads;
per seat token on moves. Counted in fixed windows in a `limits` storage in Redis, so every web
process shares them (embedded: in this process's memory).

A refusal is `429 rate-limited` problem details with `Retry-After`; every limited answer carries
the `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` headers.

A move is counted by its own append, where the counts are in the games' Redis: the append script
counts the request's windows once the version holds, before it writes, and refuses past them
(`events.store.Quota`), so that the limit costs a move no round trip of its own. A move that
does not get that far (a bad body, a move the rules refuse, a conflict) is counted after its
view, and answered 429 instead if that count is over the limit: either way every request is
counted once, and a refused one writes nothing.

One `before_request` hook counts a request once and keeps the count for its headers. Flask-Limiter,
the Flask glue over `limits` used before, evaluated each request's limits three times (before the
view, in the view's decorator, for the headers): a tenth of a move's CPU besides its round trip.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ParamSpec, Protocol, TypeVar

from flask import Flask, Response, current_app, g, request
from limits import RateLimitItem, parse_many
from limits.errors import StorageError
from limits.storage import (
    MemoryStorage,
    RedisClusterStorage,
    RedisStorage,
    storage_from_string,
)
from werkzeug.exceptions import TooManyRequests

from events.store import Quota, QuotaExceeded, WindowCount
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
COUNTED_IN_APPENDS = frozenset({"api.make_move"})
"""The routes whose requests their append counts (see the module's docstring)."""
KEY_PREFIX = "limits"
COUNTING = "spieltisch+"
"""The prefix of the storage schemes whose storages are `WindowCounter`s."""
LOG = logging.getLogger(__name__)


class WindowCounter(Protocol):
    """A `limits` storage that counts a hit in a fixed window and says when the window ends, in
    one step: limits' own strategy asks the storage three times (the increment, the count, the
    expiry), and each is a round trip in Redis."""

    def count(self, key: str, expiry: int) -> tuple[int, float]:
        """Count a hit on `key`, whose window lasts `expiry` seconds from its first hit: the
        hits so far in the window and when it ends (a Unix time). Raises `StorageError` when
        the storage cannot be reached."""
        ...


class CountingMemoryStorage(MemoryStorage):
    """limits' storage in this process's memory (embedded), as a `WindowCounter`."""

    STORAGE_SCHEME = [f"{COUNTING}memory"]  # noqa: RUF012 (read once, to register the scheme)

    def __init__(self, uri: str, **options: Any) -> None:
        super().__init__(uri.removeprefix(COUNTING), **options)

    def count(self, key: str, expiry: int) -> tuple[int, float]:
        return self.incr(key, expiry), self.get_expiry(key)


class CountingRedisStorage(RedisStorage):
    """limits' Redis storage as a `WindowCounter`: the count and the window's time to live
    come back from one script, in one round trip."""

    STORAGE_SCHEME = [f"{COUNTING}redis", f"{COUNTING}rediss", f"{COUNTING}redis+unix"]  # noqa: RUF012
    COUNT = b"""
local count = redis.call("incr", KEYS[1])
if count == 1 then
    redis.call("expire", KEYS[1], ARGV[1])
end
return {count, redis.call("ttl", KEYS[1])}
"""

    def __init__(self, uri: str, **options: Any) -> None:
        super().__init__(uri.removeprefix(COUNTING), **options)
        self.lua_count = self.get_connection().register_script(self.COUNT)

    def count(self, key: str, expiry: int) -> tuple[int, float]:
        try:
            count, ttl = self.lua_count([self.prefixed_key(key)], [expiry])
        except self.base_exceptions as error:
            raise StorageError(error) from error
        return int(count), time.time() + max(int(ttl), 0)


class CountingRedisClusterStorage(CountingRedisStorage, RedisClusterStorage):
    """The same over a Redis Cluster (`redis+cluster://`): a count is one key, so one slot."""

    STORAGE_SCHEME = [f"{COUNTING}redis+cluster"]  # noqa: RUF012


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
    """Counts requests to limited routes in fixed windows."""

    def __init__(self, counter: WindowCounter) -> None:
        self.counter = counter

    @property
    def counts_in_redis(self) -> bool:
        """Whether the counts are in Redis, where an append can count a request too."""
        return isinstance(self.counter, CountingRedisStorage)

    def quotas(self, endpoint: str, limit: RouteLimit) -> tuple[Quota, ...]:
        """This request's windows, for an append to count: the keys `count` would count."""
        assert isinstance(self.counter, CountingRedisStorage)
        identifiers = (KEY_PREFIX, limit.key(), endpoint)
        return tuple(
            Quota(
                self.counter.prefixed_key(item.key_for(*identifiers)),
                item.amount,
                item.get_expiry(),
            )
            for item in limit.items
        )

    def count(self, endpoint: str, limit: RouteLimit) -> Counted | None:
        """Count this request against each of the route's windows, up to the first it exceeds.
        None when the storage cannot be reached: the request goes on, and meets the outage
        itself if it needs Redis."""
        identifiers = (KEY_PREFIX, limit.key(), endpoint)
        counted = None
        try:
            for item in limit.items:
                hits, reset_at = self.counter.count(item.key_for(*identifiers), item.get_expiry())
                refused = hits > item.amount
                if counted is None or refused:
                    counted = Counted(item, max(0, item.amount - hits), reset_at, refused)
                if refused:
                    break
        except StorageError as error:
            LOG.warning("rate limits not counted: %s", error)
            return None
        return counted


def limiter_for(config: Config) -> Limiter | None:
    """The limiter, counting in the service's Redis (embedded: in this process's memory); None
    when rate limits are off."""
    if not config.rate_limits:
        return None
    # Storage errors come wrapped (StorageError), so an outage is told from a bug.
    storage = storage_from_string(
        COUNTING + (config.redis_url or "memory://"), wrap_exceptions=True
    )
    if not isinstance(storage, CountingMemoryStorage | CountingRedisStorage):
        raise TypeError(f"{type(storage).__name__} does not count windows")
    return Limiter(storage)


def client_address() -> str:
    """The client's address, as the trusted proxies (if any) saw it."""
    return request.remote_addr or "127.0.0.1"


def by_seat() -> str:
    """A seat's token (hashed) when the request carries one, else the client's address. A
    token's key carries its table's hash tag, as the table's stream does, so that the table's
    append can count it on a Redis Cluster too."""
    token = request.headers.get("Authorization")
    if token is None:
        return f"address:{client_address()}"
    table_id = (request.view_args or {}).get("table_id", "")
    return f"{{{table_id}}}:seat:{token_hash(token)}"


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


def limit_routes(app: Flask, limiter: Limiter | None, config: Config) -> None:
    """Count the limited routes' requests before their views, and answer their headers (None:
    limits are off)."""
    if limiter is None:
        return
    limits = route_limits(config)

    @app.before_request
    def count() -> None:
        endpoint = request.endpoint or ""
        limit = limits.get(endpoint)
        if limit is None:
            return
        if endpoint in COUNTED_IN_APPENDS and limiter.counts_in_redis:
            g.deferred_limit = Deferred(limiter, endpoint, limit, limiter.quotas(endpoint, limit))
            return
        refuse_over(limiter.count(endpoint, limit))

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


def refuse_over(counted: Counted | None) -> None:
    """Keep `counted` for the answer's headers; 429 if it is over its limit."""
    g.rate_limit = counted
    if counted is not None and counted.refused:
        raise refusal(counted)


def refusal(counted: Counted) -> TooManyRequests:
    """The 429 of a request over its limit (`counted`), kept for the answer's headers."""
    g.rate_limit = counted
    metrics: Metrics = current_app.extensions["spieltisch.metrics"]
    metrics.refused(request.url_rule.rule if request.url_rule else UNMATCHED)
    return TooManyRequests(description=str(counted.item))


@dataclass(frozen=True)
class Deferred:
    """A request whose count was left to its append (`COUNTED_IN_APPENDS`)."""

    limiter: Limiter
    endpoint: str
    limit: RouteLimit
    quotas: tuple[Quota, ...]

    def counted(self, windows: Sequence[WindowCount]) -> Counted:
        """What the append counted, as `Limiter.count` answers it: the smallest window."""
        item, window = self.limit.items[0], windows[0]
        return Counted(item, max(0, item.amount - window.hits), reset_at(window), False)

    def refused(self, exceeded: QuotaExceeded) -> Counted:
        """The window the append found the request over, as `Limiter.count` answers it."""
        item = self.limit.items[self.quotas.index(exceeded.quota)]
        return Counted(item, 0, reset_at(exceeded.counted), True)


def reset_at(window: WindowCount) -> float:
    return time.time() + max(window.ttl, 0)


def quotas() -> Sequence[Quota]:
    """Where this request's append counts it: its windows when the limiter left them to the
    append, else none (the limiter counted it before the view, or limits are off)."""
    deferred: Deferred | None = g.get("deferred_limit")
    return () if deferred is None else deferred.quotas


def counted_in_append(windows: Sequence[WindowCount] | None) -> None:
    """Record what the request's append counted (None: it counted nothing, so the request is
    counted after its view, by `counted_by_append`)."""
    deferred: Deferred | None = g.get("deferred_limit")
    if deferred is not None and windows is not None:
        g.rate_limit = deferred.counted(windows)
        g.deferred_limit = None


Params = ParamSpec("Params")
Answer = TypeVar("Answer")


def counted_by_append(view: Callable[Params, Answer]) -> Callable[Params, Answer]:
    """Wrap a view of `COUNTED_IN_APPENDS`: a request its append refused is answered 429, and
    one its append did not count (refused before it, or answered from a receipt) is counted
    now, and answered 429 instead if that count is over the limit (it wrote nothing)."""

    @functools.wraps(view)
    def counted(*args: Params.args, **kwargs: Params.kwargs) -> Answer:
        try:
            answer = view(*args, **kwargs)
        except QuotaExceeded as exceeded:
            deferred: Deferred = g.pop("deferred_limit")
            raise refusal(deferred.refused(exceeded)) from None
        except Exception:
            count_late()
            raise
        count_late()
        return answer

    return counted


def count_late() -> None:
    """Count a deferred request its append did not count."""
    deferred: Deferred | None = g.pop("deferred_limit", None)
    if deferred is not None:
        refuse_over(deferred.limiter.count(deferred.endpoint, deferred.limit))
