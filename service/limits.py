"""Rate limits (Flask-Limiter): per client address on opening tables, taking seats, live streams
and heavy reads; per seat token on moves. Counted in Redis, so every web process shares them.

A refusal is `429 rate-limited` problem details with `Retry-After` and the `RateLimit-Limit`,
`RateLimit-Remaining` and `RateLimit-Reset` headers, which every limited answer carries.
"""

from __future__ import annotations

from typing import cast

from flask import Flask, current_app, request
from flask.typing import RouteCallable
from flask_limiter import HeaderNames, Limiter, RequestLimit
from flask_limiter.util import get_remote_address

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


def limiter_for(config: Config) -> Limiter:
    """The limiter, counting in the service's Redis (embedded: in this process's memory)."""
    return Limiter(
        get_remote_address,
        storage_uri=config.redis_url or "memory://",
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
