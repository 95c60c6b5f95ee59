"""A webhook bot for Spieltisch, standard library only: copy it and rewrite `choose()`.

Spieltisch POSTs each turn of the bot's seat to its webhook as JSON
`{table, game, seat, version, deadline, view, legal_moves}`; the bot answers `{"move": ...}`, one
of `legal_moves`, before `deadline`. A late, broken or illegal answer is replaced by a random
move (a `table.MoveSubstituted` event in the log). The header `X-Spieltisch-Signature:
sha256=<hex>` is the HMAC-SHA256 of the body keyed by the hex SHA-256 of the seat's token, so the
bot can refuse requests that do not come from the server that seated it.

Run it (the server at http://127.0.0.1:8000, the bot answering on port 8001):

    python examples/webhook_bot.py --create pig10 --seats 4     # a new table, the rest random bots
    python examples/webhook_bot.py --join TABLE_ID              # the next free seat of a table
    python examples/webhook_bot.py --token TOKEN                # a seat that points here already

Without `--join` or `--create` it only serves; `--token` (the token of the seat's answer) turns
signature checks on. `--sleep 5` answers each turn 5 s late, to watch the stand-in at work
(`--sleep-turns 1`: only the first).

The embedded `spieltisch` calls webhooks on this machine; a deployment (with `REDIS_URL`) calls
no loopback or private address unless told to: start its processes with
`SPIELTISCH_WEBHOOK_ALLOW=127.0.0.1` to let it call this bot (README: "Webhook addresses").
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import hmac
import json
import random
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SIGNATURE_HEADER = "X-Spieltisch-Signature"
MAX_BODY = 1024 * 1024


# ---- REPLACE THIS: your bot's strategy --------------------------------------------------------
def choose(view: dict[str, Any], legal_moves: list[Any]) -> Any:
    """The move to play: one of `legal_moves`, chosen from `view`, the table as the seat sees it
    (`view["state"]` is the game: for Pig 10 your `hand`, the `pile`, `pile_value`...)."""
    return random.choice(legal_moves)


# -----------------------------------------------------------------------------------------------


def signature_ok(token: str, body: bytes, header: str | None) -> bool:
    """Whether `header` signs `body` for the seat holding `token`."""
    key = hashlib.sha256(token.encode()).hexdigest()
    expected = "sha256=" + hmac.new(key.encode(), body, hashlib.sha256).hexdigest()
    # As bytes: `compare_digest` raises on a str with non-ASCII characters, which anyone can send.
    return header is not None and hmac.compare_digest(header.encode(), expected.encode())


class BotServer(ThreadingHTTPServer):
    """The webhook's HTTP server; `token` None: no signature checks.

    It listens once made, so it can take a seat before serving: the server's first turn waits in
    the listen queue until `serve_forever` runs, by when `token` is known.
    """

    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        token: str | None = None,
        sleep: float = 0.0,
        sleep_turns: int | None = None,
    ) -> None:
        super().__init__(address, TurnHandler)
        self.token = token
        self.sleep = sleep
        self.sleep_turns = sleep_turns
        self.lock = threading.Lock()

    def late(self) -> bool:
        """Whether to answer this turn `sleep` seconds late (the first `sleep_turns` turns)."""
        with self.lock:
            if self.sleep_turns is None:
                return self.sleep > 0
            self.sleep_turns -= 1
            return self.sleep_turns >= 0


class TurnHandler(BaseHTTPRequestHandler):
    server: BotServer

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= MAX_BODY:
            self.reply(400, {"error": "expected a JSON body"})
            return
        body = self.rfile.read(length)
        token = self.server.token
        if token is not None and not signature_ok(token, body, self.headers[SIGNATURE_HEADER]):
            self.reply(401, {"error": "bad signature"})
            return
        turn = json.loads(body)
        self.reply(200, {"move": self.play(turn)})

    def play(self, turn: dict[str, Any]) -> Any:
        """The move for one turn (after a nap when the bot was told to be late)."""
        if self.server.late():
            time.sleep(self.server.sleep)
        move = choose(turn["view"], turn["legal_moves"])
        line = f"table {turn['table']} v{turn['version']} seat {turn['seat']}: {json.dumps(move)}"
        with self.server.lock:  # turns are answered in threads: one whole line at a time
            print(line, flush=True)
        return move

    def reply(self, status: int, answer: dict[str, Any]) -> None:
        data = json.dumps(answer).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server gave up waiting (too late): a stand-in has played this turn

    def log_message(self, format: str, *args: Any) -> None:
        pass  # `play` prints each turn; no access log


def post(server: str, path: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        server.rstrip("/") + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def create_table(server: str, game: str, seats: int) -> str:
    """A new table whose seats but the first are built-in random bots; its id."""
    bots = [{"seat": seat, "bot": "random"} for seat in range(1, seats)]
    table: dict[str, Any] = post(server, "/v1/tables", {"game": game, "seats": seats, "bots": bots})
    return str(table["id"])


def join(server: str, table_id: str, webhook_url: str) -> tuple[int, str]:
    """Take the next free seat of `table_id` for the webhook at `webhook_url`: (seat, token)."""
    taken = post(server, f"/v1/tables/{table_id}/seats", {"webhook": webhook_url})
    return int(taken["seat"]), str(taken["token"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="http://127.0.0.1:8000", help="Spieltisch's URL")
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on")
    parser.add_argument("--port", type=int, default=8001, help="the port to listen on (0: any)")
    parser.add_argument("--url", help="the webhook's URL as the server reaches it")
    parser.add_argument("--token", help="the seat's token: check every request's signature")
    parser.add_argument("--join", metavar="TABLE_ID", help="take a seat at this table")
    parser.add_argument("--create", metavar="GAME", help="open a table of GAME and join it")
    parser.add_argument("--seats", type=int, default=2, help="seats of the --create table")
    parser.add_argument("--sleep", type=float, default=0.0, help="answer turns this late (s)")
    parser.add_argument("--sleep-turns", type=int, help="answer only the first N turns late")
    args = parser.parse_args(argv)

    bot = BotServer((args.host, args.port), args.token, args.sleep, args.sleep_turns)
    host, port = bot.server_address[:2]
    url = args.url or f"http://{host!s}:{port}/"
    table_id = create_table(args.server, args.create, args.seats) if args.create else args.join
    if table_id:
        seat, bot.token = join(args.server, table_id, url)
        print(f"seated at table {table_id}, seat {seat}", flush=True)
    print(f"webhook bot listening on {url}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C stops the bot
        bot.serve_forever()


if __name__ == "__main__":
    main()
