"""A Redis server of a test's own, on a free loopback port, with its data in a temporary
directory: to be killed, restarted and cut short under the service, never the shared one."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisClusterException

from tests.live import free_port

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "deploy" / "redis.conf"
"""The production configuration the fault tests run Redis with (AOF, fsync on every write)."""
START_SECONDS = 20.0


class RedisServer:
    """`redis-server deploy/redis.conf` on a port and directory of its own."""

    def __init__(self, directory: Path, *options: str) -> None:
        self.directory = directory
        self.port = free_port()
        self.options = options
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.log = directory / "redis.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = [
            *("redis-server", str(CONFIG), "--port", str(self.port), "--dir", str(self.directory)),
            *("--logfile", str(self.log), *self.options),
        ]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        client = self.client()
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                client.ping()  # answers only once the AOF is loaded
                return
            except (redis.ConnectionError, redis.BusyLoadingError):
                assert self.process.poll() is None, f"redis-server exited:\n{self.tail()}"
                assert time.monotonic() < deadline, f"redis-server never answered:\n{self.tail()}"
                time.sleep(0.05)
            finally:
                client.close()

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url, socket_timeout=5)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no final fsync; what is on disk is what the AOF holds."""
        self._stop(signal.SIGKILL)

    def stop(self) -> None:
        self._stop(signal.SIGTERM)

    def _stop(self, how: signal.Signals) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(how)
            self.process.wait(timeout=START_SECONDS)
        self.process = None

    def lose_tail(self, share: float) -> int:
        """Cut the last `share` of the AOF's incremental file, as a disk that had not yet
        synced the last writes leaves it (the server must be stopped); the bytes cut."""
        assert self.process is None, "stop the server first"
        (increment,) = (self.directory / "appendonlydir").glob("*.incr.aof")
        size = increment.stat().st_size
        cut = int(size * share)
        with increment.open("r+b") as aof:
            aof.truncate(size - cut)
        return cut

    def tail(self) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-20:])


def cluster_lost_every_node() -> RedisClusterException:
    """What redis-py's cluster client raises when a master died and it reached no node while it
    read the cluster's layout again (seen in tests/test_cluster.py's failover test)."""
    try:
        try:
            raise RedisConnectionError("Error while reading from 127.0.0.1:43503")
        except RedisConnectionError as lost:
            raise RedisClusterException("Redis Cluster cannot be connected") from lost
    except RedisClusterException as raised:
        return raised
