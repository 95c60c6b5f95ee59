"""The service as the Procfile runs it: gunicorn and RQ bot workers as processes, on a real Redis.

The `stack` fixture (tests/conftest.py) starts one for a test, with one bot worker unless the test
asks for another count (`@pytest.mark.parametrize("stack", [2], indirect=True)`). Timings are
short: a webhook bot has 1 s a turn (so a lost turn's claim runs out after about 11 s) and the
server ends every live stream after 1 s, so that every follower resumes with `Last-Event-ID`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from tests.live import TEST_REDIS_URL, free_port

ROOT = Path(__file__).resolve().parent.parent
WAIT = 30.0
"""Seconds any one step may take before the test fails (a lost turn is found in about 16)."""
ENV = {
    "SPIELTISCH_WEBHOOK_TIMEOUT": "1",
    # The tests' webhook bots listen on loopback, which a deployment refuses unless allowed.
    "SPIELTISCH_WEBHOOK_ALLOW": "127.0.0.1",
    "SPIELTISCH_STREAM_KEEPALIVE": "0.5",
    "SPIELTISCH_STREAM_MAX_SECONDS": "1",
    # Bots beside people play at full speed unless a table's clock says otherwise: RQ's
    # scheduler counts whole seconds, so each paced bot move would take a second or two.
    "SPIELTISCH_BOT_DELAY": "0",
    "SPIELTISCH_REACTION_SECONDS": "0",
    # Every gunicorn process must sign exports with the same key; this one is for tests only.
    "SPIELTISCH_SIGNING_KEY": "00" * 32,
    # The game the tests add (tests/sixth_game.py), hosted as any other: a game is one registration.
    "SPIELTISCH_EXTRA_GAMES": "tests.sixth_game:GAME",
}
ACCESS_LOG = '"%(r)s" %(s)s last-event-id=%({last-event-id}i)s %(a)s'
"""The access log's format: each request with the Last-Event-ID it sent."""


def tail(path: Path, lines: int = 30) -> str:
    text = path.read_text(errors="replace") if path.exists() else ""
    return "\n".join(text.splitlines()[-lines:])


class Stack:
    """The web server and the bot workers, as the Procfile runs them; logs go to `logs`."""

    def __init__(
        self,
        logs: Path,
        redis_url: str = TEST_REDIS_URL,
        queue_url: str | None = None,
        settings: Mapping[str, str] | None = None,
    ) -> None:
        """The games on `redis_url`, the bot queues on `queue_url` (None: the same); `settings`
        are environment variables beside (and over) `ENV`."""
        self.logs = logs
        self.queue_url = queue_url or redis_url
        self.env = {**os.environ, **ENV, **(settings or {}), "REDIS_URL": redis_url}
        if queue_url is not None:
            self.env["QUEUE_URL"] = queue_url
        self.web_log = logs / "web.log"
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.web = self._spawn(
            [
                *(sys.executable, "-m", "gunicorn", "--worker-class", "gevent"),
                *("--workers", "2", "--worker-connections", "1000", "--access-logfile", "-"),
                *("--access-logformat", ACCESS_LOG),
                *("--bind", f"127.0.0.1:{port}", "bootstrap:web_app()"),
            ],
            self.web_log,
        )
        self.workers: list[tuple[subprocess.Popen[bytes], Path]] = []
        self.killed: list[subprocess.Popen[bytes]] = []

    def _spawn(self, command: list[str], log: Path) -> subprocess.Popen[bytes]:
        with log.open("ab") as out:
            # A session of its own: stopping a worker stops the scheduler process it forked too.
            return subprocess.Popen(
                command, cwd=ROOT, env=self.env, stdout=out, stderr=out, start_new_session=True
            )

    def wait_until_serving(self) -> None:
        deadline = time.monotonic() + WAIT
        while True:
            try:
                urllib.request.urlopen(f"{self.base}/ready", timeout=1).close()
                return
            except OSError:
                assert self.web.poll() is None, f"gunicorn exited:\n{tail(self.web_log)}"
                assert time.monotonic() < deadline, (
                    f"gunicorn never answered:\n{tail(self.web_log)}"
                )
                time.sleep(0.1)

    def start_worker(self) -> subprocess.Popen[bytes]:
        log = self.logs / f"worker-{len(self.workers)}.log"
        worker = self._spawn(
            [
                *(sys.executable, "-m", "rq.cli", "worker", "--url", self.queue_url),
                *("--worker-class", "bootstrap.Worker", "--serializer", "json"),
                *("--with-scheduler", "bots"),
            ],
            log,
        )
        self.workers.append((worker, log))
        return worker

    def web_log_text(self) -> str:
        return self.web_log.read_text(errors="replace")

    def worker_logs(self) -> str:
        return "\n".join(f"--- {log.name}:\n{tail(log)}" for _, log in self.workers)

    def kill_worker(self, worker: subprocess.Popen[bytes]) -> None:
        self.killed.append(worker)
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=10)

    def check_alive(self) -> None:
        assert self.web.poll() is None, f"gunicorn exited:\n{tail(self.web_log)}"
        for worker, log in self.workers:
            if worker not in self.killed:
                assert worker.poll() is None, f"the bot worker exited:\n{tail(log)}"

    def stop(self) -> None:
        for process in [self.web, *(worker for worker, _ in self.workers)]:
            if process.poll() is None:
                process.terminate()
        for process in [self.web, *(worker for worker, _ in self.workers)]:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)  # whatever it left behind
