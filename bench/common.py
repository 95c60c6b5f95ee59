"""Shared plumbing of the benchmark scripts: the scratch Redis database and the figures table.

The scripts are run as files (`python bench/<script>.py`), so each puts the repository root on
`sys.path` before importing `bench.common`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, NoReturn

import redis

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/14"
"""A database of its own: the scripts flush it (and only it) at start and end."""


def parser(description: str) -> argparse.ArgumentParser:
    """The options every script has: `--smoke` and `--redis-url`."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--smoke", action="store_true", help="tiny sizes: only proves the script still runs"
    )
    parser.add_argument(
        "--redis-url",
        default=DEFAULT_REDIS_URL,
        help="the Redis database to use; it is FLUSHED at start and end "
        f"(default {DEFAULT_REDIS_URL})",
    )
    return parser


def round_options(options: argparse.ArgumentParser, seconds: float, rounds: int) -> None:
    """The options of a bench whose two sides take turns: `--seconds` measured per side,
    shared by `--rounds` turns each, every turn warmed up for `--warmup` seconds."""
    options.add_argument(
        "--seconds",
        type=float,
        default=seconds,
        help=f"measured seconds per side (default {seconds:g})",
    )
    options.add_argument(
        "--rounds",
        type=int,
        default=rounds,
        help=f"the sides take turns this many times each, sharing --seconds (default {rounds})",
    )
    options.add_argument(
        "--warmup", type=float, default=1.0, help="unmeasured seconds per round (default 1)"
    )


def wait_until_up(
    up: Callable[[], None],
    process: subprocess.Popen[bytes],
    log: IO[bytes],
    what: str,
    timeout: float = 30.0,
) -> None:
    """Call `up` until it no longer raises `OSError`; stop the run with the tail of `log` if
    `process` (`what`) exits or `timeout` seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            up()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                tail = log.read().decode(errors="replace")[-3000:]
                raise SystemExit(f"{what} did not come up:\n{tail}") from None
            time.sleep(0.1)


@contextmanager
def scratch_redis(url: str) -> Iterator[redis.Redis]:
    """A client on `url`'s database, flushed before and after use (that database only)."""
    client = redis.Redis.from_url(url)
    try:
        client.ping()
    except redis.ConnectionError as error:
        raise SystemExit(f"no Redis server answers at {url}: {error}") from None
    client.flushdb()
    try:
        yield client
    finally:
        client.flushdb()
        client.close()


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def stop(process: subprocess.Popen[bytes], timeout: float = 15) -> None:
    """End a server the script started: politely, then, after `timeout` seconds, not."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def await_redis(client: redis.Redis, tries: int) -> None:
    """Give a redis-server the script just started `tries` pings, 50 ms apart, to answer."""
    for _ in range(tries):
        try:
            client.ping()
            return
        except redis.ConnectionError:
            time.sleep(0.05)


def start_counting() -> None:
    """Switch on callgrind's instrumentation of this process, started with it off by
    `instructions`: the imports and the set-up run instrumented would take most of a minute."""
    control = ["callgrind_control", "--instr=on", str(os.getpid())]
    subprocess.run(control, check=True, capture_output=True)


def leave_counted() -> NoReturn:
    """End a process `instructions` counts, its output flushed, without the interpreter's
    shutdown: callgrind would count its last collections and the freeing of everything still
    alive, which grows with the work done (a game's caches), some 2% of an engine's action."""
    sys.stdout.flush()
    os._exit(0)


def instructions(child: Sequence[str], env: Mapping[str, str] | None = None) -> tuple[int, str]:
    """Run the command `child` under valgrind's callgrind, counting nothing until it calls
    `start_counting`: the instructions it executed from then on, and what it printed.
    Instructions, unlike seconds, do not move with the machine's other load."""
    callgrind = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        "--callgrind-out-file=/dev/null",
    ]
    run = subprocess.run([*callgrind, *child], capture_output=True, text=True, check=True, env=env)
    collected = re.search(r"Collected : (\d+)", run.stderr)
    if collected is None:
        raise SystemExit(f"callgrind printed no instruction count:\n{run.stderr}")
    return int(collected.group(1)), run.stdout


def median(samples: Sequence[float]) -> float:
    return statistics.median(samples) if samples else float("nan")


def p99(samples: Sequence[float]) -> float:
    """The 99th percentile (inclusive method, so small samples stay within their range)."""
    if len(samples) < 2:
        return samples[0] if samples else float("nan")
    return statistics.quantiles(samples, n=100, method="inclusive")[98]


def machine() -> str:
    """When and where figures were taken: UTC time, CPUs and their model (Linux)."""
    model = "unknown CPU"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.partition(":")[2].strip()
                break
    now = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return f"{now}, {os.cpu_count()} CPUs ({model}), load average {os.getloadavg()[0]:.1f}"


def ratio(ours: float, reference: float) -> float:
    return ours / reference if reference else float("nan")


def verdict(passed: bool) -> str:
    return "PASS" if passed else "MISS"


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """A plain text table: the first column left aligned, the others right aligned."""
    widths = [len(header) for header in headers]
    rows = [[*row, *[""] * (len(headers) - len(row))] for row in rows]  # short rows: pad
    for row in rows:
        widths = [max(width, len(cell)) for width, cell in zip(widths, row, strict=True)]

    def line(cells: Sequence[str]) -> str:
        first, *rest = cells
        return "  ".join(
            [first.ljust(widths[0]), *(c.rjust(w) for c, w in zip(rest, widths[1:], strict=True))]
        )

    print(line(headers).rstrip())
    print("  ".join("-" * width for width in widths))
    for row in rows:
        print(line(row).rstrip())


ROOT = Path(__file__).resolve().parents[1]
PROCFILE = ROOT / "Procfile"


LEADING_ASSIGNMENTS = re.compile(r"((?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*)(.*)", re.S)


def procfile_command(process: str) -> str:
    """The Procfile's command line of `process` (`web`, `worker`), as written there."""
    for line in PROCFILE.read_text().splitlines():
        name, colon, command = line.partition(":")
        if colon and name.strip() == process:
            return command.strip()
    raise SystemExit(f"the Procfile has no {process!r} process")


def start_procfile(
    process: str,
    env: Mapping[str, str],
    log: IO[bytes],
    replace: Mapping[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """Run the Procfile's `process` as a platform does (`sh -c`, its `${VAR:-default}`s taken
    from `env`), with this interpreter's scripts first on the PATH; `replace` swaps parts of
    the command (the app a bench serves). Its stdout (the access log) is dropped."""
    command = procfile_command(process)
    for old, new in (replace or {}).items():
        if old not in command:
            raise SystemExit(f"the Procfile's {process!r} command has no {old!r}")
        command = command.replace(old, new)
    path = os.pathsep.join(filter(None, [str(Path(sys.executable).parent), env.get("PATH")]))
    # `exec` so that the server is the process the bench signals; the line's leading variable
    # assignments (PROMETHEUS_MULTIPROC_DIR=...) go before it, where sh allows them.
    split = LEADING_ASSIGNMENTS.fullmatch(command)
    assert split is not None, "the pattern matches any line"
    assignments, program = split.groups()
    return subprocess.Popen(
        ["sh", "-c", f"{assignments}exec {program}"],
        cwd=ROOT,
        env={**env, "PATH": path},
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
