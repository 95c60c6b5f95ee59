"""Faults under load, with the Procfile's shape: two gunicorn processes and an RQ bot worker on
a Redis server of the test's own (`deploy/redis.conf`: AOF, fsync on every write).

Players (threads) play Pig 10 against a `random` bot over HTTP, as a careful client does: every
move carries an Idempotency-Key, and a move whose answer never came (the connection broke, a
503) is sent again with the same key. Each test injects its faults while they play, then checks
what was acknowledged against what Redis holds, that no answer was a 500, and that every game
that finished audits. Every wait has a deadline; none asserts how long anything took.
"""

from __future__ import annotations

import http.client
import os
import signal
import threading
import time
import urllib.error
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from bootstrap import web_app
from events.store import EventStore
from service.config import Config
from tests.faults import RedisServer
from tests.live import call
from tests.stack import Stack

pytestmark = [pytest.mark.fault, pytest.mark.redis]

PLAYERS = 6
DEADLINE = 90.0
"""Seconds the players have to finish their games once the faults are over."""
RETRY_SECONDS = 0.1
RATE_LIMIT_WINDOW = 1.0
"""The rate limits count requests a second (`service/config.py`): a 429 waits out the window."""
FINISHED = "finished"


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    directory = tmp_path / "redis"
    directory.mkdir()
    server = RedisServer(directory)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def own_stack(own_redis: RedisServer, tmp_path: Path) -> Iterator[Stack]:
    running = Stack(tmp_path, own_redis.url)
    try:
        running.start_worker()
        running.wait_until_serving()
        yield running
    finally:
        running.stop()


@dataclass
class Player:
    """Plays one game after another until told to stop, keeping what was acknowledged."""

    base: str
    stop: threading.Event
    games: list[str] = field(default_factory=list)
    acknowledged: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    """Per table, the (version, command id) of every event an answer said was appended."""
    errors: list[str] = field(default_factory=list)
    refused: int = 0
    moves: int = 0

    def request(self, method: str, path: str, body: Any = None, **options: Any) -> Any:
        """The answer's body once one comes that is not an outage, within `DEADLINE` seconds;
        a 500 is recorded."""
        deadline = time.monotonic() + DEADLINE
        while True:
            try:
                status, answer = call(self.base, method, path, body, **options)
            except (
                urllib.error.URLError,
                http.client.HTTPException,
                ConnectionError,
                TimeoutError,
            ):
                # The process or its connection went away: again, until it should be back.
                assert time.monotonic() < deadline, f"{method} {path}: no answer in {DEADLINE} s"
                time.sleep(RETRY_SECONDS)
                continue
            if status >= 500 and status != 503:
                self.errors.append(f"{method} {path}: {status} {answer}")
            if status in (429, 503):
                # An outage, or the retries of every player behind one address running into its
                # limit while a failover goes on: again later, as a client told Retry-After would.
                assert time.monotonic() < deadline, f"{method} {path}: still {status}: {answer}"
                time.sleep(RETRY_SECONDS if status == 503 else RATE_LIMIT_WINDOW)
                continue
            return status, answer

    def play(self) -> None:
        try:
            while not self.stop.is_set() or not self.games:
                self.play_game()
        except Exception as error:
            self.errors.append(f"{type(error).__name__}: {error}")

    def play_game(self) -> None:
        bots = [{"seat": 1, "bot": "random"}]
        status, table = self.request(
            "POST", "/v1/tables", {"game": "pig10", "seats": 2, "bots": bots}
        )
        assert status == 201, table
        table_id = table["id"]
        status, seat = self.request("POST", f"/v1/tables/{table_id}/seats", {"name": "Ada"})
        assert status == 201, seat
        token = seat["token"]
        self.games.append(table_id)
        acknowledged = self.acknowledged.setdefault(table_id, [])
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            status, legal = self.request("GET", f"/v1/tables/{table_id}/moves", token=token)
            assert status == 200, legal
            if not legal["moves"]:
                status, now = self.request("GET", f"/v1/tables/{table_id}")
                if now["status"] == FINISHED:
                    return
                time.sleep(0.02)  # the bot's turn
                continue
            key = f"{table_id}-{legal['version']}"
            body = {"move": legal["moves"][0], "expected_version": legal["version"]}
            status, answer = self.request(
                "POST",
                f"/v1/tables/{table_id}/moves",
                body,
                token=token,
                headers={"Idempotency-Key": key},
            )
            if status == 200:
                self.moves += 1
                acknowledged += [(e["seq"], e["meta"]["command_id"]) for e in answer["events"]]
            elif status == 409:
                self.refused += 1  # the table moved on, or stands elsewhere after a loss
            else:
                self.errors.append(f"a move answered {status}: {answer}")
        self.errors.append(f"table {table_id} did not finish in {DEADLINE} s")


