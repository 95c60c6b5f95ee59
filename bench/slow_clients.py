"""Slow-header clients against the shipped server: `/health` and a move must answer within 1 s.

Starts the web server exactly as the Procfile's `web:` line does (or, with `--embedded`, the
`spieltisch` command without Redis), then opens `--tricklers` connections that each send one
header line every `--interval` seconds and never finish their request. Before and while they
trickle it times `/health` and Pig 10 moves, each on a fresh connection: the quiet figures are
the reference measured in the same run, the target is 1 s.

    .venv/bin/python bench/slow_clients.py [--tricklers 100] [--interval 2] [--samples 20]
        [--embedded] [--redis-url URL] [--smoke]
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (
    free_port,
    median,
    parser,
    print_table,
    procfile_command,
    scratch_redis,
    start_procfile,
    stop,
    verdict,
)
from bench.http_moves import Client, Game, expect, wait_healthy

ROOT = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 1.0
GIVE_UP_SECONDS = 10.0
"""A request not answered by then counts as this long (and as a miss)."""


@contextmanager
def server(redis_url: str | None) -> Iterator[int]:
    """The shipped web server on a free port (embedded without `redis_url`); stopped on exit."""
    port = free_port()
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PORT": str(port), "PATH": os.pathsep.join([bin_dir, os.environ["PATH"]])}
    env.pop("REDIS_URL", None)
    with tempfile.TemporaryFile() as log:
        if redis_url is None:
            process = subprocess.Popen(
                [str(Path(bin_dir) / "spieltisch"), "--port", str(port)],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        else:
            env |= {"REDIS_URL": redis_url, "SPIELTISCH_SIGNING_KEY": secrets.token_hex(32)}
            process = start_procfile("web", env, log)
        try:
            wait_healthy(port, process, log)
            yield port
        finally:
            stop(process)


class Tricklers:
    """Connections sending one header line each `interval` seconds, never ending the request;
    one the server closes is opened again at once, as an attacker would."""

    def __init__(self, port: int, count: int, interval: float) -> None:
        self.port = port
        self.sockets = [self._open() for _ in range(count)]
        self.interval = interval
        self.stop = threading.Event()
        self.closed = 0
        """Connections the server closed while they trickled (each opened again)."""
        self.lines = 0
        """Header lines each connection has sent after its request line."""
        self.thread = threading.Thread(target=self._trickle, daemon=True)
        self.thread.start()

    def _open(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port))
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: bench\r\n")
        return sock

    def _trickle(self) -> None:
        while not self.stop.wait(self.interval):
            for n, sock in enumerate(self.sockets):
                try:
                    sock.sendall(f"X-Slow-{self.lines}: {'x' * 20}\r\n".encode())
                except OSError:
                    sock.close()
                    self.closed += 1
                    self.sockets[n] = self._open()
            self.lines += 1

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        for sock in self.sockets:
            sock.close()


def timed(call: Callable[[Client], int], port: int) -> float:
    """Seconds `call` took on a fresh connection; GIVE_UP_SECONDS if it failed or timed out."""
    client = Client(port)
    client.connection.timeout = GIVE_UP_SECONDS
    began = time.perf_counter()
    try:
        status = call(client)
    except OSError:
        return GIVE_UP_SECONDS
    finally:
        client.close()
    took = time.perf_counter() - began
    return took if status == 200 else GIVE_UP_SECONDS


def bot_tables(port: int, count: int) -> None:
    """Start `count` Pig 10 tables of two hard search bots, which think up to 1 s a turn."""
    client = Client(port)
    hard = {"bot": "search", "level": "hard"}
    body = {
        "game": "pig10",
        "seats": 2,
        "bots": [{"seat": 0, **hard}, {"seat": 1, **hard}],
        "clock": {"bot_delay_seconds": 0},
    }
    try:
        for _ in range(count):
            status, answer = client.call("POST", "/v1/tables", body)
            expect(status, 201, "create a bot table", answer)
    finally:
        client.close()


def games(port: int, count: int) -> list[Game]:
    """`count` two-seat Pig 10 tables, seated and waiting for their first move."""
    setup = Client(port)
    try:
        return [Game(setup) for _ in range(count)]
    finally:
        setup.close()


def measure(port: int, waiting: list[Game]) -> tuple[list[float], list[float]]:
    """Timings of `/health` and of a first move at each of `waiting`, taking turns."""
    health: list[float] = []
    moves: list[float] = []
    for game in waiting:
        health.append(timed(lambda client: client.call("GET", "/health")[0], port))
        moves.append(timed(lambda client: game.move(client)[0], port))  # noqa: B023  # run now
    return health, moves


def row(label: str, samples: list[float], quiet: list[float]) -> list[str]:
    worst = max(samples)
    return [
        label,
        f"{median(samples) * 1000:.0f}",
        f"{worst * 1000:.0f}",
        f"{median(quiet) * 1000:.0f}",
        f"{TARGET_SECONDS * 1000:.0f}",
        verdict(worst <= TARGET_SECONDS),
    ]


def main() -> None:
    arguments = parser(__doc__.splitlines()[0])
    arguments.add_argument("--tricklers", type=int, default=100)
    arguments.add_argument("--interval", type=float, default=2.0, help="seconds between lines")
    arguments.add_argument("--samples", type=int, default=20)
    arguments.add_argument("--embedded", action="store_true", help="`spieltisch`, no Redis")
    arguments.add_argument(
        "--bot-tables",
        type=int,
        default=0,
        help="tables of hard search bots started before the tricklers; only --embedded plays "
        "them (in its web process): the Procfile's bot workers are not started here",
    )
    args = arguments.parse_args()
    if args.smoke:
        args.tricklers, args.interval, args.samples = 10, 0.5, 3
    redis_url = None if args.embedded else args.redis_url
    # Embedded, the server has a fakeredis of its own: no database is touched.
    scratch = nullcontext() if redis_url is None else scratch_redis(redis_url)
    with scratch, server(redis_url) as port:
        quiet_health, quiet_moves = measure(port, games(port, args.samples))
        waiting = games(port, args.samples)
        bot_tables(port, args.bot_tables)
        tricklers = Tricklers(port, args.tricklers, args.interval)
        try:
            # Long enough for every trickler to have been accepted and to be mid-request.
            time.sleep(2 * args.interval)
            health, moves = measure(port, waiting)
        finally:
            tricklers.close()
    shipped = "spieltisch (embedded)" if args.embedded else f"Procfile: {procfile_command('web')}"
    print(f"Slow-header clients: {shipped}")
    print(
        f"{args.tricklers} connections each sending a header line every {args.interval} s "
        f"(the server closed {tricklers.closed}, each opened again at once), "
        f"{args.bot_tables} tables of hard search bots playing; "
        f"{args.samples} samples each, fresh connections"
    )
    print_table(
        ["request", "median ms", "max ms", "quiet median ms", "target ms", ""],
        [
            row("GET /health", health, quiet_health),
            row("POST move", moves, quiet_moves),
        ],
    )


if __name__ == "__main__":
    main()
