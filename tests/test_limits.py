"""Rate limits: floods are answered 429 with Retry-After and RateLimit headers, while normal play
of other clients and seats goes on; counted in Redis, so every web process shares them."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import fakeredis
import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from bootstrap import web_app
from service.config import Config
from tests.faults import RedisServer
from tests.live import TEST_REDIS_URL, free_port

TIGHT = Config(limit_tables="3/minute", limit_moves="2/minute", limit_reads="2/minute")


def tight_app(client: redis.Redis, **settings: object) -> Flask:
    return web_app(replace(TIGHT, **settings), redis_client=client)  # type: ignore[arg-type]


def test_a_flood_of_tables_is_refused_with_429_and_the_headers() -> None:
    client = tight_app(fakeredis.FakeRedis()).test_client()
    answers = [client.post("/v1/tables", json={"game": "pig10", "seats": 2}) for _ in range(5)]
    assert [answer.status_code for answer in answers] == [201, 201, 201, 429, 429]
    refused = answers[3]
    assert refused.mimetype == "application/problem+json"
    assert refused.get_json()["type"] == "/problems/rate-limited"
    assert int(refused.headers["Retry-After"]) > 0
    assert refused.headers["RateLimit-Limit"] == "3"
    assert refused.headers["RateLimit-Remaining"] == "0"
    assert answers[0].headers["RateLimit-Remaining"] == "2"
    other = client.post(
        "/v1/tables",
        json={"game": "pig10", "seats": 2},
        environ_overrides={"REMOTE_ADDR": "192.0.2.7"},
    )
    assert other.status_code == 201, "another address has limits of its own"


def test_moves_are_limited_per_seat_token() -> None:
    client = tight_app(fakeredis.FakeRedis(), limit_tables="10/minute").test_client()
    table = client.post("/v1/tables", json={"game": "pig10", "seats": 2}).get_json()["id"]
    tokens = [
        client.post(f"/v1/tables/{table}/seats", json={"name": name}).get_json()["token"]
        for name in ("Ada", "Bo")
    ]
    statuses: dict[int, list[int]] = {0: [], 1: []}
    for _ in range(3):
        for seat, token in enumerate(tokens):
            move = {"move": {}, "expected_version": 1}  # refused by the rules: still counted
            answer = client.post(
                f"/v1/tables/{table}/moves",
                json=move,
                headers={"Authorization": f"Bearer {token}"},
            )
            statuses[seat].append(answer.status_code)
    assert statuses[0][2] == statuses[1][2] == 429, statuses
    assert 429 not in statuses[0][:2] + statuses[1][:2], "each seat has its own count"


def test_heavy_reads_are_limited_and_light_ones_are_not() -> None:
    client = tight_app(fakeredis.FakeRedis()).test_client()
    table = client.post("/v1/tables", json={"game": "pig10", "seats": 2}).get_json()["id"]
    reads = [client.get(f"/v1/tables/{table}/events").status_code for _ in range(3)]
    assert reads == [200, 200, 429]
    assert all(client.get(f"/v1/tables/{table}").status_code == 200 for _ in range(5))


@pytest.mark.redis
def test_the_count_is_shared_by_every_web_process(real_redis: redis.Redis) -> None:
    """Two apps (two web processes) on one Redis count together."""
    config = replace(TIGHT, redis_url=TEST_REDIS_URL, signing_key="22" * 32)
    first, second = (web_app(config, redis_client=real_redis).test_client() for _ in range(2))
    statuses = [
        app.post("/v1/tables", json={"game": "pig10", "seats": 2}).status_code
        for app in (first, second, first, second)
    ]
    assert statuses == [201, 201, 201, 429]


@pytest.mark.redis
def test_a_limited_request_is_counted_and_its_headers_answered_in_one_round_trip(
    tmp_path: Path,
) -> None:
    """On a server of its own, so every command Redis counts is this test's."""
    server = RedisServer(tmp_path)
    server.start()
    try:
        connection = server.client()
        config = replace(TIGHT, redis_url=server.url, signing_key="22" * 32)
        client = web_app(config, redis_client=connection).test_client()
        before = cast(dict[str, Any], connection.info("commandstats"))
        answers = [client.post("/v1/tables", json={"game": "pig10", "seats": 2}) for _ in range(4)]
        after = cast(dict[str, Any], connection.info("commandstats"))
        connection.close()
    finally:
        server.stop()
    assert [answer.headers["RateLimit-Remaining"] for answer in answers] == ["2", "1", "0", "0"]
    resets = [int(answer.headers["RateLimit-Reset"]) - time.time() for answer in answers]
    assert all(0 < reset <= 61 for reset in resets), resets
    assert 0 < int(answers[3].headers["Retry-After"]) <= 61

    def calls(command: str) -> int:
        return int(after.get(f"cmdstat_{command}", {}).get("calls", 0)) - int(
            before.get(f"cmdstat_{command}", {}).get("calls", 0)
        )

    assert calls("evalsha") >= 4, "each request was counted"
    # Inside the counting script, Redis counts the calls it makes: a TTL beside each INCR.
    assert calls("get") == 0, "the headers asked Redis nothing more"
    assert calls("ttl") == calls("incr"), "... nor the reset: each TTL is the count's"


