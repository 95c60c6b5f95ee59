"""The golden logs: one finished game of each game (and one dealt by `python-random`, before
generators were named), exported by `scripts/golden.py`. They must verify forever, or, once a
game's rules version is raised past theirs, be refused by name: never mis-decided. A tampered
copy of each must fail, for the right reason. The command line is run as a player runs it."""

from __future__ import annotations

import base64
import copy
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from domain.game import Game
from domain.registry import GameRegistry, default_registry
from domain.table import Tables
from events.envelope import START, Recorded, seal
from service.audit import Finding
from service.bundle import build
from service.signing import Signer, decode_key
from service.verifier import verify

GOLDEN = Path(__file__).resolve().parent / "golden"
KEY_FILE = GOLDEN / "key.pub"
KEY = decode_key(KEY_FILE.read_text())
REGISTRY = default_registry()
GAMES = REGISTRY.ids()
CURRENT = ["wobble-rules3", "krumme10-rules2"]
"""Games of the games whose rules version was raised, played under their current rules (the
first golden log of each, at rules version 1, must now be refused by name)."""
FORMER = ["wobble-rules2"]
"""Games played under a rules version raised since, which the game still decides (its
`former_rules`): they replay under the version they were played under."""
SEALED = ["pig10-envelope3"]
"""Games whose seats' token hashes were sealed in envelope 3: committed to, not exported."""
BUNDLES = [*GAMES, "legacy-pig10", *CURRENT, *FORMER, *SEALED]
FORGER = Signer.generate()


def golden(name: str) -> dict[str, Any]:
    bundle: dict[str, Any] = json.loads((GOLDEN / f"{name}.json").read_text())
    return bundle


def decided(bundle: dict[str, Any]) -> str:
    """The check a faithful bundle ends on: the replay, or the versions once its game's rules
    have moved on without keeping its version (the rules version must be raised with any change
    that decides it otherwise)."""
    kept = REGISTRY.game(bundle["game"]).rules_at(bundle["rules_version"])
    return "replay" if kept is not None else "versions"


def middle(bundle: dict[str, Any]) -> int:
    """The index of an event in the middle of the game."""
    return len(bundle["events"]) // 2


def change_an_event(bundle: dict[str, Any]) -> None:
    event = bundle["events"][middle(bundle)]
    event["meta"]["time"] = "2000-01-01T00:00:00+00:00"


def drop_an_event(bundle: dict[str, Any]) -> None:
    del bundle["events"][middle(bundle)]


def change_the_seed(bundle: dict[str, Any]) -> None:
    bundle["seed"] = "00" * 32


def break_the_signature(bundle: dict[str, Any]) -> None:
    signature = bytearray(base64.b64decode(bundle["signature"]["value"]))
    signature[0] ^= 1
    bundle["signature"]["value"] = base64.b64encode(bytes(signature)).decode()


TAMPERS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "event changed": (change_an_event, "chain"),
    "event dropped": (drop_an_event, "chain"),
    "seed changed": (change_the_seed, "seed"),
    "signature broken": (break_the_signature, "signature"),
}


def resealed(bundle: dict[str, Any], change: Callable[[list[Recorded]], None]) -> dict[str, Any]:
    """A careful forger's bundle: `change` the events, chain them again and sign with the
    forger's own key."""
    records = [Recorded.from_json(event) for event in bundle["events"]]
    change(records)
    chained: list[Recorded] = []
    for record in records:
        chained += seal([record.event], record.meta, chained[-1].position if chained else START)
    return build(chained, lambda record: record, FORGER)


@pytest.mark.parametrize("name", BUNDLES)
def test_every_golden_log_verifies(name: str) -> None:
    bundle = golden(name)
    report = verify(bundle, KEY)
    if decided(bundle) == "versions":
        assert report.first is not None
        assert report.first.check == "versions", report.text()
        return
    assert report.ok, report.text()
    assert report.audit is not None
    assert report.audit.commands > 10
    expected = "python-random" if name.startswith("legacy") else "sha256-ctr/1"
    assert (report.audit.chance, report.audit.rules_version) == (expected, bundle["rules_version"])


@pytest.mark.parametrize("tamper", TAMPERS)
@pytest.mark.parametrize("name", BUNDLES)
def test_a_tampered_golden_log_fails_for_its_reason(name: str, tamper: str) -> None:
    change, reason = TAMPERS[tamper]
    bundle = golden(name)
    change(bundle)
    report = verify(bundle, KEY)
    assert report.first is not None, f"{tamper} went unnoticed"
    assert report.first.check == reason, report.text()
    assert f"NOT VERIFIED: {reason}: " in report.text()


