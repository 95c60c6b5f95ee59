"""Server CPU per Pig 10 move: ours, durable, beside boardgame.io's in memory, same load client.

The peer is boardgame.io 0.50.2, installed from the npm registry into a temporary directory at
each run (`bench/peer/package.json`; `npm` and `node` must be on the PATH, else the script stops
with an error) and serving `bench/peer/pig10.js`, Pig 10 with our rules as a boardgame.io game,
from boardgame.io's own `Server` with its default in-memory storage, in production mode. Ours is
the Procfile's `web` line on a fresh redis-server with AOF (`appendfsync everysec`), started as
`bench/load.py` starts them (no RQ worker: nobody plays a bot; the per-address rate limits
raised, as every client comes from one address). `--redis-url` is not used.

One load client drives both: a fixed number of threads, each playing whole two-seat games one
after another, both seats its own, each move chosen at random from the seat's legal moves (the
rules' own `modes_for`, applied to what that seat was last shown). Ours: a table opened and both
seats taken over HTTP, each move a POST as in `bench/http_moves.py`, the seat's next hand from its
answer. The peer: a match created and both seats joined over boardgame.io's lobby API, then each
seat on a socket.io connection of its own (websocket transport, `python-socketio`), as
boardgame.io's client plays: it syncs the match and sends its moves as `update` actions; the
server pushes every new state to both seats, and the seat to act moves once its own connection
has shown it the state. A move is timed from the request to its answer (ours: the POST's; the
peer: the state pushed back to the mover). Creating tables and matches is not counted as moves,
but its CPU falls inside the measured windows on both sides.

Each side first plays unmeasured for a while (`--settle`), then the sides take turns in a few
rounds, each warmed up first. Server CPU is read from /proc: the gunicorn processes for ours, the
node process for the peer; Redis's CPU (`INFO cpu`) is printed apart. The target: our server
CPU per durable move at most 2x the peer's per in-memory move (moonshot: equal).

    .venv/bin/python bench/peer.py [--games 8] [--seconds 15] [--rounds 3] [--settle 10]
        [--smoke]
"""

from __future__ import annotations

import http.client
import math
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, closing, contextmanager
from pathlib import Path
from typing import IO, Any, Protocol

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import socketio

from bench.common import (
    free_port,
    machine,
    parser,
    print_table,
    procfile_command,
    ratio,
    round_options,
    verdict,
    wait_until_up,
)
from bench.http_moves import (
    Client,
    Cpu,
    Figures,
    Game,
    Tally,
    Window,
    compared,
    cpu_seconds,
    describe,
    expect,
    figures,
    run,
)
from bench.load import Server, stopping
from domain.games.pig10 import PileCard, State, modes_for

PEER = Path(__file__).resolve().parent / "peer"
PEER_VERSION = "boardgame.io 0.50.2"
TARGET, MOONSHOT = 2.0, 1.0
"""Our server CPU per move over the peer's, at most."""
SEATS = 2
NAMES = ("ann", "bob")
PUSH_TIMEOUT = 10.0
"""Seconds a seat waits for the peer to push a state before the game counts as failed."""

Move = tuple[int, str]
LOST = (http.client.HTTPException, OSError, socketio.exceptions.SocketIOError)
"""What a lost connection raises (a push not come in time, too)."""


def legal_moves(hand: Sequence[int], pile: Sequence[dict[str, int]], value: int) -> list[Move]:
    """The moves a seat holding `hand` may make onto `pile`, worth `value`, by our rules."""
    shown = State(
        hands=(),
        draw_pile=(),
        pile=tuple(PileCard(played["seat"], played["card"]) for played in pile),
        pile_value=value,
    )
    return [(card, mode) for card in sorted(set(hand)) for mode in modes_for(shown, card)]


class Refused(Exception):
    """A move the server did not take as the load client expected."""


class Table(Protocol):
    """A game the load client plays."""

    finished: bool

    def move(self) -> tuple[float, float]:
        """Make the next move; when its request went out and its answer came in."""
        ...


