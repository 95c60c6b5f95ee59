"""Write the golden logs: one finished game of each game, exported as `spieltisch verify` reads it.

Each game is played through the real table service (on fakeredis): a player takes seat 0 with
some entropy of their own, heuristic bots play the other seats, and seat 0 plays what the
heuristic would. The bundles are signed with the golden key, a test key derived from a public
phrase (never a service's), whose public key is written beside them:

    .venv/bin/python scripts/golden.py tests/golden

`tests/test_golden.py` verifies the files forever; rewrite them only on purpose (a new bundle
format), never to make a failing verification pass. When a game's rules version is raised, its
old file stays (it must be refused by name) and a game under the new rules is added beside it as
`<game>-rules<version>.json` (copied from a run of this script into a scratch folder).

`pig10-envelope3.json` is this script's Pig 10 after envelope 3 (seat 0's token hash committed
to, not exported; `events.envelope.SEALED`), copied from a run into a scratch folder.

`legacy-pig10.json` is a game played by the code before generators were named (commit 3f26df4:
`GameCreated` v1, dealt with `python-random`); its stored events, a JSON list, were bundled with

    .venv/bin/python scripts/golden.py tests/golden --legacy events.json
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from random import Random

import fakeredis

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bootstrap
from domain.catalogue import default_catalogue
from domain.registry import default_registry
from domain.rules import JSON
from domain.table import Status
from events.envelope import Recorded
from service.audit import default_upcasters
from service.bundle import build
from service.config import Config
from service.signing import Signer, encode_key
from service.tables import BotSeat
from service.views import SPECTATOR

GOLDEN_KEY = hashlib.sha256(b"spieltisch golden logs: a test key, never a service's").hexdigest()
SEATS = {"pig10": 2, "krumme10": 2, "krasskariert": 3, "wobble": 2, "rollnbump": 2}
OPTIONS: dict[str, dict[str, JSON]] = {"wobble": {"score_limit": 150}}
"""A shorter game of Wobble than its default, to keep its file small."""


def play(game: str) -> dict[str, JSON]:
    """One finished game of `game`, exported."""
    redis = fakeredis.FakeRedis()
    registry = default_registry()
    bots = default_catalogue(registry, time.perf_counter)
    start = datetime(2026, 11, 24, tzinfo=UTC)
    ticks = itertools.count()
    service = bootstrap.build(
        redis,
        Config(),
        registry=registry,
        signer=Signer.from_text(GOLDEN_KEY),
        clock=lambda: start + timedelta(seconds=next(ticks)),
        new_seed=lambda: hashlib.sha256(f"golden seed of {game}".encode()).digest(),
        new_token=lambda: f"golden token of {game}",
        new_id=lambda: f"golden-{game}",
    )
    seated = [BotSeat(seat, "heuristic") for seat in range(1, SEATS[game])]
    options = OPTIONS.get(game, {})
    table_id = str(
        service.commands.create(game, SEATS[game], options, f"{game} creator", seated).body["id"]
    )
    service.commands.take_seat(table_id, SPECTATOR, 0, "Ada", "Ada's dice")
    heuristic = bots.bot("heuristic", None)
    choices = Random(game)
    while (loaded := service.repository.load(table_id)).table.status is Status.RUNNING:
        seat = service.repository.tables.to_act(loaded.table)[0]
        move = heuristic.choose(service.repository.tables.turn(loaded.table, seat), choices)
        assert service.commands.play_for(loaded, seat, move)
    return service.queries.export(table_id)


def dumps(bundle: dict[str, JSON]) -> str:
    """The bundle as JSON with one event a line, so that a diff shows which events changed."""
    head = {key: value for key, value in bundle.items() if key != "events"}
    lines = [f" {json.dumps(key)}: {json.dumps(value)}," for key, value in head.items()]
    events = ",\n".join(f"  {json.dumps(event, ensure_ascii=False)}" for event in bundle["events"])
    return "{\n" + "\n".join(lines) + '\n "events": [\n' + events + "\n ]\n}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="where to write <game>.json and key.pub")
    parser.add_argument("--legacy", type=Path, help="bundle these stored events of an old game")
    args = parser.parse_args()
    folder: Path = args.folder
    folder.mkdir(parents=True, exist_ok=True)
    if args.legacy is not None:
        records = [Recorded.from_json(event) for event in json.loads(args.legacy.read_text())]
        bundle = build(records, default_upcasters().upcast, Signer.from_text(GOLDEN_KEY))
        (folder / f"legacy-{bundle['game']}.json").write_text(dumps(bundle))
        return
    public = encode_key(Signer.from_text(GOLDEN_KEY).public_key)
    (folder / "key.pub").write_text(public + "\n")
    for game in SEATS:
        bundle = play(game)
        (folder / f"{game}.json").write_text(dumps(bundle))
        print(f"{game}: {bundle['version']} events")


if __name__ == "__main__":
    main()
