"""Operations end to end: the Procfile's own `web:` and `worker:` lines, run by bash on a free
port against the test Redis, with a multiprocess metrics directory of the test's own.

Two gunicorn worker processes and an RQ bot worker write their metrics into that directory, and a
scrape of `/metrics` in either web process adds up all of them. One move's request id is found in
the bot worker's log line for the turn it caused. Every wait has a deadline; none asserts how
long anything took.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gunicorn_h1c
import pytest
import redis

from service.app import NOTHING_TO_RUN
from service.errors import PROBLEM_BASE, every_problem_type
from tests.bounds import bounded
from tests.live import TEST_REDIS_URL, call, free_port
from tests.stack import ENV, ROOT, WAIT, tail
from tests.test_operations import value
from workers.player import TURNS_PER_JOB

STEP = 0.1
STEPS = round(WAIT / STEP)


def procfile_line(kind: str) -> str:
    """The command the Procfile gives `kind` (`web` or `worker`)."""
    for line in (ROOT / "Procfile").read_text().splitlines():
        name, _, command = line.partition(":")
        if name.strip() == kind:
            return command.strip()
    raise AssertionError(f"the Procfile has no {kind}: line")


class Procfile:
    """The Procfile's processes, each started by bash as a process manager would start it."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.home = logs / "home"
        self.home.mkdir()
        bin_dir = Path(sys.executable).parent  # gunicorn and rq, as installed beside Python
        self.env = {
            **os.environ,
            **ENV,
            "SPIELTISCH_STREAM_MAX_SECONDS": "60",  # a held stream stays open through the test
            "REDIS_URL": TEST_REDIS_URL,
            "PORT": str(self.port),
            "PROMETHEUS_MULTIPROC_DIR": str(logs / "metrics"),
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "HOME": str(self.home),
        }
        self.env.pop("XDG_RUNTIME_DIR", None)
        self.processes: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, kind: str) -> None:
        with (self.logs / f"{kind}.log").open("ab") as out:
            self.processes[kind] = subprocess.Popen(
                ["bash", "-c", procfile_line(kind)],
                cwd=ROOT,
                env=self.env,
                stdout=out,
                stderr=out,
                start_new_session=True,  # stopping a process group stops all it forked
            )

    def log(self, kind: str) -> str:
        path = self.logs / f"{kind}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def json_lines(self, kind: str) -> list[dict[str, Any]]:
        """The log's lines, each a JSON object (gunicorn's own lines too, from its first)."""
        return [json.loads(line) for line in self.log(kind).splitlines()]

    def wait_until_serving(self) -> None:
        for _ in bounded("gunicorn to answer /ready", STEPS):
            try:
                urllib.request.urlopen(f"{self.base}/ready", timeout=1).close()
                return
            except OSError:
                web = self.processes["web"]
                assert web.poll() is None, f"gunicorn exited:\n{tail(self.logs / 'web.log')}"
                time.sleep(STEP)

    def scrape(self) -> str:
        with urllib.request.urlopen(f"{self.base}/metrics", timeout=10) as answer:
            text: str = answer.read().decode()
            return text

    def wait_for(self, what: str, done: Callable[[], bool]) -> None:
        for _ in bounded(what, STEPS * 2):
            if done():
                return
            for kind, process in self.processes.items():
                assert process.poll() is None, f"{kind} exited:\n{tail(self.logs / f'{kind}.log')}"
            time.sleep(STEP)

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@pytest.fixture
def procfile(real_redis: redis.Redis, tmp_path: Path) -> Iterator[Procfile]:
    running = Procfile(tmp_path)
    try:
        yield running
    finally:
        running.stop()


def served_by(procfile: Procfile, route: str) -> set[int]:
    """The web processes that logged a request to `route`."""
    return {
        line["process"]
        for line in procfile.json_lines("web")
        if line.get("logger") == "spieltisch.access" and line.get("route") == route
    }