def test_a_limiter_that_cannot_reach_its_redis_lets_requests_through() -> None:
    """The counts live where `redis_url` says; the games here in a Redis that answers. A request
    the limiter cannot count goes on, without headers, rather than failing on the counter."""
    nowhere = f"redis://127.0.0.1:{free_port()}/0"
    config = replace(TIGHT, redis_url=nowhere, signing_key="22" * 32)
    client = web_app(config, redis_client=fakeredis.FakeRedis()).test_client()
    answers = [client.post("/v1/tables", json={"game": "pig10", "seats": 2}) for _ in range(4)]
    assert [answer.status_code for answer in answers] == [201] * 4, "3/minute, not counted"
    assert "RateLimit-Limit" not in answers[0].headers


def test_a_route_with_two_windows_is_refused_by_the_one_it_exceeds() -> None:
    client = tight_app(fakeredis.FakeRedis(), limit_tables="2/minute;3/hour").test_client()
    answers = [client.post("/v1/tables", json={"game": "pig10", "seats": 2}) for _ in range(3)]
    assert [answer.status_code for answer in answers] == [201, 201, 429]
    assert answers[0].headers["RateLimit-Limit"] == "2", "the smallest window answers"
    assert answers[2].headers["RateLimit-Limit"] == "2"
    assert "Retry-After" not in answers[0].headers, "only a refusal says when to retry"


def test_limits_can_be_turned_off() -> None:
    client = tight_app(fakeredis.FakeRedis(), rate_limits=False).test_client()
    answers = [client.post("/v1/tables", json={"game": "pig10", "seats": 2}) for _ in range(5)]
    assert {answer.status_code for answer in answers} == {201}
    assert "RateLimit-Limit" not in answers[0].headers


def test_behind_trusted_proxies_each_forwarded_client_has_its_own_count() -> None:
    def tables_opened(client: FlaskClient, addresses: list[str]) -> list[int]:
        return [
            client.post(
                "/v1/tables",
                json={"game": "pig10", "seats": 2},
                headers={"X-Forwarded-For": address},
            ).status_code
            for address in addresses
        ]

    one_each = "1/minute"
    behind = tight_app(fakeredis.FakeRedis(), limit_tables=one_each, trusted_proxies=1)
    assert tables_opened(behind.test_client(), ["192.0.2.1", "192.0.2.2", "192.0.2.1"]) == [
        201,
        201,
        429,
    ]
    direct = tight_app(fakeredis.FakeRedis(), limit_tables=one_each)
    assert tables_opened(direct.test_client(), ["192.0.2.1", "192.0.2.2"]) == [201, 429], (
        "without trusted proxies the header is ignored: anyone could forge it"
    )


def seated_pig10(client: FlaskClient) -> tuple[str, list[str]]:
    """A two-seat Pig 10 table with both seats taken: its id and the seats' tokens."""
    table = client.post("/v1/tables", json={"game": "pig10", "seats": 2}).get_json()["id"]
    tokens = [
        client.post(f"/v1/tables/{table}/seats", json={"name": name}).get_json()["token"]
        for name in ("Ada", "Bo")
    ]
    return table, tokens


