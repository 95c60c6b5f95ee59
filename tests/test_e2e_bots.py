"""End to end with bots: the Procfile's gunicorn and RQ bot worker as processes, on a real Redis.

Each test starts its own web server and worker (the `stack` fixture: SPIELTISCH_WEBHOOK_TIMEOUT=1,
so a lost turn's claim runs out after about 11 s) and follows tables over the live stream, which
the server ends every second (SPIELTISCH_STREAM_MAX_SECONDS=1) so that every follower resumes with
`Last-Event-ID` many times over. Every wait has a deadline; none asserts how long anything took.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import redis

from arena.__main__ import run
from arena.match import Entrant
from tests.live import call
from tests.stack import WAIT, Stack
from tests.test_lost_writes import lose_tail

pytestmark = pytest.mark.redis

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
FINISHED = "table.GameFinished"
SUBSTITUTED = "table.MoveSubstituted"
PLAYED = "pig10.CardPlayed"


def ok(answer: tuple[int, Any], status: int = 200) -> Any:
    assert answer[0] == status, f"expected HTTP {status}, got {answer}"
    return answer[1]


def bot_table(base: str, seats: int = 4) -> str:
    """A Pig 10 table whose seats but seat 0 are `random` bots."""
    bots = [{"seat": seat, "bot": "random"} for seat in range(1, seats)]
    table = ok(
        call(base, "POST", "/v1/tables", {"game": "pig10", "seats": seats, "bots": bots}), 201
    )
    return str(table["id"])


class EventStream:
    """Follows a table's live stream in a thread, strictly: each frame must be `id`, `event` and
    `data` agreeing with each other. Resumes with `Last-Event-ID` when the server ends the
    stream, and also hangs up itself every `drop_every` events to resume mid-flow."""

    def __init__(
        self, base: str, table_id: str, token: str | None = None, drop_every: int = 0
    ) -> None:
        self.url = f"{base}/v1/tables/{table_id}/stream"
        self.token = token
        self.drop_every = drop_every
        self.events: list[dict[str, Any]] = []
        self.deadlines: dict[str, str] = {}
        """The latest deadlines the stream sent."""
        self.moves: dict[str, Any] | None = None
        """The latest legal moves the stream sent (a seat's stream only)."""
        self.connections = 0
        self.finished = False
        self.error: str | None = None
        self._read = 0
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._follow, daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        try:
            while not self.finished:
                self._connect()
        except Exception as error:
            self.error = f"{type(error).__name__}: {error}"
        finally:
            with self._changed:
                self._changed.notify_all()

    def _connect(self) -> None:
        request = urllib.request.Request(self.url)
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        if self.events:
            request.add_header("Last-Event-ID", str(self.events[-1]["seq"]))
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.headers.get_content_type() == "text/event-stream"
            self.connections += 1
            fields: list[tuple[str, str]] = []
            for raw in response:
                line = raw.decode().removesuffix("\n")
                if line:
                    name, _, value = line.partition(": ")
                    fields.append((name, value))
                    continue
                frame, fields = dict(fields), []
                if "" in frame or set(frame) <= {"retry"}:
                    continue  # a comment (keep-alive) or the reconnection delay
                assert len(frame) == 3 == len(set(frame) & {"id", "event", "data"}), frame
                event = json.loads(frame["data"])
                assert frame["id"] == str(event["seq"]), f"id {frame['id']} on {event}"
                assert frame["event"] == event["type"], f"event {frame['event']} on {event}"
                # Not part of the log: the latest event's frame carries them.
                self.deadlines = event.pop("deadlines", self.deadlines)
                self.moves = event.pop("moves", self.moves)
                with self._changed:
                    self.events.append(event)
                    self.finished = event["type"] == FINISHED
                    self._changed.notify_all()
                if self.finished or (self.drop_every and len(self.events) % self.drop_every == 0):
                    return

    def next(self, waiting_for: str, stack: Stack) -> dict[str, Any]:
        """The next event not read yet; fails after `WAIT` seconds without one."""
        deadline = time.monotonic() + WAIT
        with self._changed:
            while self._read >= len(self.events):
                assert self.error is None, f"the stream failed: {self.error}"
                assert not self.finished, f"the game finished while waiting for {waiting_for}"
                stack.check_alive()
                left = deadline - time.monotonic()
                assert left > 0, (
                    f"no event in {WAIT} s while waiting for {waiting_for}; last event: "
                    f"{self.events[-1] if self.events else None}\n{stack.worker_logs()}"
                )
                self._changed.wait(min(left, 1.0))
            self._read += 1
            return self.events[self._read - 1]

    def until_finished(self, stack: Stack, deadline_seconds: float = WAIT) -> list[dict[str, Any]]:
        """Every event of the game, once it is over."""
        deadline = time.monotonic() + deadline_seconds
        with self._changed:
            while not self.finished:
                assert self.error is None, f"the stream failed: {self.error}"
                stack.check_alive()
                left = deadline - time.monotonic()
                assert left > 0, (
                    f"the game did not finish in {deadline_seconds} s; last event: "
                    f"{self.events[-1] if self.events else None}\n{stack.worker_logs()}"
                )
                self._changed.wait(min(left, 1.0))
            return list(self.events)


class Pig10Turns:
    """Whose turn it is in Pig 10, worked out from the events alone, by the rules' turn order."""

    def __init__(self, players: int) -> None:
        self.hands = [0] * players
        self.draw_pile = 80
        self.turn: int | None = None

    def apply(self, event: dict[str, Any]) -> None:
        kind, data = event["type"], event["data"]
        if kind == "pig10.CardsDealt":
            dealt = len(data["cards"]) if "cards" in data else data["count"]
            self.hands[data["seat"]] += dealt
            self.draw_pile -= dealt
        elif kind == "pig10.FirstSeatChosen":
            self.turn = data["seat"]
        elif kind == "pig10.CardDrawn":
            self.hands[data["seat"]] += 1
            self.draw_pile -= 1
        elif kind == PLAYED:
            mover, players = data["seat"], len(self.hands)
            self.hands[mover] -= 1
            # While the draw pile lasts nobody is skipped; then only seats holding cards play.
            after = [(mover + step) % players for step in range(1, players + 1)]
            holding = [seat for seat in after if self.hands[seat]]
            self.turn = after[0] if self.draw_pile else next(iter(holding), None)


def without_command(event: dict[str, Any]) -> dict[str, Any]:
    """An event without the command in its metadata, which shows to everyone once it is over."""
    meta = {key: value for key, value in event["meta"].items() if key != "command"}
    return {**event, "meta": meta}


def test_human_and_three_random_bots_over_the_stream(stack: Stack) -> None:
    human = 0
    table_id = bot_table(stack.base)
    path = f"/v1/tables/{table_id}"
    token = ok(call(stack.base, "POST", f"{path}/seats", {"name": "human"}), 201)["token"]
    stream = EventStream(stack.base, table_id, token, drop_every=25)
    turns = Pig10Turns(4)
    seen = checked = moves = 0
    while True:
        event = stream.next(f"the bots to play up to the human's turn (after v{seen})", stack)
        assert event["seq"] == seen + 1, f"v{event['seq']} follows v{seen} on the stream"
        seen = event["seq"]
        turns.apply(event)
        if event["type"] == FINISHED:
            break
        if turns.turn != human:
            continue
        legal = ok(call(stack.base, "GET", f"{path}/moves", token=token))
        assert legal["to_act"], f"the events say seat {human} is to act at v{seen}: {legal}"
        while seen < legal["version"]:  # the rest of the command that gave the human the turn
            event = stream.next(f"the events up to v{legal['version']}", stack)
            seen = event["seq"]
            turns.apply(event)
        assert (seen, turns.turn) == (legal["version"], human), "the stream ran past the turn"
        assert stream.moves == legal, "the latest event's frame carries the seat's moves"
        # The human's stream is the human's log: the same events, redacted the same way.
        log = ok(call(stack.base, "GET", f"{path}/events?after={checked}", token=token))
        assert log["events"] == stream.events[checked:seen]
        checked = seen
        move = {"move": legal["moves"][0], "expected_version": seen}
        ok(call(stack.base, "POST", f"{path}/moves", move, token))
        moves += 1

    events = stream.events
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
    log = ok(call(stack.base, "GET", f"{path}/events", token=token))["events"]
    assert [event["seq"] for event in log] == [event["seq"] for event in events]
    # Past the human's last turn the finished log shows every command; nothing else differs.
    assert [without_command(event) for event in log[checked:]] == [
        without_command(event) for event in events[checked:]
    ]
    played = [event["data"]["seat"] for event in events if event["type"] == PLAYED]
    assert len(played) == 80, "every card is played once"
    assert played.count(human) == moves
    assert {1, 2, 3} <= set(played), "every bot played"
    for event in events[:-1]:
        data, mine = event["data"], event["data"].get("seat") == human
        if event["type"] == "pig10.CardsDealt":
            assert ("cards" in data) is mine, f"v{event['seq']} as seat {human} sees it: {data}"
        if event["type"] == "pig10.CardDrawn":
            assert ("card" in data) is mine, f"v{event['seq']} as seat {human} sees it: {data}"
        if event["seq"] <= checked and event["meta"]["seat"] not in (human, None):
            assert "command" not in event["meta"], f"another seat's command: {event}"
    assert events[-1]["data"]["result"] == ok(call(stack.base, "GET", path))["result"]
    assert stream.connections >= len(events) // 25, "the stream was resumed at every hang-up"
    assert ok(call(stack.base, "GET", f"{path}/audit"))["ok"]


# ---- webhooks ---------------------------------------------------------------------------------


class HeldWebhook(ThreadingHTTPServer):
    """A webhook bot that holds its first turn until `release` is set, and checks signatures.

    It listens once made; `serve` starts answering, once the seat's `token` is known."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), HeldTurn)
        self.token = ""
        self.turns: list[tuple[dict[str, Any], bool]] = []
        """Each turn asked, and whether its signature verified."""
        self.asked = threading.Event()
        self.release = threading.Event()
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"

    def serve(self) -> None:
        threading.Thread(target=self.serve_forever, daemon=True).start()


class HeldTurn(BaseHTTPRequestHandler):
    server: HeldWebhook

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        turn = json.loads(body)
        key = hashlib.sha256(self.server.token.encode()).hexdigest().encode()
        expected = "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()
        signed = hmac.compare_digest(self.headers.get("X-Spieltisch-Signature", ""), expected)
        with self.server.lock:
            first = not self.server.turns
            self.server.turns.append((turn, signed))
        self.server.asked.set()
        if first:
            self.server.release.wait(WAIT)
        answer = json.dumps({"move": turn["legal_moves"][0]}).encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)
        except OSError:
            pass  # whoever asked is gone

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_a_worker_killed_mid_turn_is_replaced_and_the_game_completes(stack: Stack) -> None:
    bot = HeldWebhook()
    try:
        table_id = bot_table(stack.base)
        stream = EventStream(stack.base, table_id)
        taken = call(stack.base, "POST", f"/v1/tables/{table_id}/seats", {"webhook": bot.url})
        bot.token = ok(taken, 201)["token"]
        bot.serve()
        assert bot.asked.wait(WAIT), f"the webhook was never asked\n{stack.worker_logs()}"
        # The worker is waiting for the webhook's answer: kill it mid-turn, start another.
        stack.kill_worker(stack.workers[0][0])
        bot.release.set()
        stack.start_worker()
        # The lost turn's claim runs out (job timeout 6 s + 5 s), and the new worker's sweep
        # (every 5 s) queues it again.
        events = stream.until_finished(stack, deadline_seconds=60)
    finally:
        bot.release.set()
        bot.shutdown()
        bot.server_close()
    with bot.lock:
        turns = list(bot.turns)
    assert turns[0][0]["version"] == turns[1][0]["version"], "the lost turn is asked again"
    assert all(signed for _, signed in turns), "every request is signed with the seat's key"
    # A prompt webhook's answers are all played as they are: no stand-in ever played.
    assert not [event for event in events if event["type"] == SUBSTITUTED]
    for turn, _ in turns[1:]:
        played = events[turn["version"]]  # the first event after the version it was asked at
        assert played["type"] == PLAYED, f"v{played['seq']} is {played}"
        move = {"card": played["data"]["card"], "mode": played["data"]["mode"]}
        assert (played["data"]["seat"], move) == (0, turn["legal_moves"][0])
    assert len([event for event in events if event["type"] == PLAYED]) == 80
    assert ok(call(stack.base, "GET", f"/v1/tables/{table_id}/audit"))["ok"]


class Example:
    """A script of examples/ running, its output read line by line as it comes."""

    def __init__(self, script: str, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(EXAMPLES / script), *args],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()

    def wait_for(self, pattern: str) -> re.Match[str]:
        """The first line matching `pattern`; it must come within `WAIT` seconds."""
        deadline = time.monotonic() + WAIT
        with self._changed:
            while True:
                for line in self.lines:
                    if match := re.search(pattern, line):
                        return match
                left = deadline - time.monotonic()
                missing = f"no line matching {pattern!r}; the output:\n{''.join(self.lines)}"
                assert left > 0, missing
                assert self._reader.is_alive(), missing  # it has exited
                self._changed.wait(min(left, 1.0))

    def output(self, timeout: float = WAIT) -> str:
        """Everything it printed, once it has exited (within `timeout` seconds)."""
        self.process.wait(timeout)
        self._reader.join(WAIT)
        if self.process.stdout is not None:
            self.process.stdout.close()
        return "".join(self.lines)

    def stop(self) -> str:
        if self.process.poll() is None:
            self.process.terminate()
        return self.output()


def test_a_late_webhook_is_replaced_for_that_turn_only(stack: Stack) -> None:
    table_id = bot_table(stack.base)
    stream = EventStream(stack.base, table_id)
    # The example, answering its first turn 1.5 s late (the deadline is 1 s) and checking the
    # signature of every request with the token its seat got.
    bot = Example(
        "webhook_bot.py",
        *("--server", stack.base, "--port", "0", "--join", table_id),
        *("--sleep", "1.5", "--sleep-turns", "1"),
    )
    try:
        seat = int(bot.wait_for(r"seated at table \S+, seat (\d+)")[1])
        url = bot.wait_for(r"listening on (\S+)")[1]
        events = stream.until_finished(stack)
        forged = urllib.request.Request(url, data=b'{"legal_moves": [1]}', method="POST")
        forged.add_header("X-Spieltisch-Signature", "sha256=" + "0" * 64)
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(forged, timeout=5)
        assert refused.value.code == 401, "the example refuses a request signed with another key"
        refused.value.close()
    finally:
        output = bot.stop()
    substituted = [event for event in events if event["type"] == SUBSTITUTED]
    assert [event["data"] for event in substituted] == [{"seat": seat, "reason": "unanswered"}]
    late = substituted[0]["seq"] - 1  # the version the late turn was asked at
    stand_in = events[late + 1]
    assert (stand_in["type"], stand_in["data"]["seat"]) == (PLAYED, seat)
    # The example prints each move it answers (the late one maybe not: the game may be over by
    # then). All the others were played as answered; a request whose signature the example
    # found wrong would have been refused, and replaced too.
    answered = {
        int(version): json.loads(move)
        for version, move in re.findall(rf"^table \S+ v(\d+) seat {seat}: (.*)$", output, re.M)
        if int(version) != late
    }
    assert min(answered) > late, "the first turn was the late one"
    mine = [event for event in events if event["type"] == PLAYED and event["data"]["seat"] == seat]
    assert len(answered) == len(mine) - 1, output
    for version, move in answered.items():
        played = events[version]  # the first event after the version it was asked at
        assert (played["type"], played["data"]["seat"]) == (PLAYED, seat), played
        assert {"card": played["data"]["card"], "mode": played["data"]["mode"]} == move
    assert ok(call(stack.base, "GET", f"/v1/tables/{table_id}/audit"))["ok"]


def http_example_in_seat_0(stack: Stack, table_id: str, server: str | None = None) -> Example:
    """examples/http_bot.py, seated at the table's seat 0, talking to `server` (default: the
    stack itself)."""
    bot = Example(
        "http_bot.py", "--server", server or stack.base, "--table", table_id, "--name", "e2e"
    )
    try:
        assert int(bot.wait_for(r"seated at table \S+, seat (\d+)")[1]) == 0
    except BaseException:
        print("examples/http_bot.py said:", bot.stop())
        raise
    return bot


def turns(stack: Stack, path: str, token: str) -> Iterator[dict[str, Any]]:
    """The seat's legal moves each time it is to act, until the game is over (within `WAIT`)."""
    deadline = time.monotonic() + WAIT
    while ok(call(stack.base, "GET", path))["status"] == "running":
        assert time.monotonic() < deadline, f"the game did not finish in {WAIT} s"
        legal = ok(call(stack.base, "GET", f"{path}/moves", token=token))
        if legal["to_act"]:
            yield legal
        else:
            time.sleep(0.02)


