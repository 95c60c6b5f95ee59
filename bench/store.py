"""Conditional single-event appends per second through `EventStore.append` vs plain XADD.

Ours: one event per call, each appended at the position the previous call returned (so every
call runs the Lua script's version and head check), cycling over a few games. Reference: redis-py
`XADD` with an automatic id, one call at a time, of entries the same size as ours (the envelope
and its hash), on a client with the same connection settings, in the same run.

    .venv/bin/python bench/store.py [--appends 20000] [--games 4] [--smoke]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis

from bench.common import parser, print_table, ratio, scratch_redis, verdict
from domain.rules import Event
from events.envelope import START, Position, canonical_json, seal
from events.store import Appended, EventStore

TARGET = 0.5
"""Our appends per second should be at least this share of plain XADDs per second."""
ROUNDS = 5
"""Both sides run in alternating rounds, so a drift in the machine's speed hits both alike."""
META = {
    "command_id": "00000000-0000-4000-8000-000000000000",
    "command": {"type": "MakeMove", "args": {"seat": 0, "move": {"card": 7, "mode": "add"}}},
    "seat": 0,
    "time": "2025-01-01T00:00:00+00:00",
}
"""Metadata shaped like the table service's."""


def event(number: int) -> Event:
    """A Pig 10 sized event."""
    return Event(
        "pig10.CardPlayed", {"seat": number % 2, "card": number % 11, "mode": "add", "value": 7}
    )


class Ours:
    """Conditional appends through the event store, one event each, over `games` games."""

    def __init__(self, client: redis.Redis, games: int) -> None:
        self.store = EventStore(client)
        self.games = [f"bench-store-{n}" for n in range(games)]
        self.positions: dict[str, Position] = dict.fromkeys(self.games, START)
        self.count = 0

    def run(self, appends: int) -> float:
        """Seconds taken by `appends` appends."""
        store, games, positions = self.store, self.games, self.positions
        began = time.perf_counter()
        for _ in range(appends):
            game = games[self.count % len(games)]
            outcome = store.append(game, positions[game], [event(self.count)], META)
            if not isinstance(outcome, Appended):
                raise RuntimeError(f"append did not write: {outcome}")
            positions[game] = outcome.position
            self.count += 1
        return time.perf_counter() - began


class Plain:
    """Plain XADDs of same-size entries, one at a time, over as many streams."""

    def __init__(self, client: redis.Redis, games: int, envelope: bytes, digest: str) -> None:
        self.client = client
        self.keys = [f"bench-plain:{{{n}}}" for n in range(games)]
        self.fields = {"e": envelope, "h": digest}
        self.count = 0

    def run(self, appends: int) -> float:
        client, keys, fields = self.client, self.keys, self.fields
        began = time.perf_counter()
        for _ in range(appends):
            client.xadd(keys[self.count % len(keys)], fields)  # type: ignore[arg-type]
            self.count += 1
        return time.perf_counter() - began


def sample_entry() -> tuple[bytes, str]:
    """The stream fields of one of our entries: the envelope JSON and its hash."""
    record = seal([event(12345)], META, Position(12344, "f" * 64))[0]
    return canonical_json(record.to_json()), record.hash


def main() -> None:
    options = parser(__doc__.splitlines()[0] if __doc__ else "")
    options.add_argument(
        "--appends", type=int, default=20_000, help="timed appends per side (default 20000)"
    )
    options.add_argument("--games", type=int, default=4, help="games (streams) to cycle over")
    args = options.parse_args()
    appends: int = 300 if args.smoke else args.appends
    warmup = max(appends // 20, 10)
    per_round = [appends // ROUNDS + (i < appends % ROUNDS) for i in range(ROUNDS)]

    with (
        scratch_redis(args.redis_url) as ours_client,
        scratch_redis(args.redis_url) as plain_client,
    ):
        envelope, digest = sample_entry()
        ours = Ours(ours_client, args.games)
        plain = Plain(plain_client, args.games, envelope, digest)
        ours.run(warmup)
        plain.run(warmup)
        ours_times, plain_times = [], []
        for count in per_round:
            ours_times.append(ours.run(count))
            plain_times.append(plain.run(count))

    ours_rate = appends / sum(ours_times)
    plain_rate = appends / sum(plain_times)
    share = ratio(ours_rate, plain_rate)
    spread = [
        ratio(c / o, c / p) for c, o, p in zip(per_round, ours_times, plain_times, strict=True)
    ]
    print(
        f"Event store appends: {appends} single-event conditional appends over {args.games} "
        f"games vs {appends} plain XADDs, {len(envelope) + len(digest)}-byte entries "
        f"({len(envelope)} envelope + {len(digest)} hash), {ROUNDS} alternating rounds, "
        f"Redis {args.redis_url}"
    )
    print()
    print_table(
        ["figure", "ours (EventStore.append)", "plain XADD", "ratio", "target", ""],
        [
            [
                "appends/s",
                f"{ours_rate:,.0f}",
                f"{plain_rate:,.0f}",
                f"{share:.2f}",
                f">= {TARGET:.2f}",
                verdict(share >= TARGET),
            ],
            [
                "µs per append",
                f"{1e6 / ours_rate:.1f}",
                f"{1e6 / plain_rate:.1f}",
                f"{ratio(plain_rate, ours_rate):.2f}",
                "",
                "",
            ],
        ],
    )
    print(
        f"\nratio per round: {', '.join(f'{r:.2f}' for r in spread)} "
        f"(median {statistics.median(spread):.2f})"
    )


if __name__ == "__main__":
    main()
