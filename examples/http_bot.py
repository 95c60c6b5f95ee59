"""An HTTP bot for Spieltisch, standard library only: copy it and rewrite `choose()`.

It follows the table's live event stream (Server-Sent Events, resumed with `Last-Event-ID`
whenever the connection ends). The frame of the table's latest event carries the seat's legal
moves there; when it has some, it sends one, naming the version it decided on. The move's answer
carries the table and the seat's legal moves after it, so it plays on without reading. A
`409 stale-version` (the table moved on meanwhile) makes it read the moves again, and so does a
`stream.Rewound` frame (the server lost moves the stream had sent). An outage (`503`), a rate
limit (`429`) or a request left unanswered is tried again after the server's `Retry-After`, else
after a doubling pause; a move or a seat is sent again with the same `Idempotency-Key`, so one
that landed unanswered gets its first answer and is never made twice. It exits when the game is
over, printing the result.

    python examples/http_bot.py --table TABLE_ID --name Ada     # take the next free seat
    python examples/http_bot.py --table TABLE_ID --token TOKEN  # play a seat you hold already

`--server` is Spieltisch's URL (default http://127.0.0.1:8000).
"""

from __future__ import annotations

import argparse
import json
import random
import secrets
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

FINISHED = "table.GameFinished"
REWOUND = "stream.Rewound"
ATTEMPTS = 6
LONGEST_WAIT = 30.0
FIRST_SILENCE = 60.0
"""Seconds a stream may stay silent before its first connection tells the keep-alive period."""
KEEPALIVES_MISSED = 3


# ---- REPLACE THIS: your bot's strategy --------------------------------------------------------
def choose(view: dict[str, Any], legal_moves: list[Any]) -> Any:
    """The move to play: one of `legal_moves`, chosen from `view`, the table as the seat sees it
    (`view["state"]` is the game: for Pig 10 your `hand`, the `pile`, `pile_value`...)."""
    return random.choice(legal_moves)


# -----------------------------------------------------------------------------------------------


class Client:
    def __init__(self, server: str, table: str, token: str | None = None) -> None:
        self.base = f"{server.rstrip('/')}/v1/tables/{table}"
        self.token = token

    def request(
        self, method: str, path: str = "", body: Any = None, headers: dict[str, str] | None = None
    ) -> urllib.request.Request:
        request = urllib.request.Request(self.base + path, method=method, headers=headers or {})
        if body is not None:
            request.data = json.dumps(body).encode()
            request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        return request

    def call(self, method: str, path: str = "", body: Any = None) -> tuple[int, Any]:
        """(status, JSON answer); an error status answers its problem document.

        A 503 or 429 wrote nothing: it is sent again after its Retry-After. A request that got
        no answer is sent again too: a read does nothing, and a move or a seat goes under the
        same Idempotency-Key on every try, so the server answers one it already made with its
        first answer (the seat's token included) instead of making it twice."""
        headers = {"Idempotency-Key": secrets.token_hex(16)} if method == "POST" else {}
        attempt = 0
        while True:
            attempt += 1
            try:
                request = self.request(method, path, body, headers)
                with urllib.request.urlopen(request, timeout=30) as answer:
                    return answer.status, json.load(answer)
            except urllib.error.HTTPError as error:
                if error.code not in (429, 503) or attempt == ATTEMPTS:
                    return error.code, json.load(error)
                wait = float(error.headers.get("Retry-After") or 2 ** (attempt - 1))
            except OSError as error:  # no answer: the connection broke or timed out
                if attempt == ATTEMPTS:
                    raise
                print(f"{method} {path or '/'}: no answer ({error}); sending it again", flush=True)
                wait = 2 ** (attempt - 1)
            time.sleep(min(wait, LONGEST_WAIT))

    def events(self) -> Iterator[dict[str, Any]]:
        """Every event of the table once, in order, as this seat may see it, until the game ends.

        A Server-Sent Events client: `id:` is remembered and sent back as `Last-Event-ID` when
        the stream ends or breaks, after the `retry:` delay the server asked for.
        """
        last_id, retry, failures = "", 1.0, 0
        silence = FIRST_SILENCE
        while True:
            wait = retry
            headers = {"Accept": "text/event-stream"}
            if last_id:
                headers["Last-Event-ID"] = last_id
            try:
                with urllib.request.urlopen(
                    self.request("GET", "/stream", headers=headers), timeout=silence
                ) as stream:
                    # The server comments every Stream-Keepalive seconds: a connection silent
                    # for three of them is dead. urllib fixes a connection's timeout when it
                    # opens, so the next connection waits that long.
                    keepalive = float(stream.headers.get("Stream-Keepalive") or 0)
                    if keepalive > 0:
                        silence = KEEPALIVES_MISSED * keepalive + 1
                    data: list[str] = []
                    for raw in stream:
                        line = raw.decode().rstrip("\r\n")
                        if not line:  # a blank line ends an event
                            if data:
                                event: dict[str, Any] = json.loads("\n".join(data))
                                yield event
                                if event["type"] == FINISHED:
                                    return
                            data = []
                            continue
                        field, _, value = line.partition(":")
                        value = value.removeprefix(" ")
                        if field == "data":
                            data.append(value)
                        elif field == "id" and "\0" not in value:
                            last_id = value
                        elif field == "retry" and value.isdigit():
                            retry = int(value) / 1000
                        # "" (a comment: keep-alive) and "event" (the type, also in data): skip
                failures = 0
            except urllib.error.HTTPError as error:
                if error.code not in (429, 503):  # an outage, too many streams: try again
                    raise
                failures += 1
                wait = float(error.headers.get("Retry-After") or retry * 2**failures)
            except OSError as error:  # the connection broke or timed out: resume
                print(
                    f"stream interrupted ({error}); resuming after event {last_id or 0}", flush=True
                )
                failures += 1
                wait = retry * 2**failures
            time.sleep(min(wait, LONGEST_WAIT))


