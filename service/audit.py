"""The audit of a finished game: anyone can check the log with the revealed seed."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from itertools import groupby
from typing import Any

from domain.dice import commitment
from domain.rules import Event, OptionError, RuleError
from domain.table import GAME_FINISHED, Table, TableError, Tables, command_from_json
from events.envelope import ChainBroken, Recorded, canonical_json, verify_chain


def _comparable(events: Sequence[Event]) -> list[Any]:
    return [json.loads(canonical_json([e.type, e.v, e.data])) for e in events]


def audit(
    tables: Tables, records: Sequence[Recorded], upcast: Callable[[Recorded], Recorded]
) -> dict[str, Any]:
    """Check the chain, the seed against its commitment, and every recorded command.

    `records` are the stored form the chain was computed over; `upcast` brings each to the
    schema version the rules decide in today.

    Each command (the events one command appended, sharing a `command_id`) is decided again on
    the state before it with the revealed seed; its events must equal the recorded ones.
    """
    problems: list[str] = []
    try:
        verify_chain(records)
        chain_ok = True
    except ChainBroken as error:
        chain_ok = False
        problems.append(str(error))

    finished = [r for r in records if r.type == GAME_FINISHED]
    seed = bytes.fromhex(finished[-1].data["seed"]) if finished else None
    created = records[0].data if records else {}
    seed_ok = seed is not None and commitment(seed) == created.get("commitment")
    if not seed_ok:
        problems.append("the revealed seed does not match the commitment in GameCreated")

    commands, replay_problems = 0, []
    table: Table | None = None
    for _, group in groupby(records, key=lambda r: r.meta.get("command_id")):
        batch = list(group)
        commands += 1
        recorded = [upcast(r).event for r in batch]
        try:
            command = command_from_json(batch[0].meta["command"])
            decided = tables.decide(table, command, seed or b"")
        except (KeyError, TypeError, TableError, RuleError, OptionError) as error:
            replay_problems.append(
                f"event {batch[0].seq}: its command cannot be decided again: {error}"
            )
            break
        if _comparable(decided) != _comparable(recorded):
            replay_problems.append(
                f"event {batch[0].seq}: deciding its command again gives other events"
            )
            break
        table = tables.fold(recorded, table)

    problems += replay_problems
    return {
        "ok": not problems,
        "chain_ok": chain_ok,
        "seed_ok": seed_ok,
        "replay_ok": not replay_problems,
        "events": len(records),
        "commands": commands,
        "seed": finished[-1].data["seed"] if finished else None,
        "problems": problems,
    }
