"""What an acknowledged move being on disk costs: appends per second and their latency with the
AOF fsynced every second (`appendfsync everysec`) and before every answer (`always`).

For each mode the script starts a `redis-server` of its own with `deploy/redis.conf` (that mode
put in), its data in a fresh directory under `--data-dir` (which must be on the disk Redis would
use: a tmpfs makes every fsync free), and appends single events through `EventStore.append`
from `--clients` threads at once, each on a game of its own, as web processes do.

    .venv/bin/python bench/durability.py [--appends 4000] [--clients 1 8] [--smoke]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis

from bench.common import await_redis, free_port, median, p99, parser, print_table
from bench.store import META, event
from events.envelope import START
from events.store import Appended, EventStore

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "deploy" / "redis.conf"
MODES = ("everysec", "always")


@contextmanager
def redis_server(data_dir: Path, fsync: str) -> Iterator[redis.Redis]:
    """`redis-server deploy/redis.conf` with `appendfsync fsync`, on a free port."""
    port = free_port()
    with tempfile.TemporaryDirectory(dir=data_dir) as directory:
        server = subprocess.Popen(
            [
                *("redis-server", str(CONFIG), "--port", str(port), "--dir", directory),
                *("--appendfsync", fsync, "--logfile", str(Path(directory) / "redis.log")),
            ],
            stdout=subprocess.DEVNULL,
        )
        client = redis.Redis(port=port)
        try:
            await_redis(client, tries=200)
            yield client
        finally:
            client.close()
            server.terminate()
            server.wait(timeout=30)


def run(client: redis.Redis, appends: int, clients: int) -> tuple[float, list[float]]:
    """Appends per second over `clients` threads, and each append's latency in seconds."""
    latencies: list[list[float]] = [[] for _ in range(clients)]
    start = threading.Barrier(clients + 1)

    def append(number: int) -> None:
        store = EventStore(client)
        game, position = f"durability-{number}", START
        start.wait()
        for n in range(appends // clients):
            began = time.perf_counter()
            outcome = store.append(game, position, [event(n)], META)
            latencies[number].append(time.perf_counter() - began)
            assert isinstance(outcome, Appended)
            position = outcome.position

    threads = [threading.Thread(target=append, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - began
    samples = [latency for per_client in latencies for latency in per_client]
    return len(samples) / seconds, samples


def main() -> None:
    options = parser(__doc__.splitlines()[0])
    options.add_argument("--appends", type=int, default=4000)
    options.add_argument("--clients", type=int, nargs="+", default=[1, 8])
    options.add_argument("--data-dir", type=Path, default=ROOT)
    args = options.parse_args()
    appends = 80 if args.smoke else args.appends
    rows = []
    for clients in args.clients:
        rates = {}
        for mode in MODES:
            with redis_server(args.data_dir, mode) as client:
                rate, samples = run(client, appends, clients)
            rates[mode] = rate
            rows.append(
                [
                    f"appendfsync {mode}",
                    str(clients),
                    f"{rate:,.0f}",
                    f"{median(samples) * 1000:.2f}",
                    f"{p99(samples) * 1000:.2f}",
                    f"{rate / rates[MODES[0]]:.2f}",
                ]
            )
    print_table(
        ["mode", "clients", "appends/s", "median ms", "p99 ms", "vs everysec"],
        rows,
    )


if __name__ == "__main__":
    main()
