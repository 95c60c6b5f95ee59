"""Bot turns through real RQ worker processes on a real Redis: latency and throughput.

Latency: Pig 10 with one human (this script, calling the table service in-process as a web
process does) and three `random` bots. For each human move, the time from the move being
acknowledged (appended) to the next bot move being visible in the table's stream, read with a
blocking XREAD. Target: median <= 30 ms, p99 <= 150 ms with one worker process.

Latency is the machinery's: the tables are made with no bot delay (a table's clock otherwise
holds bots beside people back by design, see README "Clocks").

Throughput: all-bot Pig 10 games (4 seats) played at once; bot moves per second with 1 and with
2 worker processes, beside the rate at which the same workers drain no-op jobs queued at once.
Target: bot moves/s >= 0.9 x the no-op rate. A row for RQ's default worker, which forks a child
per job, shows why the Procfile's worker does not. Last, the Redis commands the worker sends per
bot move (MONITOR, while all-bot games play; the bench's own commands left out). One more row
plays the same games on tables with the default bot delay and reaction time: all-bot tables
play at full speed, so the delay should cost nothing there.

    .venv/bin/python bench/bots.py [--moves 300] [--games 16] [--noops 4000] [--smoke]

Rates move with the machine's load; `--callgrind` counts the instructions a Procfile worker
(`bootstrap.Worker`, quiet as above) executes per no-op job instead, under valgrind: one worker
process drains `--noops` jobs, and again none, after the same warm-up; the difference divided by
the jobs is RQ's cost of one job in the worker, redis-py's included (its version is printed).

    .venv/bin/python bench/bots.py --callgrind [--noops 1000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis
import rq
from rq import Queue, Worker
from rq.registry import StartedJobRegistry

from bench.common import (
    instructions,
    median,
    p99,
    parser,
    print_table,
    ratio,
    scratch_redis,
    start_counting,
    verdict,
)
from bench.metrics import collected, observed
from bootstrap import Services, build
from bootstrap import Worker as ProcfileWorker
from events.envelope import START
from service.config import Config
from service.tables import BotSeat
from service.views import SPECTATOR
from workers.turns import RESULT_TTL_SECONDS, bot_queue

ROOT = Path(__file__).resolve().parents[1]
BOT_WORKER = "bootstrap.Worker"
FORKING_WORKER = "rq.Worker"
LATENCY_MEDIAN_MS, LATENCY_P99_MS = 30.0, 150.0
THROUGHPUT_SHARE = 0.9
NOOP = "bench.bots.noop"
BENCH_CLIENT = "spieltisch-bench"
"""The name of the bench's own Redis connections, left out of the commands counted."""


def noop() -> None:
    """The job the no-op rate is measured with."""


def worker_env(url: str) -> dict[str, str]:
    """The environment of the bench's worker processes: the games on `url`, and quiet, as
    `--logging_level WARNING` makes RQ's own lines: no line per job."""
    return {**os.environ, "REDIS_URL": url, "SPIELTISCH_LOG_LEVEL": "WARNING"}


@contextmanager
def workers(
    url: str, count: int, worker_class: str = BOT_WORKER, metrics: Path | None = None
) -> Iterator[None]:
    """`count` worker processes as the Procfile starts them, ready before this yields; with
    `metrics`, writing their metrics into that directory (the Procfile's
    PROMETHEUS_MULTIPROC_DIR)."""
    connection = redis.Redis.from_url(url)
    command = [
        *(sys.executable, "-m", "rq.cli", "worker", "--url", url, "--serializer", "json"),
        *("--worker-class", worker_class, "--logging_level", "WARNING", "bots"),
    ]
    env = worker_env(url)
    if metrics is not None:
        env["PROMETHEUS_MULTIPROC_DIR"] = str(metrics)
    processes = [subprocess.Popen(command, cwd=ROOT, env=env) for _ in range(count)]
    try:
        deadline = time.monotonic() + 30
        while len(Worker.all(connection=connection)) < count:
            if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
                raise SystemExit("the rq workers did not start")
            time.sleep(0.05)
        yield
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                # A forking rq.Worker stops only once its job's child has (seen once in CI, the
                # figures already taken): say so, and do not leave it running.
                print(f"worker {process.pid} did not stop within 30 s of SIGTERM: killed")
                process.kill()
                process.wait()
        connection.close()


def wait_for(service: Services, table_id: str, after: int) -> int:
    """Block until the table has an event after version `after`; the newest version seen."""
    while not (records := service.repository.store.wait(table_id, after, 5000)):
        pass
    return records[-1].seq


