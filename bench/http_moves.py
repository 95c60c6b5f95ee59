"""Pig 10 moves per second over real HTTP, against a minimal reference in the same server.

One gunicorn, run from the Procfile's web line, serves both the API and the reference endpoint of
`bench/reference_app.py`. A fixed number of client threads each play their own two-seat Pig 10
games one after the other, always choosing a legal move from the hand the last answer showed; only
successful move POSTs are counted (creating tables and taking seats is not). The same client
shape drives the reference endpoint, one stream per thread, for the same time; the two sides take
turns in a few rounds, each warmed up first. Besides throughput and latency it prints the CPU each
request cost the gunicorn workers, Redis and the client, read from /proc and `INFO cpu`: on a small
machine the client and other load share the cores, and the CPU per request is the steadier figure.

    .venv/bin/python bench/http_moves.py [--clients 8] [--seconds 10] [--rounds 2] [--smoke]
"""

from __future__ import annotations

import http.client
import json
import math
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol, cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis

from bench.common import (
    free_port,
    median,
    p99,
    parser,
    print_table,
    procfile_command,
    ratio,
    round_options,
    scratch_redis,
    start_procfile,
    stop,
    verdict,
    wait_until_up,
)
from bench.metrics import Samples, observed, scrape
from bench.reference_app import REFERENCE_READ, reference_entry, reference_key

ROOT = Path(__file__).resolve().parents[1]
TARGET = 0.9
"""Our moves per second should be at least this share of the reference's requests per second."""
SHIPPED_APP = "'bootstrap:web_app()'"
REFERENCE_APP = "'bench.reference_app:web_app()'"
REFERENCE_BODY = {"move": {"card": 7, "mode": "add"}, "expected_version": 12}
"""A body shaped like a move's; the reference reads it and ignores it."""


@dataclass
class Tally:
    """What one client thread measured."""

    latencies: list[float] = field(default_factory=list)
    """Seconds, of each successful request completed inside the measured window."""
    errors: Counter[str] = field(default_factory=Counter)
    games: int = 0


@dataclass
class Window:
    """The run's clock: warm-up from `start`, measured from `measure` to `end`.

    Set once by the barrier every thread passes after its setup, before any is released.
    """

    warmup: float
    seconds: float
    start: float = 0.0
    measure: float = float("inf")
    end: float = float("inf")

    def open(self) -> None:
        self.start = time.perf_counter()
        self.measure = self.start + self.warmup
        self.end = self.measure + self.seconds

    def counts(self, began: float, ended: float) -> bool:
        return began >= self.measure and ended <= self.end


class Client:
    """One keep-alive-if-offered HTTP connection; gunicorn's sync workers close it each time."""

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.retry_after = 0.0
        """The last answer's `Retry-After`, in seconds (0 without one)."""

    def call(
        self, method: str, path: str, body: Any = None, token: str | None = None
    ) -> tuple[int, Any]:
        headers = {"Accept": "application/json"}
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        try:
            self.connection.request(method, path, payload, headers)
            response = self.connection.getresponse()
            data = response.read()
            self.retry_after = float(response.getheader("Retry-After") or 0)
        except (http.client.HTTPException, OSError):
            self.connection.close()  # the next request opens a fresh connection
            raise
        try:
            return response.status, json.loads(data) if data else None
        except ValueError:  # not JSON: an error page from gunicorn itself, say
            return response.status, data[:200].decode(errors="replace")

    def close(self) -> None:
        self.connection.close()


class Calls(Protocol):
    """What plays a `Game`: a `Client` over HTTP, or `bench/in_process.py`'s app in-process."""

    def call(
        self, method: str, path: str, body: Any = None, token: str | None = None
    ) -> tuple[int, Any]: ...


class Game:
    """A two-seat Pig 10 table this thread owns, and what its seats know."""

    def __init__(self, client: Calls) -> None:
        status, table = client.call("POST", "/v1/tables", {"game": "pig10", "seats": 2})
        expect(status, 201, "create table", table)
        self.path = f"/v1/tables/{table['id']}"
        self.tokens: dict[int, str] = {}
        for name in ("ann", "bob"):
            status, taken = client.call("POST", f"{self.path}/seats", {"name": name})
            expect(status, 201, "take seat", taken)
            self.tokens[taken["seat"]] = taken["token"]
        self.hands: dict[int, list[int]] = {}
        for seat, token in self.tokens.items():
            status, view = client.call("GET", self.path, token=token)
            expect(status, 200, "read table", view)
            self.hands[seat] = view["state"]["hand"]
        self.version: int = view["version"]
        self.to_act: list[int] = view["to_act"]
        self.finished = False

    def move(self, client: Calls) -> tuple[int, Any]:
        """Play the first card of the hand of the seat to act; always legal in Pig 10."""
        seat = self.to_act[0]
        card = self.hands[seat][0]
        move = {"card": card, "mode": "set" if card == 0 else "add"}
        status, answer = client.call(
            "POST",
            f"{self.path}/moves",
            {"move": move, "expected_version": self.version},
            self.tokens[seat],
        )
        if status == 200:
            table = answer["table"]
            self.hands[seat] = table["state"]["hand"]
            self.version = answer["version"]
            self.to_act = table["to_act"]
            self.finished = table["status"] == "finished"
        return status, answer


