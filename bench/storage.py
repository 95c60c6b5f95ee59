"""What a finished game keeps in Redis: bytes per game, for each game Spieltisch hosts.

Plays one all-bot game of each game to its end (random bots, in this process, on the scratch
database), then adds up Redis's own `MEMORY USAGE` of every key the table left (`game:{id}:*`:
its event stream and seed; a game with people also keeps idempotency receipts, which expire).

    .venv/bin/python bench/storage.py [--players 4] [--redis-url URL] [--smoke]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis

from bench.common import parser, print_table, scratch_redis
from bootstrap import Services, build
from events.envelope import START
from service.config import Config
from service.tables import BotSeat
from workers.turns import bot_queue
from workers.worker import BotWorker


def finished_game(service: Services, game: str, players: int) -> str:
    """The id of an all-bot game of `game` played to its end."""
    bots = [BotSeat(seat, "random") for seat in range(players)]
    table_id = str(service.commands.create(game, players, {}, None, bots).body["id"])
    connection = service.redis
    worker = BotWorker([bot_queue(connection)], connection=connection, play=service.play)
    worker.work(burst=True, with_scheduler=False, logging_level="WARNING")
    if service.repository.load(table_id).table.result is None:
        raise SystemExit(f"the {game} game did not finish")
    return table_id


def kept(connection: redis.Redis, table_id: str) -> tuple[int, int, int]:
    """(keys kept for ever, their bytes, bytes of keys that expire) of the table, by Redis's
    own count; the expiring ones are the bot turns' claims, gone within seconds."""
    forever = expiring = keys = 0
    for key in connection.scan_iter(match=f"game:{{{table_id}}}:*"):
        used = cast(int | None, connection.memory_usage(key)) or 0
        if cast(int, connection.ttl(key)) < 0:
            keys += 1
            forever += used
        else:
            expiring += used
    return keys, forever, expiring


def main() -> None:
    arguments = parser(__doc__.splitlines()[0] if __doc__ else "")
    arguments.add_argument("--players", type=int, default=4, help="seats, within each game's")
    args = arguments.parse_args()
    with scratch_redis(args.redis_url) as connection:
        service = build(connection, Config(bot_delay_seconds=0, reaction_seconds=0))
        games = service.repository.tables.registry.games()
        rows = []
        for game in games[:1] if args.smoke else games:
            info = game.rules.info
            players = min(max(args.players, info.min_players), info.max_players)
            table_id = finished_game(service, info.id, players)
            events = len(service.repository.store.read(table_id, START))
            keys, forever, expiring = kept(connection, table_id)
            rows.append(
                [
                    *(info.id, str(players), str(events), str(keys)),
                    *(f"{forever / 1024:.1f}", f"{expiring / 1024:.1f}"),
                ]
            )
    print("A finished all-bot game (random bots) in Redis: MEMORY USAGE of its keys")
    print_table(["game", "seats", "events", "keys kept", "KiB kept", "KiB expiring"], rows)


if __name__ == "__main__":
    main()