class OurGame:
    """A two-seat Pig 10 table of ours, opened and seated as `bench/http_moves.py` does."""

    def __init__(self, client: Client, rng: random.Random) -> None:
        self.client, self.rng = client, rng
        self.table = Game(client)
        self.pile: list[dict[str, int]] = []  # a fresh table's
        self.value = 0
        self.finished = False

    def move(self) -> tuple[float, float]:
        table = self.table
        seat = table.to_act[0]
        card, mode = self.rng.choice(legal_moves(table.hands[seat], self.pile, self.value))
        body = {"move": {"card": card, "mode": mode}, "expected_version": table.version}
        began = time.perf_counter()
        status, answer = self.client.call("POST", f"{table.path}/moves", body, table.tokens[seat])
        ended = time.perf_counter()
        if status != 200:
            raise Refused(describe(status, answer))
        shown = answer["table"]
        table.hands[seat] = shown["state"]["hand"]
        self.pile, self.value = shown["state"]["pile"], shown["state"]["pile_value"]
        table.version, table.to_act = answer["version"], shown["to_act"]
        self.finished = shown["status"] == "finished"
        return began, ended


class PeerSeat:
    """One seat's socket.io connection to the peer, kept from game to game."""

    def __init__(self, port: int, player: str) -> None:
        self.player = player
        self.socket = socketio.SimpleClient()
        self.socket.connect(
            f"http://127.0.0.1:{port}", namespace="/pig10", transports=["websocket"]
        )
        self.match, self.credentials = "", ""
        self.state: dict[str, Any] | None = None

    def sync(self, match: str, credentials: str) -> None:
        """Follow `match` from now on, as boardgame.io's client does when it mounts."""
        self.match, self.credentials, self.state = match, credentials, None
        self.socket.emit("sync", (match, self.player, credentials, SEATS))
        self.shown(0)

    def shown(self, state_id: int) -> dict[str, Any]:
        """The match's state as pushed to this seat, once it has reached `state_id`."""
        while self.state is None or self.state["_stateID"] < state_id:
            event, *args = self.socket.receive(timeout=PUSH_TIMEOUT)
            if args and args[0] == self.match:  # not a push left from the last match
                if event == "sync":
                    self.state = args[1]["state"]
                elif event == "update":
                    self.state = args[1]
        return self.state

    def send(self, move: Move) -> None:
        assert self.state is not None, "synced first"
        payload = {
            "type": "play",
            "args": list(move),
            "playerID": self.player,
            "credentials": self.credentials,
        }
        action = {"type": "MAKE_MOVE", "payload": payload}
        self.socket.emit("update", (action, self.state["_stateID"], self.match, self.player))

    def close(self) -> None:
        self.socket.disconnect()


class PeerGame:
    """A two-seat Pig 10 match on the peer, created and joined over its lobby API."""

    def __init__(self, client: Client, seats: Sequence[PeerSeat], rng: random.Random) -> None:
        status, made = client.call("POST", "/games/pig10/create", {"numPlayers": SEATS})
        expect(status, 200, "create match", made)
        match = made["matchID"]
        for seat, name in zip(seats, NAMES, strict=True):
            body = {"playerID": seat.player, "playerName": name}
            status, joined = client.call("POST", f"/games/pig10/{match}/join", body)
            expect(status, 200, "join match", joined)
            seat.sync(match, joined["playerCredentials"])
        self.seats, self.rng = seats, rng
        self.latest = seats[0].shown(0)
        self.finished = False

    def move(self) -> tuple[float, float]:
        seat = self.seats[int(self.latest["ctx"]["currentPlayer"])]
        before = self.latest["_stateID"]
        view = seat.shown(before)["G"]  # the seat to act has been shown the state
        move = self.rng.choice(legal_moves(view["hand"], view["pile"], view["value"]))
        began = time.perf_counter()
        seat.send(move)
        state = seat.shown(before + 1)
        ended = time.perf_counter()
        if state["_stateID"] != before + 1:
            raise Refused(f"state {before} moved to {state['_stateID']}")
        self.latest = state
        self.finished = state["ctx"].get("gameover") is not None
        return began, ended


