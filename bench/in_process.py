"""What a request costs inside the web process, the server left out.

The shipped app (`bootstrap.web_app`, with `bench/reference_app.py`'s reference endpoint added),
built as the Procfile's web line builds it (multiprocess metrics, a signing key, rate limits on)
over a real Redis, is called through WSGI in a loop, in this process, for three requests:
`GET /health` (Flask and the app's hooks alone), `bench/http_moves.py`'s reference endpoint (a
read of 50 entries and one conditional append) and a Pig 10 move with its answer. Timed, it
prints the CPU (user and system, from `getrusage`) each request took, medians of alternating
rounds; with `--callgrind`, the instructions each took, which do not move with the machine's
other load. `bench/http_moves.py`'s CPU per request under gunicorn, less these, is what the
server costs a request.

    .venv/bin/python bench/in_process.py [--requests 3000] [--rounds 3] [--callgrind] [--smoke]
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import os
import resource
import secrets
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (
    instructions,
    leave_counted,
    machine,
    median,
    parser,
    print_table,
    scratch_redis,
    start_counting,
)

KINDS = ("health", "reference", "move")
SETUP_REQUESTS = 200
"""Requests of each kind made before any is measured: caches, connections, the script loaded."""
GAMES = 64
"""Pig 10 tables played side by side, each from its own client address (rate limits count per
address, as for real clients)."""
REFERENCE_STREAMS = 64


class Requests:
    """The WSGI app, and a caller of each request kind on it."""

    def __init__(self) -> None:
        # Imported once `main` has set the environment: prometheus_client reads it on import.
        from bench import http_moves  # noqa: PLC0415
        from bench.reference_app import web_app  # noqa: PLC0415

        self.app = web_app()
        self.http_moves = http_moves
        self.addresses = (
            f"10.{n // 62500}.{n // 250 % 250}.{n % 250 + 1}" for n in itertools.count()
        )
        self.games: list[tuple[Any, FromAddress]] = []
        """Each table played, a `bench/http_moves.py` game, with its client."""
        self.references = itertools.count()

    def call(
        self, method: str, path: str, body: Any = None, token: str | None = None, address: str = ""
    ) -> tuple[int, Any]:
        """The status and JSON answer of one request, as gunicorn would hand it to the app."""
        data = b"" if body is None else json.dumps(body).encode()
        environ = {
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "QUERY_STRING": "",
            "SERVER_NAME": "localhost",
            "SERVER_PORT": "8000",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "HTTP_HOST": "localhost:8000",
            "REMOTE_ADDR": address or "127.0.0.1",
            "CONTENT_TYPE": "application/json",
            "CONTENT_LENGTH": str(len(data)),
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(data),
            "wsgi.errors": sys.stderr,
            "wsgi.version": (1, 0),
            "wsgi.multithread": False,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
        }
        if token is not None:
            environ["HTTP_AUTHORIZATION"] = f"Bearer {token}"
        statuses: list[str] = []

        def start_response(status: str, headers: list[tuple[str, str]], *_: Any) -> Any:
            statuses.append(status)

        answer = b"".join(self.app(environ, start_response))
        return int(statuses[0][:3]), json.loads(answer) if answer else None

    def runner(self, kind: str) -> Callable[[], None]:
        return {"health": self.health, "reference": self.reference, "move": self.move}[kind]

    def health(self) -> None:
        expect(self.call("GET", "/health"), "health")

    def reference(self) -> None:
        number = next(self.references)
        body = self.http_moves.REFERENCE_BODY
        path = f"/bench/reference/s{number % REFERENCE_STREAMS}"
        expect(self.call("POST", path, body, address=f"10.255.0.{number % 250 + 1}"), "reference")

    def move(self) -> None:
        """The next move at the next table (a finished table is replaced before its turn), as
        `bench/http_moves.py`'s clients play it."""
        if len(self.games) < GAMES:
            self.games.append(self._new_game())
        game, client = self.games.pop(0)
        if game.finished:
            game, client = self._new_game()
        expect(game.move(client), "move")
        self.games.append((game, client))

    def _new_game(self) -> tuple[Any, FromAddress]:
        client = FromAddress(self, next(self.addresses))
        return self.http_moves.Game(client), client