def latency(service: Services, moves: int) -> list[float]:
    """Seconds from each human move's append to the first bot event after it."""
    samples: list[float] = []
    while len(samples) < moves:
        bots = [BotSeat(seat, "random") for seat in (1, 2, 3)]
        table_id = str(
            service.commands.create("pig10", 4, {"first_seat": 0}, None, bots).body["id"]
        )
        token = str(
            service.commands.take_seat(table_id, SPECTATOR, 0, "Human", None).shown.body["token"]
        )
        caller = service.queries.caller(table_id, token)
        while len(samples) < moves:
            table = service.repository.load(table_id).table
            if table.result is not None:
                break
            if 0 not in service.repository.tables.to_act(table):
                wait_for(service, table_id, table.version)
                continue
            move = service.repository.tables.legal_moves(table, 0)[0]
            answer = service.commands.move(table_id, caller, move, table.version, None)
            acknowledged = time.perf_counter()
            version = answer.shown.body["version"]
            assert isinstance(version, int)
            if answer.shown.body["table"]["status"] == "finished":
                break
            wait_for(service, table_id, version)
            samples.append(time.perf_counter() - acknowledged)
    return samples


def bot_moves_per_second(service: Services, games: int) -> tuple[float, int]:
    """All-bot games played at once: bot moves per second until the last one ends."""
    bots = [BotSeat(seat, "random") for seat in range(4)]
    started = time.perf_counter()
    tables = [
        str(service.commands.create("pig10", 4, {}, None, bots).body["id"]) for _ in range(games)
    ]
    for table_id in tables:
        while (table := service.repository.load(table_id).table).result is None:
            wait_for(service, table_id, table.version)
    elapsed = time.perf_counter() - started
    moves = sum(
        1
        for table_id in tables
        for record in service.repository.store.read(table_id, START)
        if record.type == "pig10.CardPlayed"
    )
    return moves / elapsed, moves


def queue_noops(queue: Queue, jobs: int, name: str = "noop") -> None:
    """Queue `jobs` no-op jobs at once, as the service queues a bot's turn (JSON, a result kept
    for seconds), named `name`-0, `name`-1, ..."""
    queue.enqueue_many(
        [
            Queue.prepare_data(NOOP, result_ttl=RESULT_TTL_SECONDS, job_id=f"{name}-{n}")
            for n in range(jobs)
        ]
    )


def noop_jobs_per_second(connection: redis.Redis, jobs: int) -> float:
    """Queue `jobs` no-op jobs at once; jobs per second until the workers have run them all."""
    queue: Queue = bot_queue(connection)
    started = time.perf_counter()
    queue_noops(queue, jobs)
    running = StartedJobRegistry(queue=queue)
    while queue.count or running.count:
        time.sleep(0.001)
    return jobs / (time.perf_counter() - started)


def commands_per_turn(url: str, games: int) -> tuple[float, Counter[str]]:
    """Redis commands the worker sends per bot move (Lua's inner calls not counted), read with
    MONITOR while all-bot games play: (per move, by command name). The bench's own connections
    are named and left out, so only the worker's cost is counted."""
    bench = redis.Redis.from_url(url, client_name=BENCH_CLIENT)
    service = build(bench, Config(bot_delay_seconds=0, reaction_seconds=0))
    db = bench.connection_pool.connection_kwargs.get("db", 0)
    sent: list[tuple[str, str]] = []
    listening = threading.Event()

    def monitor() -> None:
        with redis.Redis.from_url(url).monitor() as feed:  # type: ignore[no-untyped-call]
            listening.set()
            for command in feed.listen():
                if command.get("db") == db and command.get("client_type") != "lua":
                    address = f"{command['client_address']}:{command['client_port']}"
                    sent.append((address, str(command["command"]).split()[0].upper()))

    with workers(url, 1):
        threading.Thread(target=monitor, daemon=True).start()
        listening.wait(5)
        _, played = bot_moves_per_second(service, games)
        clients = cast(list[dict[str, Any]], bench.client_list())
        mine = {client["addr"] for client in clients if client.get("name") == BENCH_CLIENT}
        counted = Counter(name for address, name in list(sent) if address not in mine)
    bench.close()
    return sum(counted.values()) / max(played, 1), counted


WARM_JOBS = 50
"""No-op jobs a worker under callgrind drains, uncounted, before it counts."""


def drain_counted(url: str, jobs: int) -> None:
    """The child of `--callgrind`: a Procfile worker drains `WARM_JOBS` no-op jobs, then counts
    the instructions of draining `jobs` more."""
    connection = redis.Redis.from_url(url)
    connection.flushdb()
    queue = bot_queue(connection)
    worker = ProcfileWorker([queue], connection=connection, serializer="json")
    queue_noops(queue, WARM_JOBS, "warm")
    worker.work(burst=True, logging_level="WARNING")
    queue_noops(queue, jobs)
    start_counting()
    worker.work(burst=True, logging_level="WARNING")


