"""The composition root: every dependency of the web app, the bot workers and the command line
is built here and handed down, so no layer builds its own and `service/` and `workers/` never
import each other.

- `web_app()`: the Flask app (the Procfile's `web:`); with no `REDIS_URL` it runs embedded, on
  an in-process fakeredis with a bot worker thread of its own.
- `Worker`: the RQ worker class the Procfile's `worker:` starts.
- The `spieltisch` command (`launcher`) serves `web_app()` with gunicorn.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import fakeredis
import gevent
import gevent.monkey
import redis
from flask import Flask
from redis.cluster import RedisCluster

from domain.catalogue import BotCatalogue, default_catalogue
from domain.registry import GameRegistry
from domain.table import Tables
from events.connect import connect, same_server
from events.index import TableIndex
from events.repository import TableCache, TableRepository
from events.secrets import SeedVault
from events.snapshots import KeptAnswers, SnapshotStore
from events.store import EventStore
from events.upcasting import Upcasters
from service.app import create_app
from service.audit import default_upcasters
from service.config import Config
from service.limits import limiter_for
from service.quotas import Quotas
from service.signing import Signer
from service.stream import StreamHub
from service.tables import TableCommands, TableQueries
from service.views import Views
from telemetry.logs import log_json
from telemetry.metrics import Metrics, multiprocess_dir
from workers.player import TurnPlayer
from workers.stats import QueueFigures
from workers.turns import TurnQueue, bot_queue
from workers.webhook import AddressGuard, WebhookClient
from workers.worker import BotPlay, BotWorker, EmbeddedWorker

SERVICES = "spieltisch.services"
"""Where `web_app` keeps the services it built, for the tests and benches that reach past HTTP."""
EMBEDDED_WORKER = "spieltisch.embedded_worker"
"""Where an embedded `web_app` keeps its bot worker, for whoever must stop its threads."""


@dataclass(frozen=True)
class Services:
    """Everything one process uses, built once."""

    config: Config
    redis: redis.Redis
    repository: TableRepository
    commands: TableCommands
    queries: TableQueries
    bots: BotCatalogue
    turns: TurnQueue
    player: TurnPlayer
    metrics: Metrics
    hub: StreamHub
    """The live streams' reader (started by the first stream a web process serves)."""

    @classmethod
    def of(cls, app: Flask) -> Services:
        """The services `web_app` built `app` on."""
        services: Services = app.extensions[SERVICES]
        return services

    @property
    def play(self) -> BotPlay:
        """What a bot worker of this process runs."""
        return BotPlay(self.player, self.turns, self.queries, self.metrics)


def build(
    redis_client: redis.Redis,
    config: Config,
    *,
    queue_client: redis.Redis | None = None,
    registry: GameRegistry | None = None,
    upcasters: Upcasters | None = None,
    signer: Signer | None = None,
    wake: Callable[[], None] = lambda: None,
    webhook_calls: Executor | None = None,
    metrics: Metrics | None = None,
    **commands: Any,
) -> Services:
    """The services over `redis_client`, with the bot queues on `queue_client` (None: the
    same). `wake` is called when a job is queued or a table is left to the sweep; `signer`
    signs export bundles (None: a key of its own, for a process that exports none);
    `webhook_calls` runs a bot worker's webhook calls beside its jobs (None: in them);
    `metrics` is what they record into (None: a registry of their own); the rest go to
    `TableCommands` (a clock, id and seed makers)."""
    registry = registry or config.registry()
    metrics = metrics or Metrics()
    tables = Tables(registry)
    # The search bot's thinking time is measured by a clock it is given: domain/ reads none.
    bots = default_catalogue(registry, bot_clock())
    views = Views(tables)
    repository = TableRepository(
        EventStore(
            redis_client,
            upcasters or default_upcasters(registry),
            blocking=blocking_reads(redis_client, config),
            wait_replicas=config.replicas_to_wait_for,
            wait_ms=config.wait_replicas_ms,
        ),
        tables,
        TableCache(config.cache_size),
        snapshots := SnapshotStore(redis_client, registry, config.snapshot_every, metrics),
    )
    shared = queue_client is None or queue_client is redis_client
    queue_client = queue_client or redis_client
    turns = TurnQueue(
        queue_client,
        bot_queue(queue_client),
        tables,
        job_timeout_seconds=config.webhook_timeout_seconds + 5,
        open_table_seconds=config.open_table_seconds,
        wake=wake,
        # One server holds the games and the queue: an append marks its table for the sweep.
        marks_with_appends=shared and not isinstance(redis_client, RedisCluster),
    )
    index = TableIndex(redis_client)
    quotas = Quotas(redis_client, repository.store, config.max_open_tables, config.max_bot_tables)
    handler = TableCommands(
        repository=repository,
        vault=SeedVault(redis_client),
        views=views,
        turns=turns,
        bots=bots,
        index=index,
        default_clock=config.default_clock,
        receipts_ttl_seconds=config.receipts_ttl_seconds,
        metrics=metrics,
        quotas=quotas,
        **commands,
    )
    queries = TableQueries(
        repository=repository,
        views=views,
        index=index,
        signer=signer or Signer.generate(),
        kept=KeptAnswers(redis_client, snapshots),
    )
    webhooks = WebhookClient(config.webhook_timeout_seconds, webhook_guard(config))
    player = TurnPlayer(
        repository, handler, bots, webhooks, handler.clock, calls=webhook_calls, metrics=metrics
    )
    hub = StreamHub(redis_client, queries)
    return Services(
        config, redis_client, repository, handler, queries, bots, turns, player, metrics, hub
    )