def test_two_web_processes_report_their_requests_as_one(procfile: Procfile) -> None:
    """Whichever of gunicorn's two processes serves a scrape, it counts the requests of both;
    a process killed with a live stream open no longer counts it (gunicorn's `child_exit`).
    The master opens no control socket in the home directory that every master on the host
    would share."""
    procfile.start("web")
    procfile.wait_until_serving()
    assert not any(
        "control socket" in line["message"].lower() for line in procfile.json_lines("web")
    )
    assert not (procfile.home / ".gunicorn").exists()
    sent = 0
    for _ in bounded("both web processes to serve /v1/games", 400):
        call(procfile.base, "GET", "/v1/games")  # a connection of its own each
        sent += 1
        if sent >= 20 and len(served_by(procfile, "/v1/games")) == 2:
            break
    games = {"method": "GET", "route": "/v1/games", "status": "200"}
    for _ in bounded("both web processes to serve /metrics", 400):
        text = procfile.scrape()
        assert value(text, "spieltisch_http_requests_total", **games) == sent
        assert value(text, "spieltisch_http_request_duration_seconds_count", **games) == sent
        if len(served_by(procfile, "/metrics")) == 2:
            break

    table = call(procfile.base, "POST", "/v1/tables", {"game": "pig10", "seats": 2})[1]
    stream = urllib.request.urlopen(f"{procfile.base}/v1/tables/{table['id']}/stream", timeout=10)
    try:
        assert value(procfile.scrape(), "spieltisch_live_streams_open") == 1
        (holder,) = served_by(procfile, "/v1/tables/<table_id>/stream")
        os.kill(holder, signal.SIGKILL)
        procfile.wait_for(
            "the killed process's stream to stop counting",
            lambda: value(procfile.scrape(), "spieltisch_live_streams_open") == 0,
        )
    finally:
        stream.close()
    text = procfile.scrape()
    assert value(text, "spieltisch_http_requests_total", **games) == sent, "counters stay"


def test_the_bot_worker_s_turns_and_a_move_s_request_id(procfile: Procfile) -> None:
    """The RQ worker's bot turns show in the web process's `/metrics`, and the request id of a
    person's move is on the worker's log line for the bot turn that move caused."""
    procfile.start("web")
    procfile.start("worker")
    procfile.wait_until_serving()
    base = procfile.base

    bots = [{"seat": seat, "bot": "random"} for seat in range(2)]
    all_bots = call(base, "POST", "/v1/tables", {"game": "pig10", "seats": 2, "bots": bots})[1]
    procfile.wait_for(
        "the all-bot game to finish",
        lambda: call(base, "GET", f"/v1/tables/{all_bots['id']}")[1]["status"] == "finished",
    )
    text = procfile.scrape()
    moves = value(text, "spieltisch_moves_total", game="pig10", by="bot")
    assert moves >= 80, "every card of the game, played by a bot"
    assert value(text, "spieltisch_bot_turns_total", game="pig10", outcome="played") == moves
    latency = "spieltisch_bot_turn_latency_seconds_count"
    assert value(text, latency, game="pig10", paced="false") == moves
    jobs = value(text, "spieltisch_jobs_total", job="play_turn", status="finished")
    assert moves / TURNS_PER_JOB <= jobs < moves, "each job plays the turns due after its own"
    assert "spieltisch_bot_queue_oldest_age_seconds" in text
    assert "spieltisch_bot_jobs_scheduled" in text

    mixed = {"game": "pig10", "seats": 2, "bots": [{"seat": 1, "bot": "random"}]}
    table = call(base, "POST", "/v1/tables", mixed)[1]
    token = call(base, "POST", f"/v1/tables/{table['id']}/seats", {"name": "Ada"})[1]["token"]
    moves_path = f"/v1/tables/{table['id']}/moves"
    procfile.wait_for(
        "seat 0 to be asked to move",
        lambda: call(base, "GET", moves_path, token=token)[1]["to_act"],
    )
    legal = call(base, "GET", moves_path, token=token)[1]
    request_id = f"trace-{uuid.uuid4()}"
    request = urllib.request.Request(
        base + moves_path,
        data=json.dumps({"move": legal["moves"][0], "expected_version": legal["version"]}).encode(),
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Bearer {token}",
            "X-Request-ID": request_id,
        },
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.headers["X-Request-ID"] == request_id
        version = json.load(answer)["version"]

    def turns_caused() -> list[dict[str, Any]]:
        return [
            line
            for line in procfile.json_lines("worker")
            if line.get("logger") == "spieltisch.jobs" and line.get("request_id") == request_id
        ]

    procfile.wait_for(
        "the worker to log the bot turn the move caused", lambda: bool(turns_caused())
    )
    turn = turns_caused()[0]
    assert (turn["job"], turn["table_id"], turn["seat"]) == ("play_turn", table["id"], 1)
    rq_lines = [
        line["message"]
        for line in procfile.json_lines("worker")
        if line.get("logger") == "rq.worker" and line.get("request_id") == request_id
    ]
    assert rq_lines, "RQ's own lines of the job carry its request id too"
    assert not [line for line in rq_lines if "play_turn(" in line or "is kept" in line], (
        "the job's own line says it: RQ's lines repeat no arguments and keep no result"
    )
    assert turn["version"] == version
    assert turn["outcome"] == "played"
    text = procfile.scrape()
    assert value(text, latency, game="pig10", paced="false") > moves, "no bot delay (ENV)"
    web = [line for line in procfile.json_lines("web") if line.get("request_id") == request_id]
    assert [(line["route"], line["status"]) for line in web] == [
        ("/v1/tables/<table_id>/moves", 200)
    ]