def test_the_http_example_plays_a_seat_to_the_end(stack: Stack) -> None:
    """The example takes seat 0 and plays it to the end beside two bots and the test's seat 1,
    which thinks for longer than a stream lasts once, so that the example must resume."""
    bots = [{"seat": 2, "bot": "random"}, {"seat": 3, "bot": "random"}]
    table = ok(
        call(stack.base, "POST", "/v1/tables", {"game": "pig10", "seats": 4, "bots": bots}), 201
    )
    path = f"/v1/tables/{table['id']}"
    bot = http_example_in_seat_0(stack, table["id"])
    try:
        token = ok(call(stack.base, "POST", f"{path}/seats", {"name": "slow"}), 201)["token"]
        paused = False
        for legal in turns(stack, path, token):
            if not paused:  # longer than SPIELTISCH_STREAM_MAX_SECONDS: the streams end
                time.sleep(1.5)
                paused = True
            move = {"move": legal["moves"][0], "expected_version": legal["version"]}
            ok(call(stack.base, "POST", f"{path}/moves", move, token))
        output = bot.output()  # it exits once the game is over
    finally:
        print("examples/http_bot.py said:", bot.stop())  # shown if the test fails
    assert bot.process.returncode == 0, output
    assert "game over: winners" in output
    table = ok(call(stack.base, "GET", path))
    assert table["status"] == "finished"
    assert table["seats"][0]["name"] == "e2e"
    log = ok(call(stack.base, "GET", f"{path}/events"))["events"]
    mine = [event for event in log if event["type"] == PLAYED and event["data"]["seat"] == 0]
    assert len(mine) == output.count(": played ") > 0, output
    # The example's streams (the access log names each with its Last-Event-ID): resumed, after
    # the events it had seen.
    resumed = re.findall(
        rf"GET {re.escape(path)}/stream HTTP/1.1\" 200 last-event-id=(\S*) Python-urllib",
        stack.web_log_text(),
    )
    assert len(resumed) >= 2, f"the example's streams: {resumed}"
    assert resumed[0] == "-", "the first stream starts from the start"
    assert all(last.isdigit() for last in resumed[1:]), f"resumed after: {resumed}"