@pytest.mark.parametrize("name", SEALED)
def test_a_sealed_golden_log_holds_commitments_where_seats_hold_tokens(name: str) -> None:
    seats = [event for event in golden(name)["events"] if event["type"] == "table.SeatTaken"]
    tokens = [event["data"]["token_sha256"] for event in seats if event.get("envelope") == 3]
    assert tokens, "a seat taken by a person is sealed"
    assert all(set(token) == {"sha256"} for token in tokens)
    bots = [event for event in seats if event.get("envelope") != 3]
    assert all(event["data"]["token_sha256"] is None for event in bots)


def test_the_reasons_say_what_broke() -> None:
    changed, dropped = golden("pig10"), golden("pig10")
    change_an_event(changed)
    drop_an_event(dropped)
    at = middle(golden("pig10")) + 1
    assert str(verify(changed, KEY).first) == f"event {at}: hash does not match the event's content"
    assert str(verify(dropped, KEY).first) == f"event {at + 1}: expected seq {at}"


@pytest.mark.parametrize("name", GAMES)
def test_forged_entropy_fails_the_replay_even_when_rechained_and_signed(name: str) -> None:
    """The entropy a seat mixed in is part of every chance outcome after it: a log that claims
    other entropy but keeps the deal cannot be decided again into itself."""

    def forge(records: list[Recorded]) -> None:
        index = next(i for i, r in enumerate(records) if r.data.get("entropy") == "Ada's dice")
        taken = records[index]
        records[index] = Recorded(**{**taken.to_json(), "data": {**taken.data, "entropy": "x"}})

    bundle = golden(name)
    forged = resealed(bundle, forge)
    checks = [[f.check for f in verify(forged, key).findings] for key in (None, KEY)]
    assert checks == [[decided(bundle)], ["signature", decided(bundle)]]


def test_a_rules_version_this_code_lacks_is_refused_by_name() -> None:
    def future(records: list[Recorded]) -> None:
        created = records[0]
        data = {**created.data, "rules_version": 99}
        records[0] = Recorded(**{**created.to_json(), "data": data})

    report = verify(resealed(golden("rollnbump"), future))
    assert report.first is not None
    assert report.first.check == "versions"
    assert "rules version 99" in report.first.detail
    assert "replay     not checked" in report.text()


def test_raising_a_games_rules_version_refuses_its_old_logs_by_name() -> None:
    """What the golden logs will meet when a game's rules change: a loud refusal."""
    changed = copy.copy(REGISTRY["pig10"])
    changed.info = replace(changed.info, rules_version=2)
    tables = Tables(GameRegistry([Game(changed)]))
    report = verify(golden("pig10"), KEY, tables)
    assert report.first == Finding(
        "versions",
        "this code cannot decide the game: pig10 was created under rules version 1; "
        "this code decides version 2 only",
    )


def test_a_former_rules_version_kept_beside_the_raised_one_still_decides_its_old_logs() -> None:
    """A release that raises a game's rules version and keeps the former rules as they were
    replays the old logs under those, never under the new ones."""
    pig10 = REGISTRY["pig10"]

    def refuse(*_: object) -> list[Any]:
        raise AssertionError("a rules version 1 log was decided under rules version 2")

    raised: Any = copy.copy(pig10)
    raised.info = replace(pig10.info, rules_version=2)
    raised.step = raised.decide = refuse
    game = Game(raised, former_rules=(pig10,))
    assert (game.rules_at(1), game.rules_at(2), game.rules_at(3)) == (pig10, raised, None)
    today = verify(golden("pig10"), KEY).audit
    report = verify(golden("pig10"), KEY, Tables(GameRegistry([game])))
    assert report.ok, report.text()
    assert report.audit is not None
    assert today is not None
    assert (report.audit.rules_version, report.audit.commands) == (1, today.commands)


def test_a_document_that_is_not_a_bundle_fails_its_format() -> None:
    bundle = golden("pig10")
    key_not_text = {**bundle, "signature": {**bundle["signature"], "public_key": {"k": 1}}}
    for document in [[], {"format": "zip"}, {**bundle, "events": "none"}, key_not_text]:
        report = verify(document, KEY)
        assert report.first is not None
        assert report.first.check == "format"


@pytest.mark.parametrize(
    ("field", "value"), [("meta", 1.5), ("data", []), ("seq", "2"), ("v", True), ("hash", None)]
)
def test_an_event_of_another_shape_fails_the_format_by_name(field: str, value: Any) -> None:
    bundle = golden("pig10")
    at = middle(bundle)
    bundle["events"][at][field] = value
    report = verify(bundle, KEY)
    assert report.first == Finding(
        "format", f"malformed bundle: event {at + 1} has no {field!r} of its type"
    )