class Load:
    """`PLAYERS` players in threads."""

    def __init__(self, base: str) -> None:
        self.stop = threading.Event()
        self.players = [Player(base, self.stop) for _ in range(PLAYERS)]
        self.threads = [
            threading.Thread(target=player.play, daemon=True) for player in self.players
        ]
        for thread in self.threads:
            thread.start()

    def wait_for_moves(self, count: int) -> None:
        deadline = time.monotonic() + DEADLINE
        while sum(player.moves for player in self.players) < count:
            assert time.monotonic() < deadline, "the players made too few moves"
            assert not self.errors(), self.errors()
            time.sleep(0.05)

    def finish(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(DEADLINE + 30)
            assert not thread.is_alive(), "a player never finished"

    def errors(self) -> list[str]:
        return [error for player in self.players for error in player.errors]

    def acknowledged(self) -> dict[str, list[tuple[int, str]]]:
        return {t: a for player in self.players for t, a in player.acknowledged.items()}


def stored(server: RedisServer, table_id: str) -> list[tuple[int, str]]:
    """The (version, command id) of every event the table's stream holds."""
    client = server.client()
    try:
        return [
            (r.seq, r.meta["command_id"]) for r in EventStore(client).read(table_id, verify=False)
        ]
    finally:
        client.close()


def check_audits(base: str, tables: list[str]) -> int:
    """Every finished game among `tables` audits; how many finished."""
    finished = 0
    for table_id in tables:
        status, table = call(base, "GET", f"/v1/tables/{table_id}")
        assert status == 200, table
        if table["status"] != FINISHED:
            continue
        status, audit = call(base, "GET", f"/v1/tables/{table_id}/audit")
        assert (status, audit["ok"]) == (200, True), audit
        finished += 1
    return finished


def web_workers(stack: Stack) -> list[int]:
    """The pids of gunicorn's worker processes (the master's children)."""
    children = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == stack.web.pid:
                children.append(int(entry.name))
    return children


def all_bot_table(base: str) -> str:
    bots = [{"seat": seat, "bot": "random"} for seat in range(4)]
    status, table = call(base, "POST", "/v1/tables", {"game": "pig10", "seats": 4, "bots": bots})
    assert status == 201, table
    return str(table["id"])


def wait_finished(base: str, tables: list[str], stack: Stack) -> None:
    deadline = time.monotonic() + DEADLINE
    for table_id in tables:
        while True:
            status, table = call(base, "GET", f"/v1/tables/{table_id}")
            if status == 200 and table["status"] == FINISHED:
                break
            assert status in (200, 503), table
            assert time.monotonic() < deadline, f"{table_id} never finished\n{stack.worker_logs()}"
            time.sleep(0.1)


def test_a_worker_rides_out_a_redis_restart(own_redis: RedisServer, own_stack: Stack) -> None:
    before = [all_bot_table(own_stack.base) for _ in range(6)]
    own_redis.stop()
    time.sleep(2)  # the worker meets the outage, mid-game or waiting for a job
    own_redis.start()
    after = [all_bot_table(own_stack.base) for _ in range(3)]
    wait_finished(own_stack.base, before + after, own_stack)
    own_stack.check_alive()
    assert check_audits(own_stack.base, before + after) == len(before + after)


def test_redis_killed_and_restarted_under_load_loses_no_acknowledged_move(
    own_redis: RedisServer, own_stack: Stack
) -> None:
    load = Load(own_stack.base)
    load.wait_for_moves(60)
    own_redis.kill()
    time.sleep(1)
    own_redis.start()
    load.wait_for_moves(sum(player.moves for player in load.players) + 60)
    load.finish()
    assert not load.errors(), load.errors()
    own_stack.check_alive()
    for table_id, acknowledged in load.acknowledged().items():
        assert set(acknowledged) <= set(stored(own_redis, table_id)), f"{table_id} lost moves"
    tables = list(load.acknowledged())
    assert check_audits(own_stack.base, tables) == len(tables)


def test_redis_losing_its_tail_serves_no_phantom_and_no_500(
    own_redis: RedisServer, own_stack: Stack
) -> None:
    load = Load(own_stack.base)
    load.wait_for_moves(80)
    own_redis.kill()
    cut = own_redis.lose_tail(0.2)
    assert cut > 0
    own_redis.start()
    load.wait_for_moves(sum(player.moves for player in load.players) + 60)
    load.finish()
    assert not load.errors(), load.errors()
    own_stack.check_alive()
    lost = [
        table_id
        for table_id, acknowledged in load.acknowledged().items()
        if not set(acknowledged) <= set(stored(own_redis, table_id))
    ]
    assert lost, "the lost tail held acknowledged moves, which the players played again"
    tables = list(load.acknowledged())
    for table_id in tables:
        length = len(stored(own_redis, table_id))
        for _ in range(4):  # likely both web processes, each with the table cached
            status, table = call(own_stack.base, "GET", f"/v1/tables/{table_id}")
            assert (status, table["version"]) == (200, length), "no phantom version"
    assert check_audits(own_stack.base, tables) == len(tables)


def test_a_worker_and_a_web_process_killed_under_load(own_stack: Stack) -> None:
    load = Load(own_stack.base)
    load.wait_for_moves(40)
    own_stack.kill_worker(own_stack.workers[0][0])  # mid-turn, or between turns
    own_stack.start_worker()
    (victim, *_) = web_workers(own_stack)
    os.kill(victim, signal.SIGKILL)  # gunicorn's master starts another
    load.wait_for_moves(sum(player.moves for player in load.players) + 60)
    load.finish()
    assert not load.errors(), load.errors()
    own_stack.check_alive()
    tables = list(load.acknowledged())
    assert check_audits(own_stack.base, tables) == len(tables)


def test_every_route_answers_a_redis_outage_as_its_spec_says(own_redis: RedisServer) -> None:
    """With Redis stopped, every operation of openapi.yaml answers a status its spec documents,
    never a 500: those that need Redis `503 service-unavailable` with `Retry-After`, seats and
    moves included, a seat's token in hand."""
    spec = yaml.safe_load((Path(__file__).resolve().parent.parent / "openapi.yaml").read_text())
    config = Config(redis_url=own_redis.url, signing_key="00" * 32, rate_limits=False)
    client = web_app(config, redis_client=own_redis.client()).test_client()
    table = client.post("/v1/tables", json={"game": "pig10", "seats": 2}).get_json()
    token = client.post(f"/v1/tables/{table['id']}/seats", json={"name": "Ada"}).get_json()["token"]
    values = {"table_id": table["id"], "game_id": "pig10", "version": "1"}
    own_redis.stop()

    unavailable = set()
    for template, operations in spec["paths"].items():
        path = template.format(**values)
        for method, operation in operations.items():
            if method not in ("get", "post"):
                continue
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
            answer = client.open(
                path,
                method=method.upper(),
                json=body.get("example", {}) if method == "post" else None,
                headers={"Authorization": f"Bearer {token}"},
            )
            status = answer.status_code
            assert str(status) in operation["responses"], f"{method} {template}: {status}"
            assert status != 500, f"{method} {template}: {answer.get_data(as_text=True)}"
            if status == 503:
                assert answer.get_json()["type"] == "/problems/service-unavailable"
                assert answer.headers["Retry-After"]
                unavailable.add(f"{method} {template}")
    assert {
        "post /v1/tables",
        "post /v1/tables/{table_id}/seats",
        "post /v1/tables/{table_id}/moves",
        "post /v1/tables/{table_id}/leave",
        "get /v1/tables/{table_id}",
        "get /ready",
    } <= unavailable
