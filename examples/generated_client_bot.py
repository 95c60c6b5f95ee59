"""A bot written against a client generated from Spieltisch's contract (openapi.yaml).

Generate the client once (the package `spieltisch_client`, in the working directory or anywhere
on `PYTHONPATH`), then play:

    .venv/bin/pip install openapi-python-client
    .venv/bin/openapi-python-client generate --path openapi.yaml --meta none \
        --output-path spieltisch_client --config examples/openapi-python-client.yaml
    PYTHONPATH=. .venv/bin/python examples/generated_client_bot.py --game wobble

It opens a table of `--game` against the built-in `heuristic` bot in every other seat, takes
seat 0, and plays it to the end: it reads its legal moves and sends one, naming the version it
decided on; a `409 stale-version` (the table moved on meanwhile) makes it read them again. It
prints the result. `--server` is Spieltisch's URL (default http://127.0.0.1:8000).
"""

from __future__ import annotations

import argparse
import random
import time
from typing import TypeVar

from spieltisch_client import AuthenticatedClient, Client
from spieltisch_client.api.games import get_game
from spieltisch_client.api.moves import list_legal_moves, make_move
from spieltisch_client.api.seats import take_seat
from spieltisch_client.api.tables import create_table, get_table
from spieltisch_client.models import (
    BotName,
    BotSeat,
    Clock,
    CreateTableRequest,
    GameInfo,
    LegalMoves,
    MoveRequest,
    Problem,
    SeatTaken,
    Table,
    TableStatus,
    TakeSeatRequest,
)

T = TypeVar("T")
POLL_SECONDS = 0.05
"""How long to wait before reading the table again while the other seats decide."""


# ---- REPLACE THIS: your bot's strategy --------------------------------------------------------
def choose(table: Table, legal: LegalMoves) -> object:
    """The move to play: one of `legal.moves` (typed: `Pig10Move`, `WobblePlayMove`, ...),
    chosen from `table.state`, the game as the seat sees it (typed too: `Pig10State`...)."""
    return random.choice(legal.moves)


# -----------------------------------------------------------------------------------------------


def answer(parsed: T | Problem | None) -> T:
    """The answer, or the problem the service answered, raised."""
    if parsed is None or isinstance(parsed, Problem):
        raise RuntimeError(f"the service answered {parsed}")
    return parsed


def open_table(server: Client, game: str) -> str:
    """A new table of `game` whose seats but the first are the `heuristic` bot's."""
    info: GameInfo = answer(get_game.sync(game, client=server))
    bots = [BotSeat(seat=seat, bot=BotName.HEURISTIC) for seat in range(1, info.min_players)]
    # No thinking pause for the bots: they answer as fast as they decide.
    clock = Clock(bot_delay_seconds=0, reaction_seconds=0)
    request = CreateTableRequest(game=game, seats=info.min_players, bots=bots, clock=clock)
    table: Table = answer(create_table.sync(client=server, body=request))
    return str(table.id)


def play(server: str, game: str) -> Table:
    """Play seat 0 of a new table of `game` to its end; the finished table."""
    spectator = Client(base_url=server, raise_on_unexpected_status=True)
    table_id = open_table(spectator, game)
    seated: SeatTaken = answer(
        take_seat.sync(table_id, client=spectator, body=TakeSeatRequest(name="generated"))
    )
    assert isinstance(seated.token, str), "a person's seat has a token"
    seat = AuthenticatedClient(base_url=server, token=seated.token)
    while True:
        table: Table = answer(get_table.sync(table_id, client=seat))
        if table.status is not TableStatus.RUNNING:
            return table
        legal: LegalMoves = answer(list_legal_moves.sync(table_id, client=seat))
        if not legal.moves:
            time.sleep(POLL_SECONDS)  # the bots' turn
            continue
        body = MoveRequest(move=choose(table, legal), expected_version=legal.version)
        moved = make_move.sync(table_id, client=seat, body=body)
        if isinstance(moved, Problem) and moved.status == 409:
            continue  # stale-version or not-your-turn: the table moved on; decide again
        answer(moved)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--server", default="http://127.0.0.1:8000")
    parser.add_argument("--game", default="pig10")
    arguments = parser.parse_args()
    table = play(arguments.server, arguments.game)
    result = table.result
    print(f"{table.game} {table.id} {table.status.value}: {result.to_dict() if result else None}")


if __name__ == "__main__":
    main()
