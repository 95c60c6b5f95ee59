"""Our generator, pinned by known answers, and the named generators a log may record."""

from __future__ import annotations

import hashlib
from collections import Counter
from random import Random

import pytest

from domain import multiset
from domain.chance import (
    CURRENT,
    PYTHON_RANDOM,
    SHA256_CTR,
    Sha256Chance,
    UnknownChance,
    generator,
)
from domain.dice import rng_at, rng_key
from domain.registry import default_registry
from domain.table import (
    GAME_CREATED,
    CreateGame,
    Tables,
    TakeSeat,
    UnsupportedVersion,
    command_from_json,
    game_created_v1_to_v2,
)

KEY = bytes(range(32))
TABLES = Tables(default_registry())


def fresh() -> Sha256Chance:
    return Sha256Chance(KEY)


def test_the_byte_stream_is_sha256_of_the_key_and_a_counter() -> None:
    block0 = hashlib.sha256(KEY + bytes(8)).digest()
    assert block0.hex().startswith("a9d6e5")
    # randrange(6) keeps the low 3 bits of one byte: 0xa9 -> 1; 0xd6 -> 6, rejected; 0xe5 -> 5.
    chance = fresh()
    assert [chance.randrange(6), chance.randrange(6)] == [1, 5]


def test_known_answers() -> None:
    chance = fresh()
    assert [chance.randrange(6) for _ in range(10)] == [1, 5, 0, 1, 2, 0, 5, 0, 3, 2]
    assert chance.randrange(2**70) == 365510658253661545861
    deck = list(range(10))
    fresh().shuffle(deck)
    assert deck == [4, 3, 7, 8, 2, 1, 0, 5, 6, 9]
    assert fresh().sample("abcd", 5, counts=[3, 1, 0, 2]) == ["a", "a", "b", "d", "d"]
    dice = fresh()
    assert [dice.randint(1, 6) for _ in range(8)] == [2, 6, 1, 2, 3, 1, 6, 1]
    assert dice.choice("xyz") == "z"
    one = fresh()
    assert [one.randrange(1) for _ in range(3)] == [0, 0, 0], "a certain outcome takes no bytes"
    assert (one.randrange(256), one.randrange(257)) == (169, 229)
    weighted = fresh()
    assert [multiset.draw((3, 1, 0, 2), weighted) for _ in range(8)] == [0, 3, 0, 0, 0, 0, 3, 0]


def test_the_key_derivation_is_pinned() -> None:
    key = rng_key(bytes(32), ("dice",), 3)
    assert key.hex() == "1076575a91ff1efc0ce248bce7a81503bac97c2c8ecff4fa32088ac536cc6c5a"


def test_draws_are_uniform_enough() -> None:
    chance = fresh()
    counts = Counter(chance.randrange(6) for _ in range(6000))
    assert set(counts) == set(range(6))
    assert all(900 < count < 1100 for count in counts.values())


def test_refusals() -> None:
    with pytest.raises(ValueError, match="n >= 1"):
        fresh().randrange(0)
    with pytest.raises(IndexError):
        fresh().choice([])
    with pytest.raises(ValueError, match="cannot sample 3 from 2"):
        fresh().sample([1, 2], 3)
    with pytest.raises(UnknownChance):
        generator("dice-cup", KEY)


def test_python_random_is_the_generator_old_logs_were_dealt_with() -> None:
    old = Random(int.from_bytes(rng_key(KEY, ("e",), 4), "big"))
    legacy = rng_at(KEY, ("e",), 4, PYTHON_RANDOM)
    assert isinstance(legacy, Random)
    assert [legacy.randrange(52) for _ in range(20)] == [old.randrange(52) for _ in range(20)]
    assert isinstance(rng_at(KEY, (), 1), Sha256Chance)
    assert CURRENT == SHA256_CTR


def test_game_created_records_the_generator_and_the_rules_version() -> None:
    created = TABLES.decide(None, CreateGame("t", "pig10", 2, {}, "c"), KEY)[0]
    assert (created.type, created.v) == (GAME_CREATED, 3)
    assert (created.data["chance"], created.data["rules_version"]) == (SHA256_CTR, 1)


def test_old_games_upcast_and_decide_with_python_random() -> None:
    args = {"table_id": "t", "game": "pig10", "seats": 2, "options": {}, "commitment": "c"}
    old = command_from_json({"type": "CreateGame", "args": {**args, "entropy": None}})
    assert isinstance(old, CreateGame)
    assert old.chance == PYTHON_RANDOM
    created = TABLES.decide(None, old, KEY)[0]
    stored_v1 = {k: v for k, v in created.data.items() if k not in ("chance", "rules_version")}
    assert game_created_v1_to_v2(stored_v1) == created.data
    table = TABLES.fold([created])
    assert table is not None
    assert table.chance == PYTHON_RANDOM


def test_unknown_versions_are_refused_by_name() -> None:
    with pytest.raises(UnsupportedVersion, match="rules version 2"):
        TABLES.decide(None, CreateGame("t", "pig10", 2, {}, "c", rules_version=2), KEY)
    created = TABLES.decide(None, CreateGame("t", "pig10", 2, {}, "c"), KEY)[0]
    future = created._replace(data={**created.data, "chance": "sha256-ctr/9"})
    table = TABLES.fold([future, *TABLES.decide(TABLES.fold([future]), TakeSeat(0, "a", "h"), KEY)])
    with pytest.raises(UnsupportedVersion, match="sha256-ctr/9"):
        TABLES.decide(table, TakeSeat(1, "b", "h2"), KEY)