def take_turn(client: Client, legal: dict[str, Any] | None) -> int:
    """Move while the seat has legal moves (its turn, or a chance to act out of turn, like a
    Wobble toss-in, which only its own moves tell it), starting from `legal`, those the stream
    brought (None: read them); the version at which it had none.

    A move's answer carries the table as this seat sees it and its legal moves after the move,
    so the bot plays on from it."""
    status, view = 200, None
    if legal is None:
        status, legal = client.call("GET", "/moves")
    while True:
        if status != 200:
            raise SystemExit(f"cannot read the legal moves: {status} {legal}")
        if not legal["moves"]:
            return int(legal["version"])
        if view is None:
            view = client.call("GET")[1]  # the table as this seat sees it
        move = choose(view, legal["moves"])
        body = {"move": move, "expected_version": legal["version"]}
        status, answer = client.call("POST", "/moves", body)
        if status == 200:
            print(f"v{legal['version']}: played {json.dumps(move)}", flush=True)
            legal, view = answer["moves"], answer["table"]
        elif status == 409:  # the table moved on after we read it (stale-version): read again
            status, legal = client.call("GET", "/moves")
            view = None
        else:
            raise SystemExit(f"move refused: {status} {answer}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="http://127.0.0.1:8000", help="Spieltisch's URL")
    parser.add_argument("--table", required=True, help="the table's id")
    seat = parser.add_mutually_exclusive_group()
    seat.add_argument("--name", default="http bot", help="the name to sit down under")
    seat.add_argument("--token", help="the token of a seat taken already")
    args = parser.parse_args(argv)

    client = Client(args.server, args.table, args.token)
    if client.token is None:
        status, taken = client.call("POST", "/seats", {"name": args.name})
        if status != 201:
            raise SystemExit(f"cannot take a seat: {status} {taken}")
        client.token = taken["token"]
        print(
            f"seated at table {args.table}, seat {taken['seat']} (token {client.token})", flush=True
        )
    seen = 0  # the latest version we played to: an older frame's moves are out of date
    for event in client.events():
        if event["type"] == FINISHED:
            result = event["data"]["result"]
            print(f"game over: winners {result['winners']}, scores {result['scores']}", flush=True)
            return 0
        if event["type"] == REWOUND:  # the table stands before what we saw: go on from there
            seen = take_turn(client, None)
        elif "moves" in event and event["seq"] > seen:  # the latest event, one not seen yet
            seen = take_turn(client, event["moves"])
    return 1  # unreachable: the stream ends with the finish


if __name__ == "__main__":
    raise SystemExit(main())
