"""The real client loop under load: people over HTTP, bots in RQ workers, all five games.

Everything runs as shipped: a fresh redis-server on a free loopback port (AOF, fsync every
second), the Procfile's `web` process (gunicorn with its worker class, workers and threads, read
from the Procfile) and its `worker` process (RQ, with its scheduler), as many of them as web
processes, as the README's Deployment advises to begin with. Each client thread plays
one table after another, the games taken in turn: it opens the table with bots (`random`) in
every seat but its own, takes that seat, and plays as a client does: it follows the table's live
stream, and when the table waits for its seat it POSTs one of the legal moves that came with the
stream's latest frame (or with its own last move's answer). Tables are opened without a
bot delay, so the bots play as fast as the workers can.

Client concurrency is ramped; each step prints moves/s (people, bots), the latency percentiles of
the POSTs and GETs, and the CPU per move of the server processes (gunicorn and RQ, from /proc)
and of Redis (`INFO cpu`). Last, the highest rate held with POST p99 <= 50 ms, beside the target
(600 moves/s; moonshot 1,000). `--profile DIR` runs the web workers under cProfile
(`bench/profiled.py`: one file per process, rewritten every few hundred requests); profiled
requests take turns, so the figures of such a run are the profile's, not throughput.

`--cluster` keeps the games on a local Redis Cluster instead (`bench/cluster.py`: three masters
with a replica each, no AOF) and the bot queues on the fresh redis-server (`QUEUE_URL`);
`--kill-master SECONDS` then kills one master that long into the run (SIGKILL) and says when its
replica took over: the moves refused meanwhile are counted as errors, and play goes on.

    .venv/bin/python bench/load.py [--clients 4,8,16,24] [--seconds 10] [--workers N] [--smoke]
        [--cluster [--kill-master SECONDS]]     (WEB_CONCURRENCY: web processes, 2)
"""

from __future__ import annotations

import http.client
import json
import math
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis

from bench.cluster import Cluster
from bench.common import (
    await_redis,
    free_port,
    parser,
    print_table,
    procfile_command,
    start_procfile,
    stop,
    verdict,
)
from bench.http_moves import Client, cpu_seconds, parent, pids, wait_healthy

GAMES = ["pig10", "krumme10", "krasskariert", "wobble", "rollnbump"]
PLAYERS = {"krasskariert": 3, "wobble": 3}
"""Seats per table; the others play with two."""
P99_LIMIT_MS = 50.0
TARGET, MOONSHOT = 600.0, 1000.0
FAST_CLOCK = {"bot_delay_seconds": 0, "reaction_seconds": 0}
STREAM_TIMEOUT = 10.0
PER_ADDRESS = ("TABLES", "SEATS", "STREAMS", "READS")


@dataclass
class Tally:
    """What the client threads measured inside the window."""

    post_ms: list[float] = field(default_factory=list)
    get_ms: list[float] = field(default_factory=list)
    bot_moves: int = 0
    stale: int = 0
    """Moves refused as stale (409), chosen again."""
    limited: int = 0
    """Requests refused by a rate limit (429), sent again after the `Retry-After` it gave."""
    errors: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)


class Stream:
    """A table's live stream (Server-Sent Events), read frame by frame."""

    def __init__(self, port: int, path: str, token: str) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=STREAM_TIMEOUT)
        headers = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}
        self.connection.request("GET", f"{path}/stream", headers=headers)
        self.response = self.connection.getresponse()
        if self.response.status != 200:
            raise http.client.HTTPException(f"stream: HTTP {self.response.status}")

    def frames(self) -> Iterator[dict[str, Any]]:
        data: list[str] = []
        while line := self.response.readline():
            text = line.decode().rstrip("\r\n")
            if text.startswith("data:"):
                data.append(text[5:].strip())
            elif not text and data:
                yield json.loads("\n".join(data))
                data = []

    def close(self) -> None:
        self.connection.close()