def test_the_http_example_plays_on_after_the_server_lost_its_last_move(
    stack: Stack, real_redis: redis.Redis
) -> None:
    """Redis loses the example's last move after its stream sent it, and the table waits for
    the example again: its stream, resumed beyond the log, is told so (`stream.Rewound`), and
    the example reads its moves and plays on to the end."""
    table = ok(call(stack.base, "POST", "/v1/tables", {"game": "pig10", "seats": 2}), 201)
    path = f"/v1/tables/{table['id']}"
    bot = http_example_in_seat_0(stack, table["id"])
    try:
        token = ok(call(stack.base, "POST", f"{path}/seats", {"name": "tester"}), 201)["token"]
        lost = 0
        for legal in turns(stack, path, token):
            log = ok(call(stack.base, "GET", f"{path}/events"))["events"]
            if not lost and any(event["meta"].get("seat") == 0 for event in log):
                # The example moved last: lose its move, the table waits for it again.
                command = next(e for e in reversed(log) if e["meta"].get("seat") == 0)
                first = next(
                    e for e in log if e["meta"].get("command_id") == command["meta"]["command_id"]
                )
                lost = len(log) - first["seq"] + 1
                assert lose_tail(real_redis, table["id"], lost) == first["seq"] - 1
                continue
            move = {"move": legal["moves"][0], "expected_version": legal["version"]}
            ok(call(stack.base, "POST", f"{path}/moves", move, token))
        output = bot.output()
    finally:
        print("examples/http_bot.py said:", bot.stop())  # shown if the test fails
    assert lost, "the example's move was lost once"
    assert bot.process.returncode == 0, output
    table = ok(call(stack.base, "GET", path))
    assert table["status"] == "finished"
    mine = [
        event
        for event in ok(call(stack.base, "GET", f"{path}/events"))["events"]
        if event["type"] == PLAYED and event["data"]["seat"] == 0
    ]
    assert output.count(": played ") == len(mine) + 1, "each move once, the lost one twice"
    assert ok(call(stack.base, "GET", f"{path}/audit"))["ok"]


