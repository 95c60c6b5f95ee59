"""Conditional single-event appends per second through `EventStore.append` vs plain XADD, and
Redis bytes per stored event before and after compact events (envelope v2) and snapshots.

Ours: one event per call, each appended at the position the previous call returned (so every
call runs the Lua script's version and head check), cycling over a few games. Reference: redis-py
`XADD` with an automatic id, one call at a time, of entries the same size as ours (the envelope
and its hash), on a client with the same connection settings, in the same run.

Bytes: the golden game of each game (tests/golden) is stored command by command through
`TableRepository.commit`, as the service stores it, once in envelope v1 without snapshots (as
before issue 19) and once in envelope v2 with snapshots; each person's move carries an
idempotency key, as the web client sends one. Redis's own `MEMORY USAGE` of each game's stream,
receipts and snapshots, per event; target: at most half of before.

    .venv/bin/python bench/store.py [--appends 20000] [--games 4] [--smoke]
"""

from __future__ import annotations

import json
import statistics
import sys
import time
import uuid
from itertools import groupby
from pathlib import Path
from typing import cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis

from bench.common import parser, print_table, ratio, scratch_redis, verdict
from domain.registry import default_registry
from domain.rules import Event
from domain.table import MOVE_SUBSTITUTED, Tables
from events.envelope import START, Position, Recorded, canonical_json, seal
from events.repository import Loaded, TableCache, TableRepository, stamped
from events.snapshots import SnapshotStore
from events.store import Appended, EventStore
from service.audit import default_upcasters

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


BYTES_TARGET = 0.5
"""Redis bytes per stored event after compact events and snapshots, as a share of before."""
GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "golden"
PLAYED = ["pig10", "krasskariert", "rollnbump", "wobble-rules2", "krumme10-rules2"]


def stored_bytes(client: redis.Redis, envelope: int) -> tuple[int, int]:
    """Events and the Redis bytes of their streams, receipts and snapshots (v2 only), of the
    golden games stored as the service stores them, in `envelope`."""
    registry = default_registry()
    tables = Tables(registry)
    snapshots = SnapshotStore(client, registry) if envelope > 1 else None
    store = EventStore(client, default_upcasters(registry))
    repository = TableRepository(store, tables, TableCache(8), snapshots)
    events = 0
    for name in PLAYED:
        game_id = f"bytes-v{envelope}-{name}"
        log = json.loads((GOLDEN / f"{name}.json").read_text())["events"]
        recorded = [store.upcast(Recorded.from_json(event)) for event in log]
        loaded: Loaded | None = None
        for _, command in groupby(recorded, key=lambda record: record.meta["command_id"]):
            batch = list(command)
            after = loaded.position if loaded else START
            records = seal([r.event for r in batch], batch[0].meta, after, envelope)
            table = tables.fold([r.event for r in batch], loaded.table if loaded else None)
            assert table is not None
            loaded = Loaded(stamped(table, records[-1]), records[-1].position)
            person = batch[0].meta["command"]["type"] == "MakeMove" and not any(
                r.type == MOVE_SUBSTITUTED for r in batch
            )
            key = f"{batch[0].meta['seat']}:{uuid.uuid4()}" if person else None
            receipt = f"{'0' * 64} {records[0].seq} {records[-1].seq}" if person else ""
            repository.commit(game_id, records, loaded, idempotency=key, receipt=receipt)
        events += len(recorded)
    keys = cast(list[bytes], client.keys(f"game:{{bytes-v{envelope}-*"))
    used = (cast(int | None, client.memory_usage(key, samples=0)) or 0 for key in keys)
    return events, sum(used)


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

    with scratch_redis(args.redis_url) as client:
        events, before = stored_bytes(client, 1)
        _, after = stored_bytes(client, 2)
    share = ratio(after, before)
    print(
        f"\nRedis bytes per stored event (stream + receipts + snapshots, MEMORY USAGE), the "
        f"{len(PLAYED)} golden games, {events} events:"
    )
    print_table(
        ["figure", "v2 + snapshots", "v1 (before)", "ratio", "target", ""],
        [
            [
                "bytes/event",
                f"{after / events:.0f}",
                f"{before / events:.0f}",
                f"{share:.2f}",
                f"<= {BYTES_TARGET:.2f}",
                verdict(share <= BYTES_TARGET),
            ]
        ],
    )


if __name__ == "__main__":
    main()