def instructions_per_job(url: str, jobs: int) -> float:
    """Instructions one no-op job costs a Procfile worker, start-up and warm-up excluded."""
    child = [sys.executable, str(Path(__file__).resolve()), "--redis-url", url, "--drain"]
    env = worker_env(url)
    idle, _ = instructions([*child, "0"], env)
    busy, _ = instructions([*child, str(jobs)], env)
    return (busy - idle) / jobs


def main() -> None:
    arguments = parser(__doc__.splitlines()[0] if __doc__ else "")
    arguments.add_argument("--moves", type=int, default=300, help="human moves timed (300)")
    arguments.add_argument("--games", type=int, default=16, help="all-bot games at once (16)")
    arguments.add_argument("--noops", type=int, default=4000, help="no-op jobs queued (4000)")
    arguments.add_argument(
        "--callgrind", action="store_true", help="count instructions per no-op job (valgrind)"
    )
    arguments.add_argument("--drain", type=int, help=argparse.SUPPRESS)  # --callgrind's child
    args = arguments.parse_args()
    moves, games = (10, 2) if args.smoke else (args.moves, args.games)
    noops = 200 if args.smoke else args.noops
    if args.drain is not None:
        drain_counted(args.redis_url, args.drain)
        return
    if args.callgrind:
        with scratch_redis(args.redis_url):
            jobs = 50 if args.smoke else min(noops, 1000)
            cost = instructions_per_job(args.redis_url, jobs)
        print(
            f"a Procfile worker (bootstrap.Worker), {jobs} no-op jobs under callgrind, redis-py "
            f"{redis.__version__}, rq {rq.__version__}: {cost / 1000:,.0f}k instructions per job"
        )
        return

    with scratch_redis(args.redis_url) as connection:
        service = build(connection, Config(bot_delay_seconds=0, reaction_seconds=0))
        paced = build(connection, Config())
        rows = []
        with tempfile.TemporaryDirectory() as metrics:
            with workers(args.redis_url, 1, metrics=Path(metrics)):
                samples = [s * 1000 for s in latency(service, moves)]
            turns_seen = observed(
                [({}, collected(Path(metrics)))], "spieltisch_bot_turn_latency_seconds"
            )
        middle, tail = median(samples), p99(samples)
        print(f"bot latency over {len(samples)} human moves, 1 worker process:")
        print_table(
            ["figure", "ms", "target ms", "verdict"],
            [
                ["median", f"{middle:.1f}", f"{LATENCY_MEDIAN_MS:.0f}", ""],
                ["p99", f"{tail:.1f}", f"{LATENCY_P99_MS:.0f}", ""],
                [
                    "both",
                    "",
                    "",
                    verdict(middle <= LATENCY_MEDIAN_MS and tail <= LATENCY_P99_MS),
                ],
            ],
        )
        print(
            f"the worker's own metrics: {turns_seen.count:.0f} bot turns, from the event that gave "
            f"the bot the move to its move appended: median {turns_seen.median_ms:.1f} ms, p99 "
            f"{turns_seen.p99_ms:.1f} ms (interpolated in histogram buckets)"
        )
        print()
        for count in (1, 2):
            with workers(args.redis_url, count):
                rate, played = bot_moves_per_second(service, games)
                reference = noop_jobs_per_second(connection, noops)
            share = ratio(rate, reference)
            rows.append(
                [
                    f"{count} x BotWorker",
                    f"{rate:,.0f} ({played} moves)",
                    f"{reference:,.0f}",
                    f"{share:.2f}",
                    verdict(share >= THROUGHPUT_SHARE),
                ]
            )
        with workers(args.redis_url, 1):
            rate, played = bot_moves_per_second(paced, games)
            reference = noop_jobs_per_second(connection, noops)
        share = ratio(rate, reference)
        rows.append(
            [
                "1 x BotWorker, default bot delay",
                f"{rate:,.0f} ({played} moves)",
                f"{reference:,.0f}",
                f"{share:.2f}",
                verdict(share >= THROUGHPUT_SHARE),
            ]
        )
        with workers(args.redis_url, 1, FORKING_WORKER):
            forking = noop_jobs_per_second(connection, max(10, noops // 40))
        rows.append(["1 x rq.Worker (forks)", "-", f"{forking:,.0f}", "-", "-"])
        print(f"bot throughput, {games} all-bot Pig 10 games (4 seats) at once:")
        print_table(
            ["workers", "bot moves/s", "no-op jobs/s", "ratio", f"target {THROUGHPUT_SHARE}"],
            rows,
        )
        per_turn, counted = commands_per_turn(args.redis_url, max(1, games // 4))
        top = ", ".join(f"{name} {count}" for name, count in counted.most_common(8))
        print(f"\nRedis commands per bot move (1 worker): {per_turn:.1f} ({top}, ...)")


if __name__ == "__main__":
    main()