def test_the_arena_plays_through_the_service_and_its_games_audit(stack: Stack) -> None:
    lineup = [Entrant("heuristic"), Entrant("search", "easy")]
    records = run("pig10", lineup, 2, parallel=2, service=stack.base, seed="e2e")
    assert [r.seats[0] for r in records] == ["heuristic", "search:easy"]
    for played in records:
        assert played.table is not None
        table = ok(call(stack.base, "GET", f"/v1/tables/{played.table}"))
        assert (table["result"]["winners"], table["version"]) == (played.winners, played.version)
        assert [(s["bot"], s["level"]) for s in table["seats"]] == [
            (Entrant.parse(name).bot, "easy" if "search" in name else None) for name in played.seats
        ]
        assert ok(call(stack.base, "GET", f"/v1/tables/{played.table}/audit"))["ok"]


class Proxy(ThreadingHTTPServer):
    """An HTTP proxy in front of the stack, relaying each request as its handler says."""

    def __init__(self, upstream: str, handler: type[Relayed]) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.upstream = urlsplit(upstream)
        self.requests: list[str] = []
        """Each request's method and path, as it came."""

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class FaultyProxy(Proxy):
    """Fails a client three times: its first read of a table is answered `503` with
    `Retry-After: 1`, and its first seat and first move are passed on (the server makes them) but
    their answers are dropped, the connection closed. Everything else, live streams included,
    goes through as it comes. It keeps each POST's Idempotency-Key."""

    def __init__(self, upstream: str) -> None:
        super().__init__(upstream, FaultyRequest)
        self.refused: list[str] = []
        self.keys: list[str] = []
        self.seat_keys: list[str] = []