class Player:
    """One client thread: plays tables one after the other until `end`."""

    def __init__(self, port: int, number: int, tally: Tally, measure: float, end: float) -> None:
        self.port, self.number, self.tally = port, number, tally
        self.measure, self.end = measure, end
        self.client = Client(port)

    def timed(self, kind: str, method: str, path: str, body: Any = None, token: str = "") -> Any:
        while True:
            began = time.perf_counter()
            try:
                status, answer = self.client.call(method, path, body, token or None)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # The server closed the kept-alive connection while this client watched the
                # stream: the request never arrived, so it is sent again on a new connection.
                began = time.perf_counter()
                status, answer = self.client.call(method, path, body, token or None)
            if status != 429:
                break
            # This client moves faster than any person, and now and then meets the per-seat
            # move limit: it waits as told and sends the request again, as a client should.
            with self.tally.lock:
                self.tally.limited += 1
            time.sleep(self.client.retry_after or 1.0)
        ended = time.perf_counter()
        if status >= 400:
            kind_of = answer.get("type") if isinstance(answer, dict) else answer
            refusal = Stale if str(kind_of).endswith("/stale-version") else Refused
            raise refusal(f"{method} {path.rsplit('/', maxsplit=1)[-1]}: HTTP {status} {kind_of}")
        if began >= self.measure and ended <= self.end:
            with self.tally.lock:
                (self.tally.post_ms if kind == "post" else self.tally.get_ms).append(
                    (ended - began) * 1000
                )
        return answer

    def run(self) -> None:
        games = 0
        while time.perf_counter() < self.end:
            game = GAMES[(self.number + games) % len(GAMES)]
            games += 1
            try:
                self.play(game)
            except (Refused, http.client.HTTPException, OSError) as error:
                with self.tally.lock:
                    self.tally.errors[f"{game}: {error}"] += 1
                time.sleep(0.05)
        self.client.close()

    def play(self, game: str) -> None:
        seats = PLAYERS.get(game, 2)
        bots = [{"seat": seat, "bot": "random"} for seat in range(1, seats)]
        body = {"game": game, "seats": seats, "bots": bots, "clock": FAST_CLOCK}
        status, table = self.client.call("POST", "/v1/tables", body)
        if status != 201:  # say, a 503 while a cluster's replica takes over
            raise Refused(f"open table: HTTP {status}")
        path = f"/v1/tables/{table['id']}"
        status, taken = self.client.call("POST", f"{path}/seats", {"seat": 0, "name": "load"})
        if status != 201:
            raise Refused(f"take seat: HTTP {status}")
        token = taken["token"]
        stream = Stream(self.port, path, token)
        try:
            self.follow(stream, path, token)
        finally:
            stream.close()

    def follow(self, stream: Stream, path: str, token: str) -> None:
        legal = self.moved(path, token, self.timed("get", "GET", f"{path}/moves", token=token))
        mine: set[str] = set()
        for frame in stream.frames():
            if frame["type"] == "table.GameFinished" or time.perf_counter() >= self.end:
                return
            meta = frame.get("meta", {})
            made_by = meta.get("seat")
            if made_by not in (None, 0) and meta.get("command_id") not in mine:
                mine.add(meta["command_id"])
                if time.perf_counter() >= self.measure:
                    with self.tally.lock:
                        self.tally.bot_moves += 1
            if "moves" not in frame or frame["seq"] <= legal["version"]:
                continue  # not the latest event, or one this seat's own answer showed
            if frame["deadlines"] and not frame["moves"]["to_act"]:
                continue  # the table waits for the bots
            legal = self.moved(path, token, frame["moves"])

    def moved(self, path: str, token: str, legal: dict[str, Any]) -> dict[str, Any]:
        """Move while the seat has moves, each from the last answer; the moves at the end."""
        while legal["moves"] and time.perf_counter() < self.end:
            move = legal["moves"][self.number % len(legal["moves"])]
            body = {"move": move, "expected_version": legal["version"]}
            try:
                legal = self.timed("post", "POST", f"{path}/moves", body, token)["moves"]
            except Stale:  # a bot got there first (a Wobble toss-in, say): choose again
                with self.tally.lock:
                    self.tally.stale += 1
                legal = self.timed("get", "GET", f"{path}/moves", token=token)
        return legal


class Refused(Exception):
    """An answer the load client did not expect."""


class Stale(Refused):
    """A move refused because the table moved on first: a race a client loses now and then."""


@dataclass(frozen=True)
class Step:
    clients: int
    seconds: float
    tally: Tally
    server_cpu: float
    redis_cpu: float
    redis_commands: int

    @property
    def people(self) -> float:
        return len(self.tally.post_ms) / self.seconds

    @property
    def bots(self) -> float:
        return self.tally.bot_moves / self.seconds

    @property
    def moves(self) -> float:
        return self.people + self.bots

    def per_move_ms(self, cpu: float) -> float:
        moves = self.moves * self.seconds
        return cpu / moves * 1000 if moves else math.nan


def percentile(samples: list[float], share: float) -> float:
    if not samples:
        return math.nan
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