def test_a_malformed_seed_in_game_finished_fails_the_seed_check() -> None:
    for seed in (None, ["00"], "zz"):
        bundle = golden("pig10")
        bundle["events"][-1]["data"]["seed"] = seed
        findings = verify(bundle, KEY).findings
        assert Finding("seed", "GameFinished reveals no seed in hexadecimal") in findings


@pytest.mark.parametrize(
    ("name", "created", "command", "reason"),
    [
        ("krumme10", {"game": ["krumme10"]}, {}, "versions"),
        ("rollnbump", {}, {"seat": 99}, "replay"),
        ("wobble-rules3", {}, {"move": [[]]}, "replay"),
    ],
    ids=["game-a-list", "seat-out-of-range", "move-of-lists"],
)
def test_a_rechained_log_of_malformed_events_is_refused_not_crashed_on(
    name: str, created: dict[str, Any], command: dict[str, Any], reason: str
) -> None:
    """A careful forger's events are anyone's input to the audit: whatever GameCreated's data
    or a move's command holds, the report names the check that failed."""

    def forge(records: list[Recorded]) -> None:
        first = records[0]
        records[0] = Recorded(**{**first.to_json(), "data": {**first.data, **created}})
        index = next(i for i, r in enumerate(records) if r.meta["command"]["type"] == "MakeMove")
        move = records[index]
        wanted = move.meta["command"]
        meta = {**move.meta, "command": {**wanted, "args": {**wanted["args"], **command}}}
        records[index] = Recorded(**{**move.to_json(), "meta": meta})

    report = verify(resealed(golden(name), forge))
    assert report.first is not None
    assert report.first.check == reason, report.text()


# -- the command line -----------------------------------------------------------------------


def spieltisch(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """`python -m service.verifier ...` with Flask and Redis made unimportable: verifying needs
    neither. `args` are those of `spieltisch`, whose `verify` subcommand runs the same."""
    assert args[0] == "verify"
    script = (
        "import runpy, sys\n"
        "for name in ('flask', 'redis', 'fakeredis', 'rq'):\n"
        "    sys.modules[name] = None\n"
        "runpy.run_module('service.verifier', run_name='__main__')\n"
    )
    command = [sys.executable, "-c", script, *map(str, args[1:])]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def test_the_spieltisch_command_verifies_as_its_verify_subcommand() -> None:
    command = [str(Path(sys.executable).with_name("spieltisch")), "verify"]
    done = subprocess.run(
        [*command, str(GOLDEN / "wobble-rules3.json"), "--key", str(KEY_FILE)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "VERIFIED: every check holds"


def test_the_command_verifies_a_golden_log() -> None:
    done = spieltisch("verify", GOLDEN / "wobble-rules3.json", "--key", KEY_FILE)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "VERIFIED: every check holds"
    assert "signature  ok      ed25519 by key" in done.stdout


def test_the_command_shows_what_a_seat_saw() -> None:
    done = spieltisch("verify", GOLDEN / "pig10.json", "--seat", "1", "--version", "10")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "note: no --key given" in done.stdout
    _, _, view = done.stdout.partition("What seat 1 saw at version 10:\n")
    seen = json.loads(view)
    assert (seen["you"], seen["version"], seen["status"]) == (1, 10, "running")
    assert "hand" in seen["state"], "a seat sees its own hand"


def test_the_command_reports_the_first_failure(tmp_path: Path) -> None:
    bundle = golden("krumme10")
    drop_an_event(bundle)
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(bundle))
    done = spieltisch("verify", tampered, "--key", KEY_FILE, "--seat", "0")
    assert done.returncode == 1
    assert done.stdout.splitlines()[-2].startswith("NOT VERIFIED: chain: event ")
    assert done.stdout.splitlines()[-1] == "No view is shown of a game that does not verify."


def test_the_command_refuses_unusable_input(tmp_path: Path) -> None:
    assert spieltisch("verify", tmp_path / "missing.json").returncode == 2
    done = spieltisch("verify", GOLDEN / "pig10.json", "--key", "not a key")
    assert (done.returncode, done.stdout) == (2, "")
    assert "a key is 32 bytes" in done.stderr
    done = spieltisch("verify", GOLDEN / "pig10.json", "--seat", "7")
    assert done.returncode == 2
    assert "seats 0 to 1, not 7" in done.stderr
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 100_000 + "]" * 100_000)
    done = spieltisch("verify", nested)
    assert (done.returncode, done.stdout) == (2, "")
    assert "nested too deep" in done.stderr


def test_the_console_script_still_serves_by_default() -> None:
    script = Path(sys.executable).with_name("spieltisch")
    done = subprocess.run([script, "--help"], capture_output=True, text=True, check=False)
    assert done.returncode == 0
    assert "--port" in done.stdout