def play_first_card(client: FlaskClient, table: str, tokens: list[str]) -> tuple[int, int]:
    """The seat to act plays the first card of its hand: (its seat, the answer's status)."""
    views = [
        client.get(f"/v1/tables/{table}", headers={"Authorization": f"Bearer {token}"}).get_json()
        for token in tokens
    ]
    seat = views[0]["to_act"][0]
    card = views[seat]["state"]["hand"][0]
    answer = client.post(
        f"/v1/tables/{table}/moves",
        json={
            "move": {"card": card, "mode": "set" if card == 0 else "add"},
            "expected_version": views[0]["version"],
        },
        headers={"Authorization": f"Bearer {tokens[seat]}"},
    )
    return seat, answer.status_code


@pytest.mark.redis
def test_a_move_is_counted_by_its_own_append_in_one_round_trip(tmp_path: Path) -> None:
    """On a server of its own, so every command Redis counts is this test's."""
    server = RedisServer(tmp_path)
    server.start()
    try:
        connection = server.client()
        config = replace(TIGHT, redis_url=server.url, signing_key="22" * 32, limit_moves="5/minute")
        client = web_app(config, redis_client=connection).test_client()
        table, tokens = seated_pig10(client)
        before = cast(dict[str, Any], connection.info("commandstats"))
        seat, status = play_first_card(client, table, tokens)
        after_move = cast(dict[str, Any], connection.info("commandstats"))
        answer = client.post(
            f"/v1/tables/{table}/moves",
            json={"move": {}, "expected_version": 0},
            headers={"Authorization": f"Bearer {tokens[seat]}"},
        )
        after = cast(dict[str, Any], connection.info("commandstats"))
        connection.close()
    finally:
        server.stop()
    assert status == 200

    def calls(command: str, since: dict[str, Any], until: dict[str, Any]) -> int:
        return int(until.get(f"cmdstat_{command}", {}).get("calls", 0)) - int(
            since.get(f"cmdstat_{command}", {}).get("calls", 0)
        )

    # Two GETs of the table read nothing from Redis: the table is cached.
    assert calls("evalsha", before, after_move) == 1, "the append counted it: no round trip more"
    assert calls("incr", before, after_move) == 1, "counted once"
    assert answer.status_code == 409, "a stale version: refused before the append ..."
    assert answer.headers["RateLimit-Remaining"] == "3", "... so counted after its view"
    assert 0 < int(answer.headers["RateLimit-Reset"]) - time.time() <= 61
    assert calls("evalsha", after_move, after) == 1, "by the limiter's own script"


@pytest.mark.redis
def test_moves_past_the_limit_are_refused_and_write_nothing(real_redis: redis.Redis) -> None:
    """Moves the rules refuse count too (after their view), and a legal move past the limit is
    refused by its append before it writes."""
    config = replace(TIGHT, redis_url=TEST_REDIS_URL, signing_key="22" * 32)
    client = web_app(config, redis_client=real_redis).test_client()
    table, tokens = seated_pig10(client)
    path = f"/v1/tables/{table}"
    refused_by_rules = client.post(
        f"{path}/moves",
        json={"move": {}, "expected_version": 1},
        headers={"Authorization": f"Bearer {tokens[0]}"},
    )
    assert refused_by_rules.status_code in (409, 422), refused_by_rules.get_json()
    assert refused_by_rules.headers["RateLimit-Remaining"] == "1", "2/minute, counted once"
    statuses: dict[int, list[int]] = {0: [], 1: []}
    while len(statuses[0]) < 2:
        seat, status = play_first_card(client, table, tokens)
        statuses[seat].append(status)
    assert statuses[0] == [200, 429], statuses
    version = client.get(path).get_json()["version"]
    seat, status = play_first_card(client, table, tokens)
    assert (seat, status) == (0, 429), "seat 0 is still to act: its refused move wrote nothing"
    assert client.get(path).get_json()["version"] == version
    refused = client.post(
        f"{path}/moves",
        json={"move": {}, "expected_version": version},
        headers={"Authorization": f"Bearer {tokens[0]}"},
    )
    assert refused.status_code == 429, "a move the rules would refuse, past the limit: 429"
    assert refused.mimetype == "application/problem+json"
    assert int(refused.headers["Retry-After"]) > 0
    assert refused.headers["RateLimit-Remaining"] == "0"
    assert set(statuses[1]) == {200}, "the other seat has a count of its own"
