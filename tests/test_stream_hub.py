"""Many live streams in one process on a real Redis: one reader serves them all, each stream
gets exactly the events its caller may see, in order, with keep-alives while idle, and a lost
news connection is made good again, appends made meanwhile included."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import cast

import pytest
import redis
from redis.exceptions import RedisClusterException

from bench.cluster import Cluster
from bootstrap import Services, build
from events.connect import connect, is_outage
from events.store import stream_key
from service.config import Config
from service.stream import KEEPALIVE, RECONNECT_MS, ShardedReceiver, event_stream
from service.views import SPECTATOR, Caller
from tests.faults import cluster_lost_every_node
from tests.live import TEST_REDIS_URL

pytestmark = pytest.mark.redis

KEEPALIVE_SECONDS = 0.3
PATIENCE = 20.0
"""How long a test waits for what it expects before it fails (never a measure of speed)."""
TABLES = 12


@pytest.fixture
def services(real_redis: redis.Redis) -> Iterator[Services]:
    config = Config(stream_keepalive_seconds=KEEPALIVE_SECONDS, stream_max_seconds=600)
    services = build(real_redis, config)
    yield services
    services.hub.close()
    services.repository.store.close()


class Follower(threading.Thread):
    """A client reading one stream until it is told to stop (after a keep-alive)."""

    def __init__(self, services: Services, table_id: str, caller: Caller, after: int) -> None:
        super().__init__(daemon=True)
        self.table_id, self.caller, self.after = table_id, caller, after
        self.texts: list[str] = []
        self.stop = threading.Event()
        self.stream = event_stream(
            services.hub,
            table_id,
            caller,
            after,
            keepalive_seconds=KEEPALIVE_SECONDS,
            max_seconds=services.config.stream_max_seconds,
        )

    def run(self) -> None:
        for text in self.stream:
            if text == KEEPALIVE and self.stop.is_set():
                break
            self.texts.append(text)
        self.stream.close()

    @property
    def events(self) -> list[dict[str, object]]:
        """The events sent, as JSON, without the deadlines (and a seat's moves) the newest one
        carried then."""
        found = []
        for frame in "".join(self.texts).split("\n\n"):
            if frame.startswith("id: "):
                event = json.loads(frame.split("\ndata: ", 1)[1])
                event.pop("deadlines", None)
                event.pop("moves", None)
                found.append(event)
        return found

    def reached(self, version: int) -> bool:
        """Whether the last event sent is `version`."""
        return [event["seq"] for event in self.events][-1:] == [version]

    def idle_for(self, keepalives: int) -> bool:
        """Whether `keepalives` came after the last event."""
        last = max((n for n, text in enumerate(self.texts) if text.startswith("id: ")), default=0)
        return self.texts[last:].count(KEEPALIVE) >= keepalives


def seated_table(services: Services) -> tuple[str, list[Caller]]:
    table_id: str = services.commands.create("pig10", 2, {}, None).body["id"]
    seats = []
    for name in ("Ada", "Bo"):
        token = services.commands.take_seat(table_id, SPECTATOR, None, name, None).shown.body[
            "token"
        ]
        seats.append(services.queries.caller(table_id, token))
    return table_id, seats


def move(services: Services, table_id: str, seats: list[Caller]) -> int:
    """One legal move by whoever is to act; the table's version after it."""
    table = services.repository.load(table_id).table
    (caller,) = [seat for seat in seats if seat.seat in services.repository.tables.to_act(table)]
    legal = services.queries.legal_moves(table_id, caller).body
    answer = services.commands.move(table_id, caller, legal["moves"][0], legal["version"], None)
    version: int = answer.shown.body["version"]
    return version


def eventually(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.02)


def pubsub_connections(client: redis.Redis) -> list[dict[str, str]]:
    """This database's pub/sub connections: the readers of this test's streams."""
    db = str(client.connection_pool.connection_kwargs.get("db", 0))
    found = cast(list[dict[str, str]], client.client_list(_type="pubsub"))
    return [connection for connection in found if str(connection["db"]) == db]


def numsub(client: redis.Redis, channel: str) -> list[tuple[bytes, int]]:
    """PUBSUB NUMSUB of `channel`: its name and how many clients subscribe to it."""
    return cast(list[tuple[bytes, int]], client.pubsub_numsub(channel))


def readers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "spieltisch-stream-reader"]