class SetupFailed(Exception):
    pass


def expect(status: int, wanted: int, what: str, body: Any) -> None:
    if status != wanted:
        raise SetupFailed(f"{what}: HTTP {status}: {json.dumps(body)[:200]}")


def describe(status: int, body: Any) -> str:
    kind = body.get("type") if isinstance(body, dict) else None
    return f"HTTP {status} {kind or ''}".rstrip()


def play_moves(port: int, window: Window, tally: Tally, ready: threading.Barrier) -> None:
    """Drive this thread's games one after the other until the window closes."""
    client = Client(port)
    game: Game | None = None
    try:
        try:
            game = Game(client)
            tally.games += 1
        finally:
            ready.wait()
        while time.perf_counter() < window.end:
            if game is None or game.finished:
                game = Game(client)
                tally.games += 1
            began = time.perf_counter()
            try:
                status, answer = game.move(client)
            except (http.client.HTTPException, OSError) as error:
                tally.errors[type(error).__name__] += 1
                game = None
                continue
            ended = time.perf_counter()
            if status != 200:
                tally.errors[describe(status, answer)] += 1
                game = None  # start over on a fresh table rather than guess the state
            elif window.counts(began, ended):
                tally.latencies.append(ended - began)
    except Exception as error:  # a failed setup: report it with the figures
        tally.errors[f"{type(error).__name__}: {error}"] += 1
    finally:
        client.close()


def play_reference(
    port: int, stream: str, window: Window, tally: Tally, ready: threading.Barrier
) -> None:
    """The same loop shape against the reference endpoint, on this thread's own stream."""
    client = Client(port)
    ready.wait()
    try:
        while time.perf_counter() < window.end:
            began = time.perf_counter()
            try:
                status, answer = client.call("POST", f"/bench/reference/{stream}", REFERENCE_BODY)
            except (http.client.HTTPException, OSError) as error:
                tally.errors[type(error).__name__] += 1
                continue
            ended = time.perf_counter()
            if status != 200:
                tally.errors[describe(status, answer)] += 1
                continue
            if window.counts(began, ended):
                tally.latencies.append(ended - began)
    finally:
        client.close()


Worker = Callable[[int, Window, Tally, threading.Barrier], None]


@dataclass(frozen=True)
class Cpu:
    """CPU seconds used by the client (this process), the gunicorn workers and Redis."""

    client: float
    server: float
    redis: float

    def __sub__(self, other: Cpu) -> Cpu:
        return Cpu(self.client - other.client, self.server - other.server, self.redis - other.redis)

    def __add__(self, other: Cpu) -> Cpu:
        return Cpu(self.client + other.client, self.server + other.server, self.redis + other.redis)


class Meter(Protocol):
    """Where `run` reads the CPU used so far."""

    def read(self) -> Cpu: ...


class CpuMeter:
    """Reads CPU time from /proc (Linux) and Redis `INFO cpu`; NaN where it cannot."""

    def __init__(self, master: int, client: redis.Redis) -> None:
        self.client = client
        self.workers = [pid for pid in pids() if parent(pid) == master]

    def read(self) -> Cpu:
        try:
            server = sum(cpu_seconds(pid) for pid in self.workers) if self.workers else math.nan
        except OSError:
            server = math.nan  # a worker was restarted
        info = cast(dict[str, Any], self.client.info("cpu"))
        used = float(info.get("used_cpu_user", math.nan)) + float(
            info.get("used_cpu_sys", math.nan)
        )
        return Cpu(time.process_time(), server, used)


def pids() -> list[int]:
    return [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]


def proc_stat(pid: int) -> list[str]:
    """The fields of /proc/<pid>/stat after the command name."""
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2 :].split()


