"""The service on a Redis Cluster (`REDIS_URL=redis+cluster://...`) with its bot queues on a
Redis server of their own (`QUEUE_URL`): the URLs and settings, the table index spread over the
cluster, the Procfile's own lines on a real local cluster, several web processes and workers
playing side by side, and a master killed mid-game.

The store's contract runs on the cluster in tests/test_store_contract.py. Every wait has a
deadline; none asserts how long anything took.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import fakeredis
import pytest
import redis
from redis.cluster import RedisCluster

from bench.cluster import Cluster
from events.connect import cluster_settings, connect, is_cluster
from events.index import TableIndex
from events.store import INDEX_SHARDS, EventStore, created_index_key, stream_key
from service.config import Config
from tests.live import TEST_REDIS_URL, call
from tests.stack import Stack
from tests.test_e2e_bots import EventStream
from tests.test_e2e_operations import Procfile
from tests.test_faults import FINISHED, Load, all_bot_table, check_audits, wait_finished

NODES = "127.0.0.1:7000,127.0.0.1:7001"

# --- settings -----------------------------------------------------------------------------------


def test_a_cluster_url_names_its_nodes_and_credentials() -> None:
    settings = cluster_settings(f"redis+cluster://ops:s%40cret@{NODES}/0")
    assert [(n.host, n.port) for n in settings["startup_nodes"]] == [
        ("127.0.0.1", 7000),
        ("127.0.0.1", 7001),
    ]
    assert (settings["username"], settings["password"]) == ("ops", "s@cret")
    assert is_cluster(f"redis+cluster://{NODES}")
    assert not is_cluster("redis://127.0.0.1:6379/0")


@pytest.mark.parametrize(
    ("url", "complaint"),
    [
        (f"redis+cluster://{NODES}/3", "database 0 only"),
        (f"redis+cluster://{NODES}?socket_timeout=1", "takes no options"),
        ("redis+cluster://127.0.0.1", "host:port"),
        ("redis+cluster://127.0.0.1:7000,:7001", "host:port"),
    ],
)
def test_a_cluster_url_that_cannot_work_is_refused(url: str, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        cluster_settings(url)


def test_a_cluster_needs_a_queue_redis_of_its_own() -> None:
    cluster = f"redis+cluster://{NODES}"
    with pytest.raises(ValueError, match="set QUEUE_URL to a single Redis server"):
        Config.from_env({"REDIS_URL": cluster})
    with pytest.raises(ValueError, match="QUEUE_URL must name a single Redis server"):
        Config.from_env({"REDIS_URL": cluster, "QUEUE_URL": cluster})
    with pytest.raises(ValueError, match="REDIS_URL is not"):
        Config.from_env({"QUEUE_URL": "redis://127.0.0.1:6379/1"})
    both = Config.from_env({"REDIS_URL": cluster, "QUEUE_URL": "redis://queues:6379/0"})
    assert (both.redis_url, both.queue_url) == (cluster, "redis://queues:6379/0")
    assert Config.from_env({"REDIS_URL": "redis://one:6379/0"}).queue_url is None


def test_appends_wait_for_a_replica_on_a_cluster_and_for_none_on_one_server() -> None:
    queues = {"QUEUE_URL": "redis://queues:6379/0"}
    cluster = {"REDIS_URL": f"redis+cluster://{NODES}", **queues}
    assert Config.from_env(cluster).replicas_to_wait_for == 1
    assert Config.from_env({"REDIS_URL": "redis://one:6379/0"}).replicas_to_wait_for == 0
    assert Config.from_env({}).replicas_to_wait_for == 0, "embedded"
    off = Config.from_env({**cluster, "SPIELTISCH_WAIT_REPLICAS": "0"})
    assert off.replicas_to_wait_for == 0
    with pytest.raises(ValueError, match="0 or more"):
        Config.from_env({**cluster, "SPIELTISCH_WAIT_REPLICAS": "-1"})
    with pytest.raises(ValueError, match="WAIT 0 waits for ever"):
        Config.from_env({**cluster, "SPIELTISCH_WAIT_REPLICAS_MS": "0"})


def test_the_index_spreads_over_its_shards_and_lists_newest_first() -> None:
    index = TableIndex(fakeredis.FakeRedis())
    start = datetime(2026, 1, 1, tzinfo=UTC)
    ids = [f"t{number}" for number in range(64)]
    for minutes, table_id in enumerate(ids):
        index.add(table_id, start + timedelta(minutes=minutes))
    assert len({created_index_key(table_id) for table_id in ids}) == INDEX_SHARDS
    newest = index.newest(10)
    assert [table_id for table_id, _ in newest] == ids[::-1][:10]
    assert newest[0][1] == start + timedelta(minutes=63)


# --- the service on a local cluster -------------------------------------------------------------


@pytest.fixture
def queue_redis(real_redis: redis.Redis) -> redis.Redis:
    """The bot queues' own Redis: the tests' database on the shared server."""
    return real_redis


@pytest.fixture
def cluster_stack(
    cluster_redis: redis.Redis, redis_cluster: Cluster, queue_redis: redis.Redis, tmp_path: Path
) -> Iterator[Stack]:
    """Two gunicorn processes and two bot workers on the session's cluster."""
    running = Stack(tmp_path, redis_cluster.url, TEST_REDIS_URL)
    try:
        for _ in range(2):
            running.start_worker()
        running.wait_until_serving()
        yield running
    finally:
        running.stop()


