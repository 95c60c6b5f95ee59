"""Shared fixtures: a fakeredis for fast tests, a real Redis server for the integration tests,
and the service running on it as the Procfile runs it (`stack`).

The real server is `SPIELTISCH_TEST_REDIS_URL` (default: database 13 of 127.0.0.1:6379). Tests
flush only that database. When no server answers, the tests that need one fail loudly: they
never skip, so a CI run without Redis cannot pass by testing less.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import fakeredis
import pytest
import redis

from tests.live import TEST_REDIS_URL
from tests.stack import Stack


@pytest.fixture
def fake_redis() -> Iterator[redis.Redis]:
    client = fakeredis.FakeRedis()
    yield client
    client.flushall()


@pytest.fixture
def real_redis() -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(TEST_REDIS_URL)
    try:
        client.ping()
    except redis.ConnectionError as error:
        pytest.fail(f"no Redis server at {TEST_REDIS_URL} ({error}); start one: see README")
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


@pytest.fixture(params=["fakeredis", pytest.param("redis", marks=pytest.mark.redis)])
def any_redis(request: pytest.FixtureRequest) -> redis.Redis:
    """Each test using this runs twice: on fakeredis and on the real server."""
    fixture = "fake_redis" if request.param == "fakeredis" else "real_redis"
    client: redis.Redis = request.getfixturevalue(fixture)
    return client


@pytest.fixture
def stack(
    real_redis: redis.Redis, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Stack]:
    """The web server and bot workers as the Procfile runs them, logging into `tmp_path`: one
    worker, or as many as `@pytest.mark.parametrize("stack", [n], indirect=True)` asks for."""
    workers: int = getattr(request, "param", 1)
    running = Stack(tmp_path)
    try:
        for _ in range(workers):
            running.start_worker()
        running.wait_until_serving()
        yield running
    finally:
        running.stop()