class Relayed(BaseHTTPRequestHandler):
    """Passes a request on to the proxy's upstream and the answer back as it comes (a live
    stream's frames as they are sent)."""

    server: Proxy

    def do_GET(self) -> None:
        self.server.requests.append(f"GET {self.path}")
        self.forward(None)

    def do_POST(self) -> None:
        self.server.requests.append(f"POST {self.path}")
        self.forward(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None)

    def forward(self, body: bytes | None) -> None:
        self.relay(body)

    def relay(self, body: bytes | None, *, answered: bool = True, silent: bool = False) -> None:
        """Send the request upstream; unless `answered` is false, pass the answer back: its
        status and headers, then its body, or, `silent`, nothing more until the client leaves."""
        upstream = http.client.HTTPConnection(self.server.upstream.netloc, timeout=60)
        try:
            hop = ("host", "connection")
            sent = {name: value for name, value in self.headers.items() if name.lower() not in hop}
            upstream.request(self.command, self.path, body, sent)
            answer = upstream.getresponse()
            if not answered:
                answer.read()
                self.close_connection = True
                return
            self.send_response(answer.status)
            for name, value in answer.getheaders():
                if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(name, value)
            self.send_header("Connection", "close")  # the body ends where the connection does
            self.end_headers()
            if silent:
                self.wfile.flush()
                self.rfile.read()  # until the client closes its end
                return
            while chunk := answer.read1(65536):  # a live stream's frames as they come
                self.wfile.write(chunk)
                self.wfile.flush()
        finally:
            upstream.close()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the stack's own log names every request."""


