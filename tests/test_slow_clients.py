"""Clients trickling their headers do not starve the shipped server: with a hundred of them
mid-request, `/health` and a move are still answered (bench/slow_clients.py times them)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import redis

from bench.http_moves import Client
from bench.slow_clients import Tricklers, games
from bench.slow_clients import server as shipped_server
from tests.bounds import bounded
from tests.live import TEST_REDIS_URL

PATIENCE_SECONDS = 60.0
"""How long each answer may take on a busy machine: the test is that it comes at all."""


@pytest.fixture(params=["procfile", "embedded"])
def server(request: pytest.FixtureRequest, real_redis: redis.Redis) -> Iterator[int]:
    """The Procfile's `web:` command on the test database, or the embedded `spieltisch`."""
    with shipped_server(TEST_REDIS_URL if request.param == "procfile" else None) as port:
        yield port


def test_health_and_a_move_are_answered_while_a_hundred_clients_trickle_headers(
    server: int,
) -> None:
    [game] = games(server, 1)
    before = game.version
    tricklers = Tricklers(server, 100, interval=0.5)
    try:
        for _ in bounded("the tricklers sending their header lines"):
            if tricklers.lines >= 2:
                break
            time.sleep(0.1)
        client = Client(server)
        client.connection.timeout = PATIENCE_SECONDS
        health, _ = client.call("GET", "/health")
        moved, answer = game.move(client)
        client.close()
        still = tricklers.lines
        open_sockets = len(tricklers.sockets)
    finally:
        tricklers.close()
    assert health == 200
    assert moved == 200, answer
    assert game.version > before, "the move was played"
    assert still >= 2, "the tricklers were mid-request when the answers came"
    assert open_sockets == 100
