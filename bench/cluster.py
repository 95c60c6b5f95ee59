"""A local Redis Cluster, for the tests and `bench/load.py --cluster`: three masters with a
replica each, `redis-server --cluster-enabled yes` on loopback ports, joined by
`redis-cli --cluster create`.

The ports are free ones below the system's ephemeral range (so no outgoing connection can take
one between choosing and binding it; a node that still finds its port taken moves to another),
or from `SPIELTISCH_CLUSTER_PORT` on (six of them, and each one's bus port 10,000 above) where
several runs share a machine. A node times out after a second
(`cluster-node-timeout`), so a killed master's replica takes over within a few seconds. A cluster
that cannot start raises (an AssertionError naming what failed): a test needing it fails.
"""

from __future__ import annotations

import itertools
import os
import random
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any, cast

import redis
from redis.cluster import ClusterNode, RedisCluster

MASTERS = 3
NODES = MASTERS * 2
NODE_TIMEOUT_MS = 1000
BUS_OFFSET = 10000
"""A node's cluster bus listens this far above its port."""
START_SECONDS = 30.0
FIRST_PORT = os.environ.get("SPIELTISCH_CLUSTER_PORT")
"""Where the nodes' ports start (unset: free ports the system hands out); each cluster of a
run takes the next six."""
CLUSTERS_MADE = itertools.count()


LOWEST_PORT = 10000
BIND_ATTEMPTS = 5


def cluster_ports() -> list[int]:
    if FIRST_PORT is not None:
        first = int(FIRST_PORT) + next(CLUSTERS_MADE) * NODES
        return list(range(first, first + NODES))
    ports: list[int] = []
    while len(ports) < NODES:
        ports.append(unused_port(taken=ports))
    return ports


def unused_port(taken: list[int]) -> int:
    """A free port whose bus port is free too, both below the ephemeral range: the system hands
    ephemeral ports to outgoing connections, which could take one before its node binds it."""
    ephemeral_start = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    while True:
        port = random.randrange(LOWEST_PORT, ephemeral_start - BUS_OFFSET)
        if port not in taken and is_free(port) and is_free(port + BUS_OFFSET):
            return port


def is_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


class Node:
    """One `redis-server` of the cluster, its data in a directory of its own."""

    def __init__(self, directory: Path, port: int) -> None:
        self.home = directory
        self.move_to(port)
        self.process: subprocess.Popen[bytes] | None = None

    def move_to(self, port: int) -> None:
        self.port = port
        self.directory = self.home / str(port)
        shutil.rmtree(self.directory, ignore_errors=True)
        self.directory.mkdir(parents=True)
        self.log = self.directory / "redis.log"

    def could_not_bind(self) -> bool:
        return (
            self.process is not None
            and self.process.poll() is not None
            and ("Address already in use" in self.tail())
        )

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                *("redis-server", "--port", str(self.port), "--bind", "127.0.0.1"),
                *("--dir", str(self.directory), "--logfile", str(self.log)),
                *("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"),
                *("--cluster-node-timeout", str(NODE_TIMEOUT_MS)),
                # Failover is the replicas' business here: no files to write on every move.
                *("--save", "", "--appendonly", "no"),
                # A replica syncs at once, not after the default 5 s wait for more replicas.
                *("--repl-diskless-sync-delay", "0"),
            ],
            stdout=subprocess.DEVNULL,
        )

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=5)

    def wait_until_answering(self, deadline: float) -> None:
        client = self.client()
        try:
            while True:
                try:
                    client.ping()
                    return
                except (redis.ConnectionError, redis.TimeoutError):  # another's listener, maybe
                    assert self.process is not None
                    assert self.process.poll() is None, (
                        f"redis-server on port {self.port} exited:\n{self.tail()}"
                    )
                    assert time.monotonic() < deadline, f"port {self.port} never answered"
                    time.sleep(0.05)
        finally:
            client.close()

    def kill(self) -> None:
        """SIGKILL: the node vanishes mid-write, as a crashed machine does."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=START_SECONDS)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()

    def tail(self) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-20:])


class Cluster:
    """Six nodes made one cluster: `url` names them all, as `REDIS_URL` would."""

    def __init__(self, directory: Path) -> None:
        self.nodes = [Node(directory, port) for port in cluster_ports()]

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)

    def __enter__(self) -> Cluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def start(self) -> None:
        deadline = time.monotonic() + START_SECONDS
        for node in self.nodes:
            self._start_bound(node, deadline)
        created = subprocess.run(
            [
                *("redis-cli", "--cluster", "create"),
                *(f"127.0.0.1:{node.port}" for node in self.nodes),
                *("--cluster-replicas", "1", "--cluster-yes"),
            ],
            capture_output=True,
            text=True,
            timeout=START_SECONDS,
            check=False,
        )
        assert created.returncode == 0, f"redis-cli --cluster create failed:\n{created.stdout}"
        self.wait_until_healthy(deadline)

    def _start_bound(self, node: Node, deadline: float) -> None:
        """Start `node`; where another process bound its port first, on another free port."""
        for _ in range(BIND_ATTEMPTS):
            node.start()
            try:
                node.wait_until_answering(deadline)
                return
            except AssertionError:
                if FIRST_PORT is not None or not node.could_not_bind():
                    raise
            node.move_to(unused_port(taken=[n.port for n in self.nodes]))
        raise AssertionError(f"no free port held still for {BIND_ATTEMPTS} attempts")

    def wait_until_healthy(self, deadline: float) -> None:
        """Until every live node says the cluster is ok and knows its three masters' replicas,
        and every replica holds its master's data (one still syncing cannot take over)."""
        while True:
            if all(self._sees_whole_cluster(node) for node in self.alive()):
                return
            assert time.monotonic() < deadline, "the cluster never became healthy:\n" + "\n".join(
                node.tail() for node in self.nodes
            )
            time.sleep(0.1)

    def _sees_whole_cluster(self, node: Node) -> bool:
        client = node.client()
        try:
            info = client.execute_command("CLUSTER INFO")  # type: ignore[no-untyped-call]
            replication = cast(dict[str, Any], client.info("replication"))
            synced = replication["role"] == "master" or replication["master_link_status"] == "up"
            return bool(
                info["cluster_state"] == "ok"
                and int(info["cluster_known_nodes"]) == NODES
                and synced
            )
        except redis.RedisError:
            return False
        finally:
            client.close()

    def alive(self) -> list[Node]:
        return [n for n in self.nodes if n.process is not None and n.process.poll() is None]

    def client(self) -> RedisCluster:
        return RedisCluster(
            startup_nodes=[ClusterNode("127.0.0.1", node.port) for node in self.alive()]  # type: ignore[no-untyped-call]
        )

    def master_of(self, key: str) -> Node:
        """The node serving `key`'s slot now."""
        client = self.client()
        try:
            port = client.get_node_from_key(key).port  # type: ignore[no-untyped-call]
        finally:
            client.close()
        return next(node for node in self.nodes if node.port == port)

    def wait_for_failover(self, killed: Node, key: str) -> Node:
        """The replica that took `key`'s slot over from `killed`, once the cluster is ok again."""
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                master = self.master_of(key)
                if master is not killed and master.process is not None:
                    client = master.client()
                    try:
                        info = client.execute_command("CLUSTER INFO")  # type: ignore[no-untyped-call]
                        if info["cluster_state"] == "ok":
                            return master
                    finally:
                        client.close()
            except redis.RedisError:
                pass  # the slot map is in flux
            assert time.monotonic() < deadline, "no replica took over:\n" + "\n".join(
                node.tail() for node in self.alive()
            )
            time.sleep(0.1)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