def play(
    new_game: Callable[[], Table], window: Window, tally: Tally, ready: threading.Barrier
) -> None:
    """Play games one after the other until the window closes, timing each move."""
    game: Table | None = None
    try:
        try:
            game = new_game()
            tally.games += 1
        finally:
            ready.wait()
        while time.perf_counter() < window.end:
            if game is None or game.finished:
                game = new_game()
                tally.games += 1
            try:
                began, ended = game.move()
            except (Refused, *LOST) as error:
                tally.errors[
                    str(error) if isinstance(error, Refused) else type(error).__name__
                ] += 1
                game = None  # start over on a fresh table rather than guess the state
                continue
            if window.counts(began, ended):
                tally.latencies.append(ended - began)
    except Exception as error:  # a failed setup: report it with the figures
        tally.errors[f"{type(error).__name__}: {error}"] += 1


class OurMeter:
    """CPU so far: this process, the gunicorn processes and Redis."""

    def __init__(self, server: Server) -> None:
        self.server = server

    def read(self) -> Cpu:
        served, redis_cpu, _ = self.server.cpu()
        return Cpu(time.process_time(), served, redis_cpu)


class PeerMeter:
    """CPU so far: this process and the node process (the peer has no Redis)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def read(self) -> Cpu:
        return Cpu(time.process_time(), cpu_seconds(self.pid), 0.0)


def required(program: str) -> str:
    found = shutil.which(program)
    if found is None:
        raise SystemExit(f"bench/peer.py needs {program} on the PATH to run its peer: install it")
    return found


def install_peer(directory: Path) -> None:
    """boardgame.io and the peer's server script, installed into `directory` (fails loudly)."""
    for name in ("package.json", "pig10.js"):
        shutil.copy(PEER / name, directory / name)
    command = [required("npm"), "install", "--no-audit", "--no-fund", "--no-package-lock"]
    done = subprocess.run(
        command, cwd=directory, capture_output=True, text=True, timeout=600, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"npm install of the peer failed:\n{(done.stdout + done.stderr)[-3000:]}")


@contextmanager
def peer_server(stack: ExitStack) -> Iterator[tuple[int, int]]:
    """The peer serving on a free port: (port, node's pid); stopped on exit."""
    directory = Path(stack.enter_context(tempfile.TemporaryDirectory()))
    install_peer(directory)
    port = free_port()
    log: IO[bytes] = stack.enter_context(open(directory / "node.log", "w+b"))  # noqa: SIM115
    env = {**os.environ, "PORT": str(port), "NODE_ENV": "production"}
    process = subprocess.Popen(
        [required("node"), "pig10.js"], cwd=directory, env=env, stdout=log, stderr=log
    )
    with stopping(process):
        wait_until_up(
            lambda: socket.create_connection(("127.0.0.1", port), timeout=1).close(),
            process,
            log,
            "the peer",
        )
        yield port, process.pid


def main() -> None:
    options = parser(__doc__.splitlines()[0] if __doc__ else "")
    options.add_argument("--games", type=int, default=8, help="games played at once (default 8)")
    round_options(options, seconds=15.0, rounds=3)
    options.add_argument(
        "--settle",
        type=float,
        default=10.0,
        help="unmeasured seconds per side before the rounds (default 10)",
    )
    args = options.parse_args()
    settle: float = 0.0 if args.smoke else args.settle
    games: int = 2 if args.smoke else args.games
    seconds: float = 1.0 if args.smoke else args.seconds
    rounds: int = 1 if args.smoke else args.rounds
    warmup: float = 0.5 if args.smoke else args.warmup
    measured_at = machine()

    with ExitStack() as stack:
        peer_port, node = stack.enter_context(peer_server(stack))
        ours = Server(stack, workers=0, profile=None)
        our_meter, peer_meter = OurMeter(ours), PeerMeter(node)
        # Each round opens its HTTP connections: a server closes a kept-alive one that idles
        # while the other side plays. The socket.io seats keep theirs alive with pings.
        peer_seats = [
            [stack.enter_context(closing(PeerSeat(peer_port, str(seat)))) for seat in range(SEATS)]
            for _ in range(games)
        ]
        rngs = [random.Random(number) for number in range(games)]

        def our_worker(i: int, window: Window, tally: Tally, ready: threading.Barrier) -> None:
            with closing(Client(ours.port)) as client:
                play(lambda: OurGame(client, rngs[i]), window, tally, ready)

        def peer_worker(i: int, window: Window, tally: Tally, ready: threading.Barrier) -> None:
            with closing(Client(peer_port)) as client:
                play(lambda: PeerGame(client, peer_seats[i], rngs[i]), window, tally, ready)

        # First each side plays unmeasured for a while: the peer's CPU per move falls by a
        # quarter over its first 10,000 or so moves (V8 compiling its hot paths, most likely).
        for worker, meter in ((our_worker, our_meter), (peer_worker, peer_meter)):
            if settle:
                run(games, Window(settle, 0.0), worker, meter)
        our_rounds, peer_rounds = [], []
        for _ in range(rounds):  # alternating, so a slower spell of the machine hits both
            window = seconds / rounds
            our_rounds.append(run(games, Window(warmup, window), our_worker, our_meter))
            peer_rounds.append(run(games, Window(warmup, window), peer_worker, peer_meter))
    report(
        f"Pig 10, two seats, {games} games at once, {settle:g} s unmeasured per side, then "
        f"{rounds} alternating round(s) per side of {warmup:g} s warm-up + {seconds / rounds:g} s "
        f"measured; {measured_at}",
        seconds,
        our_rounds,
        peer_rounds,
    )


