"""The table aggregate and the audit, on the pure domain and the fakeredis-backed service."""

from __future__ import annotations

import copy
from dataclasses import replace
from itertools import groupby
from random import Random
from typing import Any

import fakeredis
import pytest

from bootstrap import build
from domain.dice import commitment, rng_at
from domain.game import Game
from domain.registry import GameRegistry, UnknownGame, default_registry
from domain.rules import OptionError
from domain.table import (
    CreateGame,
    GameNotRunning,
    MakeMove,
    NotYourTurn,
    PlayerCountError,
    SeatUnavailable,
    Status,
    Table,
    Tables,
    TakeSeat,
    UnsupportedVersion,
    command_from_json,
    command_to_json,
)
from events.envelope import START, Recorded, seal
from service.audit import Finding, audit
from service.config import Config
from service.views import SPECTATOR
from tests.bounds import bounded

TABLES = Tables(default_registry())
SEED = bytes(range(32))


def opened(seats: int = 2, **options: Any) -> Table:
    command = CreateGame("t1", "pig10", seats, options, commitment(SEED))
    table = TABLES.fold(TABLES.decide(None, command, SEED))
    assert table is not None
    return table


def seated(table: Table, *names: str) -> Table:
    for name in names:
        command = TakeSeat(None, name, f"hash of {name}")
        folded = TABLES.fold(TABLES.decide(table, command, SEED), table)
        assert folded is not None
        table = folded
    return table


def test_a_table_opens_fills_and_starts() -> None:
    table = opened(3)
    assert (table.status, table.version, TABLES.to_act(table)) == (Status.OPEN, 1, [])
    table = seated(table, "a", "b")
    assert table.status is Status.OPEN
    table = seated(table, "c")
    assert table.status is Status.RUNNING
    assert len(TABLES.to_act(table)) == 1
    assert table.seat_of("hash of b") == 1
    assert table.seat_of("nobody") is None


@pytest.mark.parametrize("seats", [0, 1, 9])
def test_player_counts_outside_the_game_are_refused(seats: int) -> None:
    with pytest.raises(PlayerCountError, match="2 to 8"):
        opened(seats)


def test_unknown_games_and_options_are_refused() -> None:
    with pytest.raises(UnknownGame):
        TABLES.decide(None, CreateGame("t", "chess", 2, {}, "c"), SEED)
    with pytest.raises(OptionError, match="not an option"):
        opened(2, jokers=True)
    with pytest.raises(OptionError, match="below 2"):
        opened(2, first_seat=2)


def test_seats_cannot_be_taken_twice_or_beyond_the_table() -> None:
    table = seated(opened(3), "a")
    for seat in (0, 3, -1):
        with pytest.raises(SeatUnavailable):
            TABLES.decide(table, TakeSeat(seat, "x", "hash of x"), SEED)
    with pytest.raises(SeatUnavailable, match="token"):
        TABLES.decide(table, TakeSeat(None, "again", "hash of a"), SEED)
    full = seated(table, "b", "c")
    with pytest.raises(SeatUnavailable):
        TABLES.decide(full, TakeSeat(None, "d", "hash of d"), SEED)


def test_moves_need_a_running_game_and_the_turn() -> None:
    table = seated(opened(2, first_seat=1), "a")
    with pytest.raises(GameNotRunning):
        TABLES.decide(table, MakeMove(0, {"card": 1, "mode": "add"}), SEED)
    table = seated(table, "b")
    with pytest.raises(NotYourTurn):
        TABLES.decide(table, MakeMove(0, TABLES.legal_moves(table, 1)[0]), SEED)
    assert TABLES.legal_moves(table, 0) == []


def test_a_running_table_plays_on_under_its_rules_version_after_a_release_raises_it() -> None:
    """A release that raises pig10's rules version to 2 and keeps version 1 decides a table
    created under version 1 as before; one that drops version 1 refuses it by name."""
    table = seated(opened(2, first_seat=1), "a", "b")
    move = MakeMove(1, TABLES.legal_moves(table, 1)[0])
    pig10 = TABLES.registry["pig10"]
    raised = copy.copy(pig10)
    raised.info = replace(pig10.info, rules_version=2)
    kept = Tables(GameRegistry([Game(raised, former_rules=(pig10,))]))
    assert (kept.rules(table), TABLES.rules(table)) == (pig10, pig10)
    assert kept.decide(table, move, SEED) == TABLES.decide(table, move, SEED)
    with pytest.raises(UnsupportedVersion, match="created under rules version 1; this code dec"):
        Tables(GameRegistry([Game(raised)])).decide(table, move, SEED)
    new = CreateGame("t2", "pig10", 2, {}, commitment(SEED))
    assert kept.decide(None, new, SEED)[0].data["rules_version"] == 2


def test_wobble_decides_its_rules_versions_2_and_3_and_refuses_1_by_name() -> None:
    def create(version: int) -> CreateGame:
        return CreateGame("t", "wobble", 2, {}, commitment(SEED), rules_version=version)

    for version in (2, 3):
        table = TABLES.fold(TABLES.decide(None, create(version), SEED))
        assert table is not None
        assert TABLES.rules(table).info.rules_version == version
    with pytest.raises(UnsupportedVersion, match="this code decides versions 2 and 3 only"):
        TABLES.decide(None, create(1), SEED)