def raw_request(procfile: Procfile, request: bytes) -> tuple[str, dict[str, str], Any]:
    """Send `request` as it is, bytes on a socket; the answer's status line, headers and body
    (parsed as JSON)."""
    with socket.create_connection(("127.0.0.1", procfile.port), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):  # gunicorn closes the connection after a refusal
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (h.partition(":") for h in lines)}
    return status, headers, json.loads(body)


UNKNOWN_CODING = (
    (501, "http-error", "Unsupported transfer coding")
    if hasattr(gunicorn_h1c, "UnsupportedTransferCoding")
    else (400, "bad-request", "Unsupported Transfer-Encoding")
)
"""gunicorn's C parser (the `fast` extra, which the tests install as deployments do) tells an
unknown transfer coding apart from a malformed header, and gets RFC 9112's 501 for it, from
gunicorn_h1c 0.6.12; the versions before answer 400."""


@pytest.mark.parametrize(
    ("request_bytes", "status", "slug", "detail"),
    [
        (
            b"GET /v1/tables/" + b"a" * 5000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
            414,
            "http-error",
            "Request line length (5024) exceeds limit (4094)",
        ),
        (
            b"GET /v1/games HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 9000 + b"\r\n\r\n",
            431,
            "http-error",
            "Header size (9009) exceeds limit (8190)",
        ),
        (b"NOT A REQUEST\r\n\r\n", 400, "bad-request", "Invalid"),
        (
            b"POST /v1/tables HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n",
            400,
            "bad-request",
            "the request body could not be read: Invalid chunk size",
        ),
        (
            b"POST /v1/tables HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: spieltisch\r\nConnection: close\r\n\r\n{}",
            *UNKNOWN_CODING,
        ),
    ],
    ids=["uri-too-long", "header-too-large", "no-request-line", "malformed-chunk", "coding"],
)
def test_requests_the_server_cannot_read_are_answered_with_problems(
    procfile: Procfile, request_bytes: bytes, status: int, slug: str, detail: str
) -> None:
    """A request gunicorn cannot hand to the app gets a problem naming what was wrong, in the
    media type of every other error, where gunicorn writes an HTML page of its own; a body the
    app cannot read for its framing is the client's error, not a 500 with a traceback."""
    procfile.start("web")
    procfile.wait_until_serving()
    status_line, headers, problem = raw_request(procfile, request_bytes)
    assert status_line.split()[1] == str(status)
    assert headers["content-type"] == "application/problem+json"
    assert problem["type"] == f"/problems/{slug}"
    assert problem["status"] == status
    assert detail in problem["detail"]
    assert problem["type"].removeprefix("/problems/") in {
        kind.removeprefix(PROBLEM_BASE) for kind in every_problem_type()
    }
    # The headers every answer of the app carries, whichever of the two wrote it.
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["content-security-policy"] == NOTHING_TO_RUN
    assert re.fullmatch(r"[0-9a-f]{32}", headers["x-request-id"])
    assert problem["request_id"] == headers["x-request-id"]
    assert not [line for line in procfile.json_lines("web") if line["level"] == "ERROR"]