class Server:
    """The processes serving: a fresh Redis, the Procfile's web and worker processes."""

    def __init__(
        self, stack: ExitStack, workers: int, profile: Path | None, cluster: bool = False
    ) -> None:
        self.directory = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        self.redis_port, port = free_port(), free_port()
        self.redis_process = stack.enter_context(self.redis_server())
        url = f"redis://127.0.0.1:{self.redis_port}/0"
        self.redis = redis.Redis.from_url(url)
        self.cluster = stack.enter_context(Cluster(self.directory / "cluster")) if cluster else None
        self.failover: float | None = None
        """Seconds a replica took to take over from the master `kill_master` killed."""
        urls = (
            {"REDIS_URL": url}
            if self.cluster is None
            else {
                "REDIS_URL": self.cluster.url,
                "QUEUE_URL": url,
            }
        )
        env = {
            **os.environ,
            **urls,
            "PORT": str(port),
            "SPIELTISCH_SIGNING_KEY": secrets.token_hex(32),
            # Every client thread comes from one address: the per-address limits (kept on,
            # with their cost) are raised to what that many clients would each be allowed.
            **{f"SPIELTISCH_LIMIT_{name}": "10000/second" for name in PER_ADDRESS},
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        }
        if profile is not None:
            env["SPIELTISCH_BENCH_PROFILE"] = str(profile)
        log: IO[bytes] = stack.enter_context(open(self.directory / "server.log", "w+b"))  # noqa: SIM115
        replace = {"'bootstrap:web_app()'": "'bench.profiled:web_app()'"} if profile else None
        self.web = stack.enter_context(stopping(start_procfile("web", env, log, replace)))
        wait_healthy(port, self.web, log)
        self.port = port
        self.workers = [
            stack.enter_context(stopping(start_procfile("worker", env, log)))
            for _ in range(workers)
        ]

    @contextmanager
    def redis_server(self) -> Iterator[subprocess.Popen[bytes]]:
        server = shutil.which("redis-server")
        if server is None:
            raise SystemExit("bench/load.py starts a redis-server of its own: install one")
        process = subprocess.Popen(
            [
                *(server, "--port", str(self.redis_port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "yes", "--appendfsync", "everysec"),
                *("--dir", str(self.directory)),
            ],
            stdout=subprocess.DEVNULL,
        )
        with stopping(process):
            client = redis.Redis(port=self.redis_port)
            await_redis(client, tries=100)
            client.close()
            yield process

    def cpu(self) -> tuple[float, float, int]:
        """CPU seconds so far: the server processes (gunicorn's and RQ's, children too), Redis;
        and the commands Redis has run (those of its scripts included)."""
        roots = {self.web.pid, *(worker.pid for worker in self.workers)}
        serving = descendants(roots)
        server = 0.0
        for pid in serving:
            with suppress(OSError):  # gone meanwhile
                server += cpu_seconds(pid)
        redis_cpu, commands = 0.0, 0
        nodes = [] if self.cluster is None else [node.client() for node in self.cluster.alive()]
        for client in [self.redis, *nodes]:
            with suppress(redis.RedisError):  # a node killed meanwhile
                info = cast(dict[str, Any], client.info("everything"))
                redis_cpu += float(info["used_cpu_user"]) + float(info["used_cpu_sys"])
                # A replica processes its master's writes again: counted once, on the master.
                if info["role"] == "master":
                    commands += int(info["total_commands_processed"])
        for client in nodes:
            client.close()
        return server, redis_cpu, commands

    def kill_master(self) -> None:
        """SIGKILL a master of the cluster and say when its replica has taken over (`failover`,
        in seconds, stays None if none did)."""
        assert self.cluster is not None
        key = "game:{load}:events"
        victim = self.cluster.master_of(key)
        began = time.perf_counter()
        victim.kill()
        successor = self.cluster.wait_for_failover(victim, key)
        self.failover = time.perf_counter() - began
        print(
            f"killed the master on port {victim.port}; the replica on port {successor.port} "
            f"took over {self.failover:.1f} s later"
        )


ROOT = Path(__file__).resolve().parents[1]


def descendants(roots: set[int]) -> set[int]:
    """`roots` and every process under them."""
    found = set(roots)
    parents = {pid: parent(pid) for pid in pids()}
    grown = True
    while grown:
        more = {pid for pid, up in parents.items() if up in found and pid not in found}
        found |= more
        grown = bool(more)
    return found


@contextmanager
def stopping(process: subprocess.Popen[bytes]) -> Iterator[subprocess.Popen[bytes]]:
    """`process`, terminated (killed if it lingers) on the way out."""
    try:
        yield process
    finally:
        stop(process, timeout=20)


def step(server: Server, clients: int, warmup: float, seconds: float) -> Step:
    """Run `clients` players for `warmup` + `seconds`, measuring the last `seconds`."""
    tally = Tally()
    start = time.perf_counter()
    measure, end = start + warmup, start + warmup + seconds
    players = [Player(server.port, n, tally, measure, end) for n in range(clients)]
    threads = [threading.Thread(target=player.run, daemon=True) for player in players]
    for thread in threads:
        thread.start()
    time.sleep(max(0.0, measure - time.perf_counter()))
    cpu_before = server.cpu()
    time.sleep(max(0.0, end - time.perf_counter()))
    cpu_after = server.cpu()
    for thread in threads:
        thread.join(timeout=STREAM_TIMEOUT + 5)
    return Step(
        clients,
        seconds,
        tally,
        cpu_after[0] - cpu_before[0],
        cpu_after[1] - cpu_before[1],
        cpu_after[2] - cpu_before[2],
    )


def web_processes() -> int:
    """How many web processes the Procfile's `web` line starts here (its `WEB_CONCURRENCY`)."""
    return int(os.environ.get("WEB_CONCURRENCY", "2"))


def main() -> None:
    options = parser(__doc__.splitlines()[0] if __doc__ else "")
    options.add_argument("--clients", default="2,4,8,16,24", help="client threads per step")
    options.add_argument("--seconds", type=float, default=10.0, help="measured seconds per step")
    options.add_argument("--warmup", type=float, default=2.0, help="unmeasured seconds per step")
    options.add_argument(
        "--workers",
        type=int,
        default=web_processes(),
        help="RQ worker processes (default: as many as web processes, as the README's "
        "Deployment advises to begin with)",
    )
    options.add_argument("--profile", type=Path, help="cProfile the web workers into this folder")
    options.add_argument("--cluster", action="store_true", help="the games on a Redis Cluster")
    options.add_argument(
        "--kill-master", type=float, metavar="SECONDS", help="(--cluster) kill a master then"
    )
    args = options.parse_args()
    if args.kill_master is not None and not args.cluster:
        options.error("--kill-master needs --cluster")
    ramp = [2] if args.smoke else [int(n) for n in args.clients.split(",")]
    seconds, warmup = (3.0, 2.0) if args.smoke else (args.seconds, args.warmup)
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)

    print(f"web:    {procfile_command('web')}")
    print(f"worker: {procfile_command('worker')} (x {args.workers})")
    if args.cluster:
        print("redis:  a Redis Cluster of 3 masters and 3 replicas (no AOF) for the games;")
        print("        a fresh redis-server, appendonly yes, everysec, for the bot queues")
    else:
        print("redis:  a fresh redis-server, appendonly yes, appendfsync everysec")
    print(f"games:  {', '.join(GAMES)}; one person (this client) per table, random bots")
    print()
    steps = []
    with ExitStack() as stack:
        server = Server(stack, args.workers, args.profile, args.cluster)
        killer = threading.Timer(args.kill_master or 0, server.kill_master)
        if args.kill_master is not None:
            killer.start()
        for clients in ramp:
            steps.append(step(server, clients, warmup, seconds))
        if args.kill_master is not None:
            killer.join()
            if server.failover is None:
                raise SystemExit("bench/load.py: no replica took over from the killed master")
    rows = []
    for done in steps:
        tally = done.tally
        rows.append(
            [
                str(done.clients),
                f"{done.people:.0f}",
                f"{done.bots:.0f}",
                f"{done.moves:.0f}",
                *(f"{percentile(tally.post_ms, q):.1f}" for q in (0.5, 0.95, 0.99)),
                *(f"{percentile(tally.get_ms, q):.1f}" for q in (0.5, 0.95, 0.99)),
                f"{done.per_move_ms(done.server_cpu):.2f}",
                f"{done.per_move_ms(done.redis_cpu):.2f}",
                f"{done.per_move_ms(done.redis_commands) / 1000:.1f}",
                str(sum(tally.errors.values())),
            ]
        )
    print_table(
        [
            "clients",
            "people/s",
            "bots/s",
            "moves/s",
            "POST p50",
            "p95",
            "p99 ms",
            "GET p50",
            "p95",
            "p99 ms",
            "server CPU ms/move",
            "redis",
            "redis cmds/move",
            "errors",
        ],
        rows,
    )
    held = [done.moves for done in steps if percentile(done.tally.post_ms, 0.99) <= P99_LIMIT_MS]
    best = max(held, default=0.0)
    print(
        f"\nhighest rate held at POST p99 <= {P99_LIMIT_MS:.0f} ms: {best:.0f} moves/s "
        f"(target >= {TARGET:.0f}: {verdict(best >= TARGET)}; moonshot {MOONSHOT:.0f}) "
        f"on {os.cpu_count()} cores, client included"
    )
    for done in steps:
        if done.tally.stale:
            print(
                f"{done.clients} clients: {done.tally.stale} moves lost a race (409), chosen again"
            )
        if done.tally.limited:
            print(
                f"{done.clients} clients: {done.tally.limited} requests met a rate limit (429) "
                "and were sent again after its Retry-After"
            )
        for error, count in done.tally.errors.most_common(3):
            print(f"error ({done.clients} clients): {count} x {error}")


if __name__ == "__main__":
    main()