class FromAddress:
    """`Requests.call` from one client address: a `bench/http_moves.py` game's client."""

    def __init__(self, requests: Requests, address: str) -> None:
        self.requests, self.address = requests, address

    def call(
        self, method: str, path: str, body: Any = None, token: str | None = None
    ) -> tuple[int, Any]:
        return self.requests.call(method, path, body, token, self.address)


def expect(answer: tuple[int, Any], what: str) -> tuple[int, Any]:
    status, body = answer
    if status not in (200, 201):
        raise SystemExit(f"{what}: HTTP {status}: {json.dumps(body)[:300]}")
    return answer


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(requests: Requests, kinds: tuple[str, ...], count: int, rounds: int) -> dict[str, float]:
    """Median CPU microseconds per request of each kind over `rounds` alternating rounds."""
    samples: dict[str, list[float]] = {kind: [] for kind in kinds}
    for _ in range(rounds):
        for kind in kinds:
            run = requests.runner(kind)
            began = cpu_seconds()
            for _ in range(count):
                run()
            samples[kind].append((cpu_seconds() - began) / count * 1e6)
    return {kind: median(values) for kind, values in samples.items()}


def counted(kind: str, count: int) -> None:
    """The child of `--callgrind`: set up, then count `count` requests of `kind`."""
    requests = Requests()
    run = requests.runner(kind)
    for _ in range(SETUP_REQUESTS + GAMES):
        run()
    start_counting()
    for _ in range(count):
        run()


@contextmanager
def shipped_environment(redis_url: str) -> Iterator[None]:
    """The environment of the Procfile's web line, on `redis_url`."""
    with tempfile.TemporaryDirectory() as metrics:
        os.environ.update(
            REDIS_URL=redis_url,
            SPIELTISCH_SIGNING_KEY=secrets.token_hex(32),
            PROMETHEUS_MULTIPROC_DIR=metrics,
        )
        yield


def main() -> None:
    options = parser(__doc__.split("\n\n")[0])
    options.add_argument("--requests", type=int, default=3000, help="per kind and round")
    options.add_argument("--rounds", type=int, default=3, help="alternating rounds (timed)")
    options.add_argument("--callgrind", action="store_true", help="count instructions instead")
    options.add_argument("--count", choices=KINDS, help=argparse.SUPPRESS)
    args = options.parse_args()
    count = args.requests if args.count is not None or not args.smoke else 20
    if args.count is not None:  # the child of --callgrind, in the environment it was given
        counted(args.count, count)
        leave_counted()
    print(f"Requests in the web process, the server left out: {machine()}")
    with scratch_redis(args.redis_url), shipped_environment(args.redis_url):
        if args.callgrind:
            # Switching callgrind on costs a fixed count (the process waits for its control
            # command): a run of no requests measures it, to be taken off.
            figures = {}
            for kind in KINDS:
                child = [sys.executable, __file__, "--count", kind, "--requests"]
                fixed, _ = instructions([*child, "0"], os.environ)
                total, _ = instructions([*child, str(count)], os.environ)
                figures[kind] = (total - fixed) / count
            unit = "instructions"
        else:
            requests = Requests()
            timed(requests, KINDS, SETUP_REQUESTS, 1)
            figures = timed(requests, KINDS, count, 1 if args.smoke else args.rounds)
            unit = "CPU us"
    health = figures["health"]
    print_table(
        ["request", f"{unit} a request", "beyond GET /health", "x the reference"],
        [
            [
                kind,
                f"{figures[kind]:,.0f}",
                f"{figures[kind] - health:,.0f}",
                f"{figures[kind] / figures['reference']:.2f}",
            ]
            for kind in KINDS
        ],
    )


if __name__ == "__main__":
    main()
