"""The audit of a finished game: anyone can check the log with the revealed seed.

One implementation serves the server's `GET .../audit` and the offline `spieltisch verify`: it
needs the pure domain and the stored events only, no Redis, no Flask.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import groupby
from typing import Any

from domain.chance import UnknownChance
from domain.dice import commitment
from domain.registry import GameRegistry, UnknownGame, default_registry
from domain.rules import JSON, Event, OptionError, RuleError
from domain.table import (
    GAME_CREATED,
    GAME_FINISHED,
    UPCASTS,
    CreateGame,
    Table,
    TableError,
    Tables,
    command_from_json,
)
from events.envelope import ChainBroken, Recorded, canonical_json, verify_chain
from events.upcasting import Upcasters

Upcast = Callable[[Recorded], Recorded]
CHECKS = ("chain", "seed", "versions", "replay")
"""What the audit checks, in the order it reports them."""


def default_upcasters(registry: GameRegistry | None = None) -> Upcasters:
    """Every schema step of the events Spieltisch has ever written: the table's and each
    game's in `registry` (default: every game Spieltisch ships)."""
    return Upcasters.of([*UPCASTS, *(registry or default_registry()).upcasts()])


@dataclass(frozen=True)
class Finding:
    """One thing that does not hold: which `check` failed and why."""

    check: str
    detail: str

    def __str__(self) -> str:
        return self.detail


@dataclass(frozen=True)
class Audit:
    """What the audit found: nothing, when the game holds."""

    events: int
    commands: int
    seed: str | None
    chance: str | None
    rules_version: int | None
    findings: tuple[Finding, ...]

    @property
    def ok(self) -> bool:
        return not self.findings

    def holds(self, check: str) -> bool:
        return all(finding.check != check for finding in self.findings)

    def to_json(self) -> dict[str, JSON]:
        return {
            "ok": self.ok,
            **{f"{check}_ok": self.holds(check) for check in CHECKS},
            "events": self.events,
            "commands": self.commands,
            "seed": self.seed,
            "chance": self.chance,
            "rules_version": self.rules_version,
            "problems": [str(finding) for finding in self.findings],
        }


def _comparable(events: Sequence[Event]) -> list[Any]:
    return [json.loads(canonical_json([e.type, e.v, e.data])) for e in events]


def audit(
    tables: Tables, records: Sequence[Recorded], upcast: Upcast, seed: bytes | None = None
) -> Audit:
    """Check the chain, the seed against its commitment, the versions, and every command.

    `records` are the stored form the chain was computed over; `upcast` brings each to the
    schema version the rules decide in today. `seed` is the seed claimed for the game (an export
    bundle's); it must be the one `GameFinished` reveals. None: that one.

    Each command (the events one command appended, sharing a `command_id`) is decided again on
    the state before it with the revealed seed; its events must equal the recorded ones.
    """
    findings: list[Finding] = []
    try:
        verify_chain(records)
    except ChainBroken as error:
        findings.append(Finding("chain", str(error)))

    finished = [r for r in records if r.type == GAME_FINISHED]
    revealed = _revealed(finished[-1]) if finished else None
    created = upcast(records[0]).data if records and records[0].type == GAME_CREATED else {}
    if not finished:
        findings.append(Finding("seed", "the log has no GameFinished: its seed is not revealed"))
    elif revealed is None:
        findings.append(Finding("seed", "GameFinished reveals no seed in hexadecimal"))
    elif seed is not None and seed != revealed:
        findings.append(Finding("seed", "the seed given is not the one GameFinished reveals"))
    elif commitment(revealed) != created.get("commitment"):
        findings.append(
            Finding("seed", "the revealed seed does not match the commitment in GameCreated")
        )

    try:
        tables.check_versions(created["game"], created["chance"], created["rules_version"])
        versions_ok = True
    except (UnknownGame, TableError, TypeError) as error:
        findings.append(Finding("versions", f"this code cannot decide the game: {error}"))
        versions_ok = False
    except KeyError:
        findings.append(Finding("versions", "the log does not begin with a GameCreated"))
        versions_ok = False

    commands = 0
    if versions_ok:
        commands, mismatch = _replay(tables, records, upcast, revealed or b"")
        findings += mismatch
    return Audit(
        events=len(records),
        commands=commands,
        seed=revealed.hex() if revealed is not None else None,
        chance=created.get("chance"),
        rules_version=created.get("rules_version"),
        findings=tuple(findings),
    )


def _revealed(finished: Recorded) -> bytes | None:
    """The seed `finished`, a GameFinished, reveals; None if it holds none in hex."""
    text = finished.data.get("seed")
    try:
        return bytes.fromhex(text) if isinstance(text, str) else None
    except ValueError:
        return None


def _replay(
    tables: Tables, records: Sequence[Recorded], upcast: Upcast, seed: bytes
) -> tuple[int, list[Finding]]:
    """Decide every recorded command again: how many were, and the first that differs."""
    commands = 0
    table: Table | None = None
    for _, group in groupby(records, key=lambda r: r.meta.get("command_id")):
        batch = list(group)
        commands += 1
        # As exported: a seat's private values are checked as their commitments, here as
        # offline, where the bundle holds nothing else.
        recorded = [upcast(r).public_event for r in batch]
        try:
            command = command_from_json(batch[0].meta["command"])
            if isinstance(command, CreateGame) and command.rules_version is None:
                # Created under the game's rules version of its day, which GameCreated records:
                # a later release may decide that version still, beside a newer one.
                command = replace(command, rules_version=recorded[0].data["rules_version"])
            decided = tables.decide(table, command, seed)
        except (KeyError, TypeError, TableError, RuleError, OptionError, UnknownChance) as error:
            detail = f"event {batch[0].seq}: its command cannot be decided again: {error}"
            return commands, [Finding("replay", detail)]
        if _comparable(decided) != _comparable(recorded):
            detail = f"event {batch[0].seq}: deciding its command again gives other events"
            return commands, [Finding("replay", detail)]
        table = tables.fold(recorded, table)
    return commands, []