def test_one_reader_serves_many_streams_each_its_own_events_in_order(
    services: Services, real_redis: redis.Redis
) -> None:
    tables = [seated_table(services) for _ in range(TABLES)]
    followers = []
    for number, (table_id, seats) in enumerate(tables):
        # Half the streams start from the beginning (read for themselves), half from now.
        after = 0 if number % 2 else services.repository.load(table_id).version
        for caller in (*seats, SPECTATOR):
            followers.append(Follower(services, table_id, caller, after))
    for follower in followers:
        follower.start()
    # No waiting for the subscriptions: appends made before one takes must reach the streams too.
    # Another process makes the moves: this one learns of them from Redis alone.
    writer = build(real_redis, services.config)
    for _ in range(6):
        for table_id, seats in tables:
            move(writer, table_id, seats)
    versions = {table_id: services.repository.load(table_id).version for table_id, _ in tables}

    for follower in followers:
        eventually(
            partial(follower.reached, versions[follower.table_id]),
            f"the stream of seat {follower.caller.seat} at {follower.table_id} catches up",
        )
    assert len(readers()) == 1, "one reader for all the streams"
    (connection,) = pubsub_connections(real_redis)
    assert int(connection["sub"]) == TABLES, "one subscription per table, not per stream"

    for follower in followers:
        log = services.queries.events(follower.table_id, follower.caller, follower.after).body
        assert follower.events == log["events"], "what the caller sees of the log, in order"
    by_seat = {(f.table_id, f.caller.seat): f.events for f in followers}
    for table_id, _ in tables:
        assert by_seat[table_id, 0] != by_seat[table_id, 1], "each seat sees its own hand"

    for follower in followers:
        eventually(
            partial(follower.idle_for, 2),
            "an idle stream sends keep-alives",
        )
        follower.stop.set()
    for follower in followers:
        follower.join()
    eventually(lambda: not readers(), "the reader ends with the last stream")
    assert pubsub_connections(real_redis) == []


def test_a_lost_news_connection_is_made_good_again(
    services: Services, real_redis: redis.Redis
) -> None:
    table_id, seats = seated_table(services)
    follower = Follower(services, table_id, seats[0], services.repository.load(table_id).version)
    follower.start()
    channel = stream_key(table_id)
    subscribed = lambda: dict(numsub(real_redis, channel))[channel.encode()] == 1  # noqa: E731
    eventually(subscribed, "the reader subscribes")
    versions = [move(services, table_id, seats)]
    eventually(partial(follower.reached, versions[0]), "the first move is streamed")

    for connection in pubsub_connections(real_redis):
        assert real_redis.client_kill_filter(_id=connection["id"]) == 1
    # Made while the reader may not be listening: its publication may well be lost.
    versions.append(move(services, table_id, seats))
    eventually(
        partial(follower.reached, versions[-1]),
        "the move made while the reader was away is streamed",
    )
    eventually(subscribed, "the reader subscribes again")
    versions.append(move(services, table_id, seats))
    eventually(
        partial(follower.reached, versions[-1]),
        "moves made after the reader is back are streamed",
    )
    log = services.queries.events(table_id, seats[0], follower.after).body["events"]
    assert follower.events == log
    eventually(partial(follower.idle_for, 1), "keep-alives go on")
    follower.stop.set()
    follower.join()


def shard_subscribers(cluster: redis.Redis, channel: str) -> tuple[int, int]:
    """How many connections of the master holding `channel`'s slot subscribe to it sharded
    (SSUBSCRIBE) and how many classic (SUBSCRIBE)."""
    node = cluster.get_node_from_key(channel)  # type: ignore[attr-defined]
    master = cluster.get_redis_connection(node)  # type: ignore[attr-defined]
    sharded = dict(master.pubsub_shardnumsub(channel))[channel.encode()]
    classic = dict(master.pubsub_numsub(channel))[channel.encode()]
    return int(sharded), int(classic)


@pytest.fixture
def cluster_services(
    cluster_redis: redis.Redis, redis_cluster: Cluster, real_redis: redis.Redis
) -> Iterator[Services]:
    """The services on the tests' cluster, the bot queues on the tests' Redis server."""
    config = Config(
        stream_keepalive_seconds=KEEPALIVE_SECONDS,
        redis_url=redis_cluster.url,
        queue_url=TEST_REDIS_URL,
    )
    services = build(cluster_redis, config, queue_client=real_redis)
    yield services
    services.hub.close()
    services.repository.store.close()


@pytest.mark.cluster
def test_on_a_cluster_streams_hear_appends_on_the_tables_own_shard(
    cluster_services: Services, cluster_redis: redis.Redis
) -> None:
    table_id, seats = seated_table(cluster_services)
    after = cluster_services.repository.load(table_id).version
    follower = Follower(cluster_services, table_id, seats[1], after)
    follower.start()
    channel = stream_key(table_id)
    eventually(lambda: shard_subscribers(cluster_redis, channel)[0] == 1, "a sharded subscription")
    assert shard_subscribers(cluster_redis, channel) == (1, 0), "no classic subscription"
    versions = [move(cluster_services, table_id, seats) for _ in range(4)]
    eventually(partial(follower.reached, versions[-1]), "the moves are streamed")
    log = cluster_services.queries.events(table_id, seats[1], after).body["events"]
    assert follower.events == log
    follower.stop.set()
    follower.join()


def channels_on_each_master(cluster: redis.Redis) -> list[str]:
    """One channel name a master of `cluster`, in the order of their first such name."""
    found: dict[str, str] = {}
    masters = len(cluster.get_primaries())  # type: ignore[attr-defined]
    for number in range(1000):
        channel = f"news-{number}"
        found.setdefault(cluster.get_node_from_key(channel).name, channel)  # type: ignore[attr-defined]
        if len(found) == masters:
            break
    return list(found.values())