def test_the_deal_uses_the_seed_the_entropy_and_the_position() -> None:
    table = opened(2)
    plain = TABLES.decide(seated(table, "a"), TakeSeat(None, "b", "hash of b"), SEED)
    again = TABLES.decide(seated(table, "a"), TakeSeat(None, "b", "hash of b"), SEED)
    mixed = TABLES.decide(seated(table, "a"), TakeSeat(None, "b", "hash of b", "dice"), SEED)
    assert plain == again
    assert plain[1:] != mixed[1:]
    rng = rng_at(SEED, ("dice",), 3)
    expected = TABLES.registry["pig10"].setup(2, table.options, rng)
    assert [e.data for e in mixed[1:]] == [e.data for e in expected]


def test_the_last_move_finishes_the_game_and_reveals_the_seed() -> None:
    table = seated(opened(2), "a", "b")
    choices = Random(3)
    for _ in bounded("the game did not end"):
        if table.status is not Status.RUNNING:
            break
        seat = TABLES.to_act(table)[0]
        events = TABLES.decide(
            table, MakeMove(seat, choices.choice(TABLES.legal_moves(table, seat))), SEED
        )
        folded = TABLES.fold(events, table)
        assert folded is not None
        table = folded
    assert events[-1].type == "table.GameFinished"
    assert events[-1].data["seed"] == SEED.hex()
    assert table.result == events[-1].data["result"]
    with pytest.raises(GameNotRunning):
        TABLES.decide(table, MakeMove(0, {"card": 1, "mode": "add"}), SEED)


def test_history_passes_every_version_of_one_fold_and_scores_start_with_the_game() -> None:
    table = seated(opened(2), "a")
    last = TakeSeat(None, "b", "hash of b")
    events = TABLES.decide(table, last, SEED)
    versions = list(TABLES.history(events, table))
    assert [past.version for past in versions] == list(range(3, 3 + len(events)))
    assert versions[-1] == TABLES.fold(events, table)
    assert TABLES.fold([], table) is table
    assert TABLES.scores(table) is None, "an open table has no game to score yet"
    assert [TABLES.scores(past) for past in versions] == [[0, 0]] * len(events)


@pytest.mark.parametrize(
    "command",
    [
        CreateGame("t", "pig10", 2, {"first_seat": None}, "c", "e"),
        TakeSeat(None, "name", "hash", None),
        MakeMove(1, {"card": 5, "mode": "subtract"}),
    ],
)
def test_commands_round_trip_through_json(command: Any) -> None:
    assert command_from_json(command_to_json(command)) == command


def finished_log() -> list[Recorded]:
    service = build(fakeredis.FakeRedis(), Config())
    table_id = str(service.commands.create("pig10", 2, {}, None).body["id"])
    tokens = [
        str(service.commands.take_seat(table_id, SPECTATOR, None, name, None).shown.body["token"])
        for name in "ab"
    ]
    for _ in bounded("the game did not end"):
        if (table := service.repository.load(table_id).table).status is not Status.RUNNING:
            break
        seat = TABLES.to_act(table)[0]
        caller = service.queries.caller(table_id, tokens[seat])
        move = service.queries.legal_moves(table_id, caller).body["moves"]
        assert isinstance(move, list)
        service.commands.move(table_id, caller, move[0], table.version, None)
    return service.repository.store.read(table_id, verify=False, upcast=False)


def rechained(records: list[Recorded]) -> list[Recorded]:
    """The same events with numbering and hashes made consistent again: a careful forger."""
    out: list[Recorded] = []
    for _, command in groupby(records, key=lambda record: record.meta["command_id"]):
        events = list(command)
        out += seal(
            [r.public_event for r in events], events[0].meta, out[-1].position if out else START
        )
    return out


def test_the_audit_passes_an_honest_log() -> None:
    report = audit(TABLES, finished_log(), lambda record: record)
    assert report.ok, report.findings
    assert report.commands > 80


def test_the_audit_catches_a_forged_draw_even_with_a_valid_chain() -> None:
    records = finished_log()
    index = next(i for i, r in enumerate(records) if r.type == "pig10.CardDrawn")
    drawn = records[index]
    forged_card = (drawn.data["card"] + 1) % 11
    records[index] = replace(drawn, data={**drawn.data, "card": forged_card})
    forged = rechained(records)
    report = audit(TABLES, forged, lambda record: record)
    command_start = min(r.seq for r in records if r.meta == drawn.meta)
    assert report.findings == (
        Finding("replay", f"event {command_start}: deciding its command again gives other events"),
    )


def test_the_audit_catches_a_seed_that_does_not_match_its_commitment() -> None:
    records = finished_log()
    last = records[-1]
    records[-1] = replace(last, data={**last.data, "seed": "00" * 32})
    report = audit(TABLES, rechained(records), lambda record: record)
    assert report.findings[0].check == "seed"
    assert not report.ok