class FaultyRequest(Relayed):
    server: FaultyProxy

    def forward(self, body: bytes | None) -> None:
        proxy = self.server
        table_read = self.command == "GET" and re.fullmatch(r"/v1/tables/[^/]+", self.path)
        if table_read and not proxy.refused:
            proxy.refused.append(self.path)
            problem = json.dumps({"type": "/problems/service-unavailable", "status": 503})
            self.send_response(503)
            self.send_header("Retry-After", "1")
            self.send_header("Content-Type", "application/problem+json")
            self.end_headers()
            self.wfile.write(problem.encode())
            return
        if self.command == "POST":
            keys = proxy.keys if self.path.endswith("/moves") else proxy.seat_keys
            keys.append(self.headers["Idempotency-Key"])
            # The first is made, and its answer lost on the way back.
            self.relay(body, answered=len(keys) > 1)
            return
        self.relay(body)


class SecondStreamSilenced(Relayed):
    """Relays everything, but the second live stream's connection, once open, goes silent: no
    frame and no keep-alive, as a connection that died without a word."""

    def forward(self, body: bytes | None) -> None:
        streams = [request for request in self.server.requests if request.endswith("/stream")]
        self.relay(body, silent=self.path.endswith("/stream") and len(streams) == 2)


def table_now(stack: Stack, path: str) -> Any:
    return ok(call(stack.base, "GET", path))


