"""Every registered game, the tests' own included, walked through the HTTP API to its end.

Nothing here names a game: each is found in the catalogue, opened with its default options, played
by a client holding every seat (a seeded random legal move each turn), and audited and exported
once it is over. Every answer is checked against openapi.yaml, so a game the spec has no state
schema for must fit the generic one, and dumped both by its projection and by its marshmallow
schema, which must agree.
"""

from __future__ import annotations

from random import Random

import fakeredis
import pytest

from bootstrap import web_app
from domain.registry import AnyRules
from domain.table import Tables
from service.config import Config, load_game
from service.signing import decode_key
from service.verifier import verify
from tests.conftest import IN_PROCESS
from tests.sixth_game import with_sixth_game
from tests.test_openapi import (
    AUDIT,
    EVENTS,
    EXPORT,
    GAME,
    MOVES,
    SCORES,
    SEATS,
    TABLE,
    TABLES,
    ContractClient,
)
from tests.test_projection import Differential

REGISTRY = with_sixth_game()
GAMES = [pytest.param(rules, id=rules.info.id) for rules in REGISTRY]
MAX_MOVES = 5000


@pytest.fixture
def differential(monkeypatch: pytest.MonkeyPatch) -> Differential:
    return Differential().install(monkeypatch)


@pytest.fixture
def api(differential: Differential) -> ContractClient:
    app = web_app(IN_PROCESS, redis_client=fakeredis.FakeRedis(), registry=REGISTRY)
    return ContractClient(app.test_client())


@pytest.mark.parametrize("rules", GAMES)
def test_a_game_is_walked_through_the_api_to_its_end(
    rules: AnyRules, api: ContractClient, differential: Differential
) -> None:
    game = rules.info.id
    info = api.call("get", GAME, path={"game_id": game}, expect=200).body
    assert info in api.call("get", "/v1/games", expect=200).body
    bots = api.call("get", "/v1/bots", expect=200).body
    assert all(game in bot["games"] for bot in bots), "every built-in bot plays every game"

    players = info["min_players"]
    table = api.call("post", TABLES, body={"game": game, "seats": players}, expect=201).body
    path = {"table_id": table["id"]}
    tokens = [
        api.call("post", SEATS, path=path, body={"name": f"p{seat}"}, expect=201).body["token"]
        for seat in range(players)
    ]
    rng = Random(game)
    for _ in range(MAX_MOVES):
        table = api.call("get", TABLE, path=path, expect=200).body
        if table["status"] == "finished":
            break
        seat = rng.choice(table["to_act"])
        legal = api.call("get", MOVES, path=path, token=tokens[seat], expect=200).body
        body = {"move": rng.choice(legal["moves"]), "expected_version": legal["version"]}
        api.call("post", MOVES, path=path, token=tokens[seat], body=body, expect=200)
    else:
        pytest.fail(f"{game} did not end in {MAX_MOVES} moves")

    version = table["version"]
    assert table["result"]["scores"] == api.call("get", SCORES, path=path).body["scores"][-1][1]
    assert len(api.call("get", EVENTS, path=path, expect=200).body["events"]) == version
    audit = api.call("get", AUDIT, path=path, expect=200).body
    assert (audit["ok"], audit["problems"]) == (True, [])
    exported = api.call("get", EXPORT, path=path, expect=200).body
    [key] = api.call("get", "/v1/keys", expect=200).body["keys"]
    report = verify(exported, decode_key(key["public_key"]), Tables(REGISTRY))
    assert report.ok, report.text()
    assert differential.differences == []
    assert {"MoveResultSchema", "TableSchema", "EventLogSchema"} <= set(differential.compared)


def test_the_service_hosts_the_games_its_environment_names() -> None:
    config = Config.from_env({"SPIELTISCH_EXTRA_GAMES": " tests.sixth_game:GAME ,"})
    assert config.extra_games == ("tests.sixth_game:GAME",)
    assert config.registry().ids() == REGISTRY.ids()
    with pytest.raises(TypeError, match=r"not a domain\.game\.Game"):
        load_game("tests.sixth_game:RULES")
