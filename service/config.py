"""Service settings, read from the environment once, in `create_app` (and by the bot worker)."""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from dataclasses import dataclass

from domain.game import Game
from domain.registry import GameRegistry, default_registry
from events.connect import is_cluster
from events.snapshots import DEFAULT_EVERY

METRICS_EXPOSURES = ("loopback", "token", "public", "off")


@dataclass(frozen=True)
class Config:
    redis_url: str | None = None
    """None runs embedded: an in-process fakeredis and a bot worker thread instead of servers.
    `redis+cluster://host:port,...` names a Redis Cluster (`events.connect`)."""
    queue_url: str | None = None
    """The Redis of the bot queues and their scheduler (`QUEUE_URL`), a single server, as RQ
    needs one; None: the one `redis_url` names, which must then be no cluster."""
    max_body_bytes: int = 16 * 1024
    cache_size: int = 2048
    """How many tables' folded states each process keeps, newest used first."""
    snapshot_every: int = DEFAULT_EVERY
    """Events between a table's snapshots in Redis: a cold read folds fewer than this many."""
    webhook_timeout_seconds: float = 3.0
    """How long a webhook bot has to answer a turn before a stand-in plays it."""
    bot_delay_seconds: float = 1.0
    """The default bot delay of new tables' clocks (see `domain.table.TimeControl`)."""
    reaction_seconds: float = 2.0
    """The default reaction time of new tables' clocks."""
    open_table_seconds: float = 24 * 3600.0
    """How long a table whose seats are not all taken waits for the next player before it
    expires."""
    webhook_allow: tuple[str, ...] = ()
    """Host names and networks (CIDR) webhooks may be called at though they are not public
    (`SPIELTISCH_WEBHOOK_ALLOW`, comma-separated), for a deployment's own bots. Loopback,
    private, link-local, multicast and reserved addresses are refused otherwise; embedded (no
    Redis URL), loopback is allowed too."""
    max_open_tables: int = 100
    """Tables one client address may have open or running at once
    (`SPIELTISCH_MAX_OPEN_TABLES`); one more is refused with `403 table-quota`."""
    max_bot_tables: int = 10
    """Of those, tables with bots in every seat (`SPIELTISCH_MAX_BOT_TABLES`): they play at
    the workers' full speed, so a few per client keep the workers for everyone."""
    webhook_threads: int = 16
    """How many webhook calls each bot worker makes at once, beside its jobs."""
    stream_keepalive_seconds: float = 15.0
    """How often a live stream with nothing new sends a comment, so proxies keep it open."""
    stream_max_seconds: float = 300.0
    """How long one live stream lasts at most; the client reconnects with `Last-Event-ID`."""
    max_streams: int = 4000
    """Live streams each web process serves at once (`SPIELTISCH_MAX_STREAMS`); one more is
    refused with a 503. An open stream holds a greenlet and a socket, no thread and no Redis
    connection, so this only keeps streams from taking every connection gunicorn accepts
    (`WEB_CONNECTIONS`, 5,000 per process in the Procfile) from the other requests: keep it
    below that, and the open-files limit (`ulimit -n`) above it."""
    wait_replicas: int | None = None
    """How many replicas of a game's master must have an append before it is answered
    (`SPIELTISCH_WAIT_REPLICAS`, Redis's WAIT), so that a failover keeps every acknowledged
    move. None: 1 on a Redis Cluster (one replica per master, as Deployment sets it up), 0 on
    a single server, which fails over to nothing."""
    wait_replicas_ms: int = 250
    """How long an append waits for them (`SPIELTISCH_WAIT_REPLICAS_MS`). A move is stored
    once its master has it, so when the time is up it is answered as made all the same (and
    logged)."""
    receipts_ttl_seconds: int = 24 * 3600
    """How long a game's idempotency receipts are kept once it has ended (its log is kept for
    ever): a retry of a move later than that is answered from the table, as stale."""
    signing_key: str | None = None
    """The Ed25519 private key (32 bytes, base64 or hex) signing export bundles; required with
    a Redis URL, as every web process must sign with the same key. Embedded, None makes one."""
    trusted_proxies: int = 0
    """How many proxies in front of the service set `X-Forwarded-For`
    (`SPIELTISCH_TRUSTED_PROXIES`): with 0 the header is ignored and a client is its connection's
    address."""
    rate_limits: bool = True
    """Whether the limits below are enforced (`SPIELTISCH_RATE_LIMITS=off` turns them off)."""
    limit_tables: str = "30/second"
    """Tables one client address may open (`SPIELTISCH_LIMIT_TABLES`, in the `limits` library's
    syntax, such as `30/second;600/minute`)."""
    limit_seats: str = "60/second"
    """Seats one client address may take."""
    limit_moves: str = "100/second"
    """Moves one seat token may send (a client without a token: its address)."""
    limit_streams: str = "10/second"
    """Live streams one client address may open."""
    limit_reads: str = "100/second"
    """Heavy reads (log, versions, scores, audit, export) one client address may make."""
    extra_games: tuple[str, ...] = ()
    """Games to host besides Spieltisch's own, each `module:NAME` naming a `domain.game.Game`
    (`SPIELTISCH_EXTRA_GAMES`, comma-separated): how the tests add a game without changing the
    code. Give the web processes and the bot workers the same list."""

    metrics: str = "loopback"
    """Who may read `GET /metrics` (`SPIELTISCH_METRICS`): `loopback` (this host only, the
    default), `token` (whoever sends `SPIELTISCH_METRICS_TOKEN` as a bearer token; the default
    when that is set), `public`, or `off`."""
    metrics_token: str | None = None

    @property
    def replicas_to_wait_for(self) -> int:
        """`wait_replicas`, its default resolved."""
        if self.wait_replicas is not None:
            return self.wait_replicas
        return int(self.redis_url is not None and is_cluster(self.redis_url))

    def __post_init__(self) -> None:
        if self.wait_replicas is not None and self.wait_replicas < 0:
            raise ValueError("SPIELTISCH_WAIT_REPLICAS counts replicas: 0 or more")
        if self.wait_replicas_ms <= 0:
            raise ValueError("SPIELTISCH_WAIT_REPLICAS_MS must be above 0: WAIT 0 waits for ever")
        if self.redis_url is not None and is_cluster(self.redis_url) and self.queue_url is None:
            raise ValueError(
                "REDIS_URL names a Redis Cluster, which RQ cannot queue on: set QUEUE_URL to a "
                "single Redis server for the bot queues and their scheduler"
            )
        if self.queue_url is not None and is_cluster(self.queue_url):
            raise ValueError("QUEUE_URL must name a single Redis server: RQ needs one, no cluster")
        if self.queue_url is not None and self.redis_url is None:
            raise ValueError("QUEUE_URL is set but REDIS_URL is not: set both, or neither")
        if self.metrics not in METRICS_EXPOSURES:
            raise ValueError(
                f"SPIELTISCH_METRICS is {self.metrics!r}; use one of {', '.join(METRICS_EXPOSURES)}"
            )
        if self.metrics == "token" and not self.metrics_token:
            raise ValueError("SPIELTISCH_METRICS=token needs SPIELTISCH_METRICS_TOKEN")

    def registry(self) -> GameRegistry:
        """Spieltisch's games, then `extra_games`."""
        return default_registry(*map(load_game, self.extra_games))

    @property
    def default_clock(self) -> dict[str, float]:
        """What a new table's clock is where its creator did not say."""
        return {
            "bot_delay_seconds": self.bot_delay_seconds,
            "reaction_seconds": self.reaction_seconds,
        }

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Config:
        def number(name: str, default: float) -> float:
            return float(environ.get(f"SPIELTISCH_{name}", default))

        return cls(
            redis_url=environ.get("REDIS_URL") or None,
            queue_url=environ.get("QUEUE_URL") or None,
            max_body_bytes=int(number("MAX_BODY_BYTES", cls.max_body_bytes)),
            cache_size=int(number("CACHE_SIZE", cls.cache_size)),
            snapshot_every=int(number("SNAPSHOT_EVERY", cls.snapshot_every)),
            webhook_timeout_seconds=number("WEBHOOK_TIMEOUT", cls.webhook_timeout_seconds),
            bot_delay_seconds=number("BOT_DELAY", cls.bot_delay_seconds),
            reaction_seconds=number("REACTION_SECONDS", cls.reaction_seconds),
            open_table_seconds=number("OPEN_TABLE_SECONDS", cls.open_table_seconds),
            webhook_allow=listed(environ.get("SPIELTISCH_WEBHOOK_ALLOW", "")),
            webhook_threads=int(number("WEBHOOK_THREADS", cls.webhook_threads)),
            max_open_tables=int(number("MAX_OPEN_TABLES", cls.max_open_tables)),
            max_bot_tables=int(number("MAX_BOT_TABLES", cls.max_bot_tables)),
            stream_keepalive_seconds=number("STREAM_KEEPALIVE", cls.stream_keepalive_seconds),
            stream_max_seconds=number("STREAM_MAX_SECONDS", cls.stream_max_seconds),
            max_streams=int(number("MAX_STREAMS", cls.max_streams)),
            wait_replicas=(
                int(environ["SPIELTISCH_WAIT_REPLICAS"])
                if environ.get("SPIELTISCH_WAIT_REPLICAS")
                else None
            ),
            wait_replicas_ms=int(number("WAIT_REPLICAS_MS", cls.wait_replicas_ms)),
            receipts_ttl_seconds=int(number("RECEIPTS_TTL", cls.receipts_ttl_seconds)),
            signing_key=environ.get("SPIELTISCH_SIGNING_KEY") or None,
            trusted_proxies=int(number("TRUSTED_PROXIES", cls.trusted_proxies)),
            rate_limits=environ.get("SPIELTISCH_RATE_LIMITS", "on").lower() != "off",
            limit_tables=environ.get("SPIELTISCH_LIMIT_TABLES", cls.limit_tables),
            limit_seats=environ.get("SPIELTISCH_LIMIT_SEATS", cls.limit_seats),
            limit_moves=environ.get("SPIELTISCH_LIMIT_MOVES", cls.limit_moves),
            limit_streams=environ.get("SPIELTISCH_LIMIT_STREAMS", cls.limit_streams),
            limit_reads=environ.get("SPIELTISCH_LIMIT_READS", cls.limit_reads),
            metrics=environ.get(
                "SPIELTISCH_METRICS",
                "token" if environ.get("SPIELTISCH_METRICS_TOKEN") else cls.metrics,
            ).lower(),
            metrics_token=environ.get("SPIELTISCH_METRICS_TOKEN") or None,
            extra_games=listed(environ.get("SPIELTISCH_EXTRA_GAMES", "")),
        )


def listed(setting: str) -> tuple[str, ...]:
    """The items of a comma-separated setting, spaces trimmed, empty ones dropped."""
    return tuple(item.strip() for item in setting.split(",") if item.strip())


def load_game(path: str) -> Game:
    """The `Game` at `path`, `module:NAME`."""
    module, _, name = path.partition(":")
    game = getattr(importlib.import_module(module), name)
    if not isinstance(game, Game):
        raise TypeError(f"{path} is a {type(game).__name__}, not a domain.game.Game")
    return game