def per_round(rounds: list[tuple[list[Tally], Cpu]], seconds: float) -> list[float]:
    """Server CPU ms per move of each round."""
    return [figures([one], seconds).per_request_ms(one[1].server) for one in rounds]


def report(
    heading: str,
    seconds: float,
    our_rounds: list[tuple[list[Tally], Cpu]],
    peer_rounds: list[tuple[list[Tally], Cpu]],
) -> None:
    ours: Figures = figures(our_rounds, seconds)
    peer: Figures = figures(peer_rounds, seconds)
    print(heading)
    print(f"ours: the Procfile's web process ({procfile_command('web')}),")
    print("      a fresh redis-server, appendonly yes, appendfsync everysec; moves POSTed")
    print(f"peer: {PEER_VERSION} Server, in memory (InMemory storage), NODE_ENV=production,")
    print("      moves as socket.io `update` actions, every state pushed to both seats")
    print()
    our_cpu = ours.per_request_ms(ours.cpu.server)
    peer_cpu = peer.per_request_ms(peer.cpu.server)
    share = ratio(our_cpu, peer_cpu)
    with_redis = ours.per_request_ms(ours.cpu.server + ours.cpu.redis)
    rows = [
        [
            "server CPU ms/move",
            f"{our_cpu:.3f}",
            f"{peer_cpu:.3f}",
            f"{share:.2f}",
            f"<= {TARGET:g}",
            verdict(share <= TARGET),
        ],
        compared("  ours with Redis's CPU", with_redis, peer_cpu, 3),
        ["Redis CPU ms/move", f"{ours.per_request_ms(ours.cpu.redis):.3f}", "-"],
        compared(
            "client CPU ms/move",
            ours.per_request_ms(ours.cpu.client),
            peer.per_request_ms(peer.cpu.client),
            3,
        ),
        compared("moves/s", ours.rate, peer.rate, 1),
        compared("median latency ms", ours.median_ms, peer.median_ms, 2),
        compared("p99 latency ms", ours.p99_ms, peer.p99_ms, 2),
        ["moves measured", str(ours.count), str(peer.count)],
        ["games started", str(ours.games), str(peer.games)],
        ["errors", str(sum(ours.errors.values())), str(sum(peer.errors.values()))],
    ]
    print_table(["figure", "ours (durable)", "peer (memory)", "ratio", "target", ""], rows)
    window = seconds / len(our_rounds)
    rounds_ours, rounds_peer = per_round(our_rounds, window), per_round(peer_rounds, window)
    print(
        "\nserver CPU ms/move by round, ours / peer: "
        + ", ".join(
            f"{o:.3f} / {p:.3f} ({ratio(o, p):.2f}x)"
            for o, p in zip(rounds_ours, rounds_peer, strict=True)
        )
    )
    print(
        f"server CPU per move, ours over the peer's: {share:.2f}x, target <= {TARGET:g}x: "
        f"{verdict(share <= TARGET)} (moonshot {MOONSHOT:g}x: {verdict(share <= MOONSHOT)})"
    )
    for side, result in (("ours", ours), ("peer", peer)):
        for error, count in result.errors.most_common():
            print(f"error ({side}): {count} x {error}")
    if not ours.count or not peer.count or math.isnan(share):
        raise SystemExit("a side made no measured move: the comparison did not run")


if __name__ == "__main__":
    main()