def example_through(stack: Stack, proxy: Proxy) -> tuple[str, str]:
    """The example plays seat 0 of a new Pig 10 table through `proxy`, the test seat 1 directly,
    to the end; the table's path and what the example printed (it exited with 0)."""
    table = ok(call(stack.base, "POST", "/v1/tables", {"game": "pig10", "seats": 2}), 201)
    path = f"/v1/tables/{table['id']}"
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        bot = http_example_in_seat_0(stack, table["id"], proxy.base)
        try:
            token = ok(call(stack.base, "POST", f"{path}/seats", {"name": "tester"}), 201)["token"]
            for legal in turns(stack, path, token):
                move = {"move": legal["moves"][0], "expected_version": legal["version"]}
                ok(call(stack.base, "POST", f"{path}/moves", move, token))
            output = bot.output()
        finally:
            print("examples/http_bot.py said:", bot.stop())  # shown if the test fails
    finally:
        proxy.shutdown()
        proxy.server_close()
    assert bot.process.returncode == 0, output
    return path, output


def test_the_http_example_rides_out_an_outage_and_a_lost_answer(stack: Stack) -> None:
    """Through a proxy that refuses its first table read with a 503 and drops the answers of
    its seat and its first move (which the server made), the example waits out the Retry-After,
    sends the seat and the move again under their Idempotency-Keys, is answered with the seat
    (its token) and the move it made, and plays on to the end: nothing twice, nothing lost."""
    proxy = FaultyProxy(stack.base)
    path, output = example_through(stack, proxy)
    assert proxy.refused, "the example read the table through the proxy"
    assert proxy.keys[0] == proxy.keys[1], "the move was sent again under its first key"
    assert proxy.seat_keys == proxy.seat_keys[:1] * 2, "the seat was sent again under its key"
    assert [seat["name"] for seat in table_now(stack, path)["seats"]] == ["e2e", "tester"]
    assert len(set(proxy.keys)) == len(proxy.keys) - 1, "each other move has a key of its own"
    log = ok(call(stack.base, "GET", f"{path}/events"))["events"]
    mine = [event for event in log if event["type"] == PLAYED and event["data"]["seat"] == 0]
    assert len(mine) == output.count(": played ") == len(proxy.keys) - 1, output
    assert ok(call(stack.base, "GET", f"{path}/audit"))["ok"]


def test_the_http_example_resumes_a_stream_gone_silent_after_three_keepalives(
    stack: Stack,
) -> None:
    """Through a proxy that lets the example's second live stream go silent (its connection
    open, nothing sent), the example gives up on it once three of the server's keep-alives
    (`Stream-Keepalive`, 0.5 s here) are missed, resumes, and plays to the end: a stream that
    waited a fixed minute would stall the game past the test's deadline."""
    proxy = Proxy(stack.base, SecondStreamSilenced)
    path, output = example_through(stack, proxy)
    streams = [request for request in proxy.requests if request.endswith("/stream")]
    assert len(streams) >= 3, f"the example's streams: {streams}"
    assert output.count("stream interrupted (timed out)") == 1, output
    assert table_now(stack, path)["status"] == "finished"