@pytest.mark.cluster
def test_the_reader_hears_every_shard_and_a_busy_one_starves_none(
    cluster_redis: redis.Redis,
) -> None:
    pubsub = cluster_redis.pubsub()  # type: ignore[no-untyped-call]
    receive = ShardedReceiver(pubsub)
    busy, quiet, idle = channels_on_each_master(cluster_redis)
    pubsub.ssubscribe(busy, quiet, idle)
    confirmed: set[str] = set()
    for _ in range(30):
        if (message := receive(0.3)) is not None and message["type"] == "ssubscribe":
            confirmed.add(message["channel"].decode())
        if len(confirmed) == 3:
            break
    assert confirmed == {busy, quiet, idle}
    for number in range(5):
        cluster_redis.spublish(busy, f"busy {number}")
    cluster_redis.spublish(quiet, "quiet")
    heard = [receive(0.3) for _ in range(3)]
    assert b"quiet" in [m["data"] for m in heard if m], "within a call per shard, busy or not"
    heard += [receive(0.3) for _ in range(10)]
    assert sorted(m["data"] for m in heard if m) == sorted(
        [b"quiet", *(f"busy {n}".encode() for n in range(5))]
    )
    pubsub.close()


def test_a_stream_whose_cluster_reaches_no_node_ends_early_for_the_client_to_come_back(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    table_id, seats = seated_table(services)

    def unreachable(*_: object) -> None:
        raise cluster_lost_every_node()

    monkeypatch.setattr(services.hub, "read", unreachable)
    stream = event_stream(services.hub, table_id, seats[0], 0, keepalive_seconds=0.1, max_seconds=5)
    # The retry line, then the end, without a trace: the client comes back with Last-Event-ID.
    assert list(stream) == [f"retry: {RECONNECT_MS}\n\n"]


def test_a_cluster_clients_mistake_in_a_stream_is_raised_to_be_logged_with_its_trace(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    table_id, seats = seated_table(services)
    misuse = RedisClusterException("keys in request don't hash to the same slot")

    def misused(*_: object) -> None:
        raise misuse

    monkeypatch.setattr(services.hub, "read", misused)
    stream = event_stream(services.hub, table_id, seats[0], 0, keepalive_seconds=0.1, max_seconds=5)
    assert next(stream) == f"retry: {RECONNECT_MS}\n\n"
    with pytest.raises(RedisClusterException) as raised:
        next(stream)
    assert raised.value is misuse


def move_once_served(services: Services, table_id: str, seats: list[Caller]) -> int:
    """`move`, tried again while the cluster is settling after a failover."""
    deadline = time.monotonic() + PATIENCE
    while True:
        try:
            return move(services, table_id, seats)
        except Exception as error:
            if not (is_outage(error) or isinstance(error, redis.RedisError)):
                raise
            assert time.monotonic() < deadline, "the cluster never served the move"
            time.sleep(0.1)


@pytest.mark.fault
@pytest.mark.cluster
def test_a_stream_on_a_cluster_goes_on_after_its_shards_master_fails_over(
    tmp_path: Path, real_redis: redis.Redis
) -> None:
    with Cluster(tmp_path / "cluster") as cluster:
        config = Config(
            stream_keepalive_seconds=KEEPALIVE_SECONDS,
            redis_url=cluster.url,
            queue_url=TEST_REDIS_URL,
        )
        # Two processes: one streams, the other moves, so that the streaming one learns of the
        # failover from its own connections alone.
        clients = [connect(cluster.url) for _ in range(2)]
        streaming, writer = (build(c, config, queue_client=real_redis) for c in clients)
        try:
            table_id, seats = seated_table(writer)
            after = writer.repository.load(table_id).version
            follower = Follower(streaming, table_id, seats[0], after)
            follower.start()
            channel = stream_key(table_id)
            subscribed = lambda: shard_subscribers(clients[1], channel) == (1, 0)  # noqa: E731
            eventually(subscribed, "subscribed")
            versions = [move(writer, table_id, seats)]
            eventually(partial(follower.reached, versions[-1]), "a move before the failover")

            victim = cluster.master_of(channel)
            victim.kill()
            successor = cluster.wait_for_failover(victim, channel)
            versions += [move_once_served(writer, table_id, seats) for _ in range(3)]
            eventually(partial(follower.reached, versions[-1]), "the moves after the failover")
            # Subscribed anew on the master that took over, not only caught up by a read.
            assert cluster.master_of(channel) is successor
            eventually(subscribed, "subscribed on the successor")
            versions.append(move(writer, table_id, seats))
            eventually(partial(follower.reached, versions[-1]), "heard on the successor")
            log = writer.queries.events(table_id, seats[0], after).body["events"]
            assert follower.events == log
            follower.stop.set()
            follower.join()
        finally:
            for services in (streaming, writer):
                services.hub.close()
                services.repository.store.close()
            for client in clients:
                client.close()