def process_metrics() -> Metrics:
    """This process's metrics: in the files of multiprocess mode when the environment names
    its directory (the Procfile does), else in memory."""
    path = multiprocess_dir()
    if path is not None:
        path.mkdir(parents=True, exist_ok=True)
    return Metrics(multiprocess=path is not None)


def bot_clock() -> Callable[[], float]:
    """The search bots' clock. In a gevent worker (the embedded `spieltisch` plays bot turns in
    its web process) each reading lets the other greenlets run first: gevent never preempts, so
    a bot thinking for a second would otherwise hold every request up for that second."""
    if not gevent.monkey.is_module_patched("threading"):
        return time.perf_counter

    def yielding() -> float:
        gevent.sleep(0)
        return time.perf_counter()

    return yielding


BLOCK_MARGIN_SECONDS = 5.0
"""How much longer than the longest blocking read a socket waits before it gives up."""


def blocking_reads(client: redis.Redis, config: Config) -> redis.Redis:
    """A client to the same server (or cluster) as `client` for blocking reads of up to a live
    stream's keep-alive: its socket timeout outlasts the block. redis-py's default timeout (5 s)
    would cut a live stream's 15 s wait for news short with an error instead of a keep-alive."""
    if isinstance(client, fakeredis.FakeRedis):
        return client  # in-process: no socket to time out
    timeout = config.stream_keepalive_seconds + BLOCK_MARGIN_SECONDS
    return same_server(client, config.redis_url, socket_timeout=timeout)


def web_app(
    config: Config | None = None,
    *,
    redis_client: redis.Redis | None = None,
    registry: GameRegistry | None = None,
    upcasters: Upcasters | None = None,
) -> Flask:
    """The web app: with no Redis URL (and no client given) embedded, on fakeredis and with a
    bot worker thread of its own. `upcasters` bring events stored under an older schema version
    to the current one on read (default: every step Spieltisch itself has registered)."""
    config = config or Config.from_env()
    embedded = redis_client is None and config.redis_url is None
    if redis_client is None:
        redis_client = connect(config.redis_url) if config.redis_url else fakeredis.FakeRedis()
    worker = EmbeddedWorker() if embedded else None
    metrics = process_metrics()
    services = build(
        redis_client,
        config,
        queue_client=connect(config.queue_url) if config.queue_url else None,
        registry=registry,
        upcasters=upcasters,
        signer=signer_for(config),
        wake=worker.start if worker else lambda: None,
        webhook_calls=webhook_pool(config) if worker else None,
        metrics=metrics,
    )
    metrics.collect_also(QueueFigures(services.turns.queue, lambda: metrics.redis_error("scrape")))
    if worker is not None:
        worker.play = services.play
    app = create_app(
        config,
        redis_client=redis_client,
        commands=services.commands,
        queries=services.queries,
        bots=services.bots,
        limiter=limiter_for(config),
        metrics=metrics,
        hub=services.hub,
        refuse_webhook=webhook_guard(config).refusal,
    )
    app.extensions[SERVICES] = services
    if worker is not None:
        app.extensions[EMBEDDED_WORKER] = worker
    return app


def webhook_guard(config: Config) -> AddressGuard:
    """Where webhooks may be called: public addresses, the allowed ones and, embedded, loopback
    (so the examples/ bots run beside `spieltisch` as they are)."""
    return AddressGuard.of(config.webhook_allow, loopback=config.redis_url is None)


def webhook_pool(config: Config) -> Executor:
    """The threads a bot worker calls webhooks in, so that a slow one holds up no other table."""
    return ThreadPoolExecutor(config.webhook_threads, thread_name_prefix="spieltisch-webhook")


def signer_for(config: Config) -> Signer:
    """The key export bundles are signed with: the configured one; embedded, a fresh one."""
    if config.signing_key is not None:
        return Signer.from_text(config.signing_key)
    if config.redis_url is not None:
        raise RuntimeError(
            "set SPIELTISCH_SIGNING_KEY to the service's Ed25519 private key (32 bytes, base64): "
            "every web process must sign export bundles with the same key"
        )
    return Signer.generate()


RQ_LOGGERS = ("rq.worker", "rq.job", "rq.scheduler", "rq.queue")


class Worker(BotWorker):
    """The Procfile's bot worker (`rq worker --worker-class bootstrap.Worker`), configured from
    the environment: it takes jobs from the connection `rq worker` gives it (`QUEUE_URL`, else
    `REDIS_URL`), and reads and writes the games where `REDIS_URL` says."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        connection = kwargs.get("connection")
        assert connection is not None, "rq worker passes the connection it was given"
        config = Config.from_env()
        # RQ gave its loggers plain-text handlers already: its lines become JSON lines too.
        log_json(adopt=RQ_LOGGERS)
        games = connect(config.redis_url) if config.queue_url and config.redis_url else connection
        services = build(
            games,
            config,
            queue_client=connection,
            webhook_calls=webhook_pool(config),
            metrics=process_metrics(),
        )
        super().__init__(*args, play=services.play, **kwargs)