@pytest.mark.e2e
@pytest.mark.cluster
def test_the_procfile_runs_on_a_cluster_with_its_queues_apart(
    cluster_redis: redis.Redis, redis_cluster: Cluster, queue_redis: redis.Redis, tmp_path: Path
) -> None:
    procfile = Procfile(tmp_path)
    procfile.env |= {"REDIS_URL": redis_cluster.url, "QUEUE_URL": TEST_REDIS_URL}
    try:
        procfile.start("web")
        procfile.start("worker")
        procfile.wait_until_serving()
        table_id = all_bot_table(procfile.base)
        procfile.wait_for("the all-bot game to finish", lambda: finished(procfile.base, table_id))
        assert check_audits(procfile.base, [table_id]) == 1
    finally:
        procfile.stop()
    on_cluster: list[bytes] = cluster_redis.keys("*", target_nodes=RedisCluster.PRIMARIES)  # type: ignore[assignment]
    assert stream_key(table_id).encode() in on_cluster
    queueing = [k for k in on_cluster if k.startswith((b"rq:", b"bots:")) or b":turn:" in k]
    assert not queueing, "jobs, turn claims and the sweep's set are on the queue Redis"
    assert queue_redis.keys("rq:*"), "the bot jobs went through the queue Redis"
    assert not queue_redis.exists(stream_key(table_id)), "no game data on the queue Redis"


def finished(base: str, table_id: str) -> bool:
    status, table = call(base, "GET", f"/v1/tables/{table_id}")
    assert status == 200, table
    return bool(table["status"] == FINISHED)


def check_consistent(base: str, load: Load, games: redis.Redis) -> int:
    """Every table the load played serves the version its stream holds, from whichever web
    process answers (no phantom versions), and audits once finished; the acknowledged moves
    the streams lost."""
    store = EventStore(games)
    lost = 0
    for table_id, acknowledged in load.acknowledged().items():
        records = store.read(table_id, verify=False)
        lost += len(set(acknowledged) - {(r.seq, r.meta["command_id"]) for r in records})
        for _ in range(4):  # likely both web processes, each with the table cached
            status, table = call(base, "GET", f"/v1/tables/{table_id}")
            assert (status, table["version"]) == (200, len(records)), "no phantom version"
    tables = list(load.acknowledged())
    assert check_audits(base, tables) == len(tables)
    return lost


@pytest.mark.e2e
@pytest.mark.cluster
def test_web_processes_and_workers_on_a_cluster_stay_consistent(
    cluster_stack: Stack, cluster_redis: redis.Redis
) -> None:
    all_bots = all_bot_table(cluster_stack.base)
    stream = EventStream(cluster_stack.base, all_bots)
    load = Load(cluster_stack.base)
    load.wait_for_moves(80)
    load.finish()
    assert not load.errors(), load.errors()
    events = stream.until_finished(cluster_stack)
    status, log = call(cluster_stack.base, "GET", f"/v1/tables/{all_bots}/events")
    assert status == 200, log
    assert [e["seq"] for e in events] == [e["seq"] for e in log["events"]]
    cluster_stack.check_alive()
    assert check_consistent(cluster_stack.base, load, cluster_redis) == 0


@pytest.fixture
def own_cluster(tmp_path: Path) -> Iterator[Cluster]:
    """A cluster of the test's own, since the test kills one of its masters."""
    with Cluster(tmp_path / "cluster") as cluster:
        yield cluster


@pytest.mark.fault
@pytest.mark.cluster
def test_a_master_killed_mid_game_fails_over_and_play_goes_on(
    own_cluster: Cluster, queue_redis: redis.Redis, tmp_path: Path
) -> None:
    stack = Stack(tmp_path, own_cluster.url, TEST_REDIS_URL)
    try:
        stack.start_worker()
        stack.wait_until_serving()
        load = Load(stack.base)
        load.wait_for_moves(40)
        playing = load.players[0].games[-1]
        victim = own_cluster.master_of(stream_key(playing))
        victim.kill()
        successor = own_cluster.wait_for_failover(victim, stream_key(playing))
        load.wait_for_moves(sum(player.moves for player in load.players) + 60)
        bots_after = [all_bot_table(stack.base) for _ in range(3)]
        load.finish()
        assert not load.errors(), load.errors()
        wait_finished(stack.base, bots_after, stack)
        stack.check_alive()
        games = connect(own_cluster.url)
        try:
            lost = check_consistent(stack.base, load, games)
        finally:
            games.close()
        assert check_audits(stack.base, bots_after) == len(bots_after)
        # Each append was answered once the master's replica had it (WAIT, the cluster's
        # default): the replica that took over holds every acknowledged move.
        assert lost == 0, f"port {victim.port} killed, {successor.port} took over"
    finally:
        stack.stop()