def parent(pid: int) -> int | None:
    try:
        return int(proc_stat(pid)[1])
    except (OSError, ValueError, IndexError):
        return None


def cpu_seconds(pid: int) -> float:
    fields = proc_stat(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(
    clients: int,
    window: Window,
    work: Worker,
    meter: Meter,
    at_edges: Callable[[], None] = lambda: None,
) -> tuple[list[Tally], Cpu]:
    """Run `clients` threads of `work`; the window opens once all of them are set up.

    A further thread reads the CPU meters, and calls `at_edges`, when the measured part of the
    window opens and closes.
    """
    tallies = [Tally() for _ in range(clients)]
    ready = threading.Barrier(clients + 1, action=window.open)
    used: list[Cpu] = []

    def sample() -> None:
        ready.wait()
        for moment in (window.measure, window.end):
            time.sleep(max(0.0, moment - time.perf_counter()))
            used.append(meter.read())
            at_edges()

    threads = [
        threading.Thread(target=work, args=(i, window, tallies[i], ready), daemon=True)
        for i in range(clients)
    ]
    threads.append(threading.Thread(target=sample, daemon=True))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return tallies, used[1] - used[0]


@contextmanager
def gunicorn(redis_url: str) -> Iterator[tuple[int, int]]:
    """The Procfile's web process serving `bench.reference_app` (the shipped app plus the
    reference endpoint): (port, master pid); stopped on exit, errors too."""
    port = free_port()
    # With a Redis URL every process must be given one signing key; the benchmark exports nothing.
    env = {**os.environ, "REDIS_URL": redis_url, "SPIELTISCH_SIGNING_KEY": secrets.token_hex(32)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["PORT"] = str(port)
    with tempfile.TemporaryFile() as log, tempfile.TemporaryDirectory() as metrics:
        # As the Procfile runs it: its workers' metrics added up at /metrics.
        env["PROMETHEUS_MULTIPROC_DIR"] = metrics
        process = start_procfile("web", env, log, {SHIPPED_APP: REFERENCE_APP})
        try:
            wait_healthy(port, process, log)
            yield port, process.pid
        finally:
            stop(process)


def wait_healthy(
    port: int, process: subprocess.Popen[bytes], log: IO[bytes], timeout: float = 30.0
) -> None:
    """Wait until the gunicorn on `port` answers `/health`."""
    url = f"http://127.0.0.1:{port}/health"
    wait_until_up(
        lambda: urllib.request.urlopen(url, timeout=1).close(), process, log, "gunicorn", timeout
    )


def prefill(client: redis.Redis, streams: list[str]) -> None:
    """Give each reference stream its 50 entries, so every request reads a full 50."""
    for stream in streams:
        key = reference_key(stream)
        for number in range(1, REFERENCE_READ + 1):
            client.xadd(key, {"e": reference_entry(number)}, id=f"{number}-0")


@dataclass(frozen=True)
class Figures:
    rate: float
    median_ms: float
    p99_ms: float
    count: int
    errors: Counter[str]
    games: int
    cpu: Cpu
    """CPU seconds used in the measured window."""

    def per_request_ms(self, seconds: float) -> float:
        return seconds / self.count * 1000 if self.count else math.nan


def figures(rounds: list[tuple[list[Tally], Cpu]], seconds: float) -> Figures:
    """The figures of a side over all its rounds, `seconds` measured in all."""
    tallies = [tally for round_tallies, _ in rounds for tally in round_tallies]
    cpu = sum((used for _, used in rounds), Cpu(0.0, 0.0, 0.0))
    latencies = [latency for tally in tallies for latency in tally.latencies]
    errors: Counter[str] = Counter()
    for tally in tallies:
        errors.update(tally.errors)
    return Figures(
        rate=len(latencies) / seconds,
        median_ms=median(latencies) * 1000,
        p99_ms=p99(latencies) * 1000,
        count=len(latencies),
        errors=errors,
        games=sum(tally.games for tally in tallies),
        cpu=cpu,
    )


def compared(label: str, ours: float, reference: float, digits: int) -> list[str]:
    """A row without a target: both figures and their ratio."""
    return [label, f"{ours:.{digits}f}", f"{reference:.{digits}f}", f"{ratio(ours, reference):.2f}"]


def main() -> None:
    options = parser(__doc__.splitlines()[0] if __doc__ else "")
    options.add_argument("--clients", type=int, default=8, help="client threads (default 8)")
    round_options(options, seconds=10.0, rounds=2)
    args = options.parse_args()
    clients: int = 2 if args.smoke else args.clients
    seconds: float = 1.0 if args.smoke else args.seconds
    rounds: int = 1 if args.smoke else args.rounds
    warmup: float = 0.3 if args.smoke else args.warmup
    streams = [f"client-{i}" for i in range(clients)]

    def ours_worker(i: int, window: Window, tally: Tally, ready: threading.Barrier) -> None:
        play_moves(port, window, tally, ready)

    def reference_worker(i: int, window: Window, tally: Tally, ready: threading.Barrier) -> None:
        play_reference(port, streams[i], window, tally, ready)

    with (
        scratch_redis(args.redis_url) as client,
        gunicorn(args.redis_url) as (port, master),
    ):
        meter = CpuMeter(master, client)
        prefill(client, streams)
        ours_rounds, reference_rounds = [], []
        scrapes: list[Samples] = []
        for _ in range(rounds):  # alternating, so a slower spell of the machine hits both
            ours_rounds.append(
                run(
                    clients,
                    Window(warmup, seconds / rounds),
                    ours_worker,
                    meter,
                    at_edges=lambda: scrapes.append(scrape(port)),
                )
            )
            reference_rounds.append(
                run(clients, Window(warmup, seconds / rounds), reference_worker, meter)
            )
    ours = figures(ours_rounds, seconds)
    reference = figures(reference_rounds, seconds)
    windows = list(zip(scrapes[::2], scrapes[1::2], strict=True))
    counted = observed(
        windows,
        "spieltisch_http_request_duration_seconds",
        method="POST",
        route="/v1/tables/<table_id>/moves",
        status="200",
    )

    share = ratio(ours.rate, reference.rate)
    print(
        f"Pig 10 moves over HTTP: the Procfile's web process ({procfile_command('web')}), "
        f"{clients} client threads, "
        f"{rounds} alternating round(s) per side of {warmup:g} s warm-up + "
        f"{seconds / rounds:g} s measured ({seconds:g} s per side), Redis {args.redis_url}"
    )
    print(
        "reference: POST /bench/reference/<stream> = XREVRANGE COUNT 50 + one conditional XADD "
        "(~300-byte JSON field)"
    )
    print()
    rows = [
        [
            "requests/s",
            f"{ours.rate:.1f}",
            f"{reference.rate:.1f}",
            f"{share:.2f}",
            f">= {TARGET:.2f}",
            verdict(share >= TARGET),
        ],
        compared("median latency ms", ours.median_ms, reference.median_ms, 2),
        compared("p99 latency ms", ours.p99_ms, reference.p99_ms, 2),
    ]
    for name, part in (
        ("gunicorn workers", "server"),
        ("redis server", "redis"),
        ("client process", "client"),
    ):
        rows.append(
            compared(
                f"{name} CPU ms/request",
                ours.per_request_ms(getattr(ours.cpu, part)),
                reference.per_request_ms(getattr(reference.cpu, part)),
                3,
            )
        )
    rows.append(["successful requests", str(ours.count), str(reference.count), "", "", ""])
    errors = [sum(ours.errors.values()), sum(reference.errors.values())]
    rows.append(["errors", *map(str, errors), "", "", ""])
    print_table(["figure", "ours (moves)", "reference", "ratio", "target", ""], rows)
    print(f"\ngames started (setup not counted): {ours.games}")
    print(
        f"the server's own /metrics over the measured windows: {counted.count / seconds:.1f} "
        f"moves/s ({counted.count:.0f} answered 200), median {counted.median_ms:.2f} ms, "
        f"p99 {counted.p99_ms:.2f} ms (server side, interpolated in histogram buckets, as "
        "Prometheus's histogram_quantile does)"
    )
    cpu_share = ratio(
        reference.per_request_ms(reference.cpu.server), ours.per_request_ms(ours.cpu.server)
    )
    print(
        f"by gunicorn CPU per request (robust to other load on the machine): ours = "
        f"{cpu_share:.2f} x reference ({verdict(cpu_share >= TARGET)} against >= {TARGET:.2f})"
    )
    for side, result in (("ours", ours), ("reference", reference)):
        cpu = result.cpu
        print(
            f"CPU cores busy while measuring ({side}): gunicorn {cpu.server / seconds:.2f}, "
            f"redis {cpu.redis / seconds:.2f}, client {cpu.client / seconds:.2f} "
            f"(of {os.cpu_count()})"
        )
    for side, result in (("ours", ours), ("reference", reference)):
        for error, count in result.errors.most_common():
            print(f"error ({side}): {count} x {error}")


if __name__ == "__main__":
    main()
