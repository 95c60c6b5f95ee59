"""Quotas: one client address may keep only so many tables going, and fewer of bots only; a
table stops counting however it ends, counted in Redis from the logs (no counter to drift)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import pytest
import redis
from flask.testing import FlaskClient

from bootstrap import Services, web_app
from events.store import EventStore
from service.config import Config
from service.quotas import UNBORN_SECONDS, Quotas, TableQuotaExceeded
from tests.faults import RedisServer
from tests.test_bots import drain

CAPPED = Config(
    rate_limits=False, bot_delay_seconds=0, reaction_seconds=0, max_open_tables=3, max_bot_tables=2
)
ALL_BOTS = {
    "game": "pig10",
    "seats": 2,
    "bots": [{"seat": 0, "bot": "random"}, {"seat": 1, "bot": "random"}],
}
PEOPLE = {"game": "pig10", "seats": 2}


@pytest.fixture
def services(real_redis: redis.Redis) -> Services:
    return Services.of(web_app(CAPPED, redis_client=real_redis))


@pytest.fixture
def client(services: Services, real_redis: redis.Redis) -> FlaskClient:
    return web_app(CAPPED, redis_client=real_redis).test_client()


def opened(client: FlaskClient, body: dict[str, Any], address: str = "192.0.2.1") -> Any:
    return client.post("/v1/tables", json=body, environ_overrides={"REMOTE_ADDR": address})


def listed(client: FlaskClient) -> int:
    return len(client.get("/v1/tables?limit=100").get_json())


def assert_refused(answer: Any, limit: int) -> None:
    assert answer.status_code == 403
    assert answer.mimetype == "application/problem+json"
    problem = answer.get_json()
    assert (problem["type"], problem["limit"]) == ("/problems/table-quota", limit)


def test_an_address_may_keep_so_many_tables_open_and_no_more(client: FlaskClient) -> None:
    ids = [opened(client, PEOPLE).get_json()["id"] for _ in range(3)]
    assert len(set(ids)) == 3
    refused = opened(client, PEOPLE)
    assert_refused(refused, 3)
    assert listed(client) == 3, "the refused table was not made"
    assert opened(client, PEOPLE, "192.0.2.2").status_code == 201, "another address may"


def test_an_expired_table_stops_counting(client: FlaskClient, services: Services) -> None:
    first, *_ = [opened(client, PEOPLE).get_json()["id"] for _ in range(3)]
    assert_refused(opened(client, PEOPLE), 3)
    assert services.commands.expire(services.repository.load(first))
    assert opened(client, PEOPLE).status_code == 201


def test_a_finished_table_stops_counting(client: FlaskClient, services: Services) -> None:
    for _ in range(2):
        assert opened(client, ALL_BOTS).status_code == 201
    assert_refused(opened(client, ALL_BOTS), 2)
    assert opened(client, PEOPLE).status_code == 201, "a table with people may still open"
    assert_refused(opened(client, PEOPLE), 3)
    drain(services)  # the bots play both their games to the end
    assert opened(client, ALL_BOTS).status_code == 201
    assert opened(client, ALL_BOTS).status_code == 201
    assert_refused(opened(client, PEOPLE), 3)


def test_a_refused_bot_table_takes_no_open_place(client: FlaskClient) -> None:
    for _ in range(2):
        opened(client, ALL_BOTS)
    for _ in range(3):
        assert_refused(opened(client, ALL_BOTS), 2)
    assert opened(client, PEOPLE).status_code == 201, "the third open place is still free"


def test_a_table_whose_log_was_never_written_stops_counting(
    real_redis: redis.Redis, services: Services
) -> None:
    now = [1000.0]
    quotas = Quotas(real_redis, services.repository.store, 1, 1, clock=lambda: now[0])
    quotas.admit("192.0.2.9", "never-appended", all_bots=False)
    with pytest.raises(TableQuotaExceeded):
        quotas.admit("192.0.2.9", "next", all_bots=False)
    now[0] += UNBORN_SECONDS + 1
    quotas.admit("192.0.2.9", "next", all_bots=False)


@pytest.mark.fault
def test_a_full_redis_refuses_new_tables_with_a_503_and_keeps_what_it_has(
    tmp_path: Path,
) -> None:
    """With Redis at `maxmemory` (deploy/redis.conf sets one, with `noeviction`), writes are
    refused with a 503 problem, nothing evicted: the tables already kept are still read."""
    server = RedisServer(tmp_path)
    server.start()
    try:
        connection = server.client()
        shipped = cast(dict[str, str], connection.config_get("maxmemory*"))
        assert int(shipped["maxmemory"]) > 0, "without a maxmemory Redis is never full: no 503"
        assert shipped["maxmemory-policy"] == "noeviction"
        config = Config(redis_url=server.url, signing_key="00" * 32, rate_limits=False)
        client = web_app(config, redis_client=connection).test_client()
        kept = opened(client, PEOPLE).get_json()["id"]
        used = int(cast(dict[str, Any], connection.info("memory"))["used_memory"])
        connection.config_set("maxmemory", used)
        refused = opened(client, PEOPLE)
        assert refused.status_code == 503
        assert refused.mimetype == "application/problem+json"
        assert "full" in refused.get_json()["detail"]
        assert client.get(f"/v1/tables/{kept}").status_code == 200, "nothing was evicted"
        connection.close()
    finally:
        server.stop()


class ReadCountingStore(EventStore):
    """The real store, noting which tables' logs are read for their last event."""

    def __init__(self, redis_client: redis.Redis) -> None:
        super().__init__(redis_client)
        self.looked_up: list[str] = []

    def last_types(self, game_ids: Sequence[str]) -> list[str | None]:
        self.looked_up.extend(game_ids)
        return super().last_types(game_ids)


def test_no_log_is_read_until_an_address_reaches_its_cap(real_redis: redis.Redis) -> None:
    """Tables that ended only lower the count, so a set within the cap counting them is within
    it: a new table costs no read of the others' logs until it would pass the cap."""
    store = ReadCountingStore(real_redis)
    quotas = Quotas(real_redis, store, 3, 3)
    for number in range(3):
        quotas.admit("192.0.2.7", f"table-{number}", all_bots=False)
    assert store.looked_up == []
    with pytest.raises(TableQuotaExceeded):
        quotas.admit("192.0.2.7", "table-3", all_bots=False)
    assert sorted(store.looked_up) == [f"table-{number}" for number in range(4)]
