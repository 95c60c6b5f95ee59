"""Building the table service and its bot machinery: shared by the web app and the workers."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from redis import Redis
from rq import Queue
from rq.serializers import JSONSerializer

from domain.catalogue import default_catalogue
from domain.registry import GameRegistry
from domain.table import Tables
from events.index import TableIndex
from events.secrets import SeedVault
from events.store import EventStore
from events.upcasting import Upcasters
from service.audit import default_upcasters
from service.config import Config
from service.signing import Signer
from service.tables import TableCache, TableService
from service.views import Views
from workers.player import TurnPlayer
from workers.turns import QUEUE, TurnQueue
from workers.webhook import WebhookClient


def bot_queue(redis: Redis) -> Queue:
    """The RQ queue of bot turns; jobs are JSON (ids and versions), never pickles."""
    return Queue(QUEUE, connection=redis, serializer=JSONSerializer)


@dataclass(frozen=True)
class Runtime:
    service: TableService
    turns: TurnQueue
    player: TurnPlayer


def build_runtime(
    redis: Redis,
    config: Config,
    *,
    registry: GameRegistry | None = None,
    upcasters: Upcasters | None = None,
    wake: Callable[[], None] = lambda: None,
    signer: Signer | None = None,
) -> Runtime:
    """The service over `redis`, queueing bot turns; `wake` is called when a turn is queued;
    `signer` signs export bundles (None: a key of its own, for a process that exports none)."""
    registry = registry or config.registry()
    bots = default_catalogue(registry, time.perf_counter)
    webhooks = WebhookClient(config.webhook_timeout_seconds)
    turns = TurnQueue(
        redis,
        bot_queue(redis),
        job_timeout_seconds=config.webhook_timeout_seconds + 5,
        wake=wake,
    )
    tables = Tables(registry)
    service = TableService(
        store=EventStore(redis, upcasters or default_upcasters()),
        vault=SeedVault(redis),
        tables=tables,
        views=Views(tables),
        cache=TableCache(config.cache_size),
        turns=turns,
        bots=bots,
        index=TableIndex(redis),
        signer=signer,
    )
    return Runtime(service, turns, TurnPlayer(service, bots, webhooks))
