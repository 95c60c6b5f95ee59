"""Live streams on a real Redis with the client the project installs: an idle stream sends its
keep-alives for as long as it may live, though each wait for news outlasts the client's own
socket timeout, and a client that drops the stream leaves no traceback behind."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
import redis

from bootstrap import Services, web_app
from service.config import Config
from service.stream import event_stream
from service.views import SPECTATOR
from tests.live import TEST_REDIS_URL

pytestmark = pytest.mark.redis

KEEPALIVE = 1.5
SOCKET_TIMEOUT = 0.5
"""Shorter than a keep-alive's wait, as redis-py's default (5 s) is shorter than ours (15 s)."""


@pytest.fixture
def services(real_redis: redis.Redis) -> Iterator[Services]:
    impatient = redis.Redis.from_url(TEST_REDIS_URL, socket_timeout=SOCKET_TIMEOUT)
    config = Config(stream_keepalive_seconds=KEEPALIVE, stream_max_seconds=4 * KEEPALIVE)
    services = Services.of(web_app(config, redis_client=impatient))
    yield services
    services.hub.close()
    services.repository.store.close()
    impatient.close()


def idle_table(services: Services) -> str:
    table_id: str = services.commands.create("pig10", 2, {}, None).body["id"]
    return table_id


def test_an_idle_stream_sends_keepalives_until_it_ends(
    services: Services, caplog: pytest.LogCaptureFixture
) -> None:
    table_id = idle_table(services)
    config = services.config
    frames = list(
        event_stream(
            services.hub,
            table_id,
            SPECTATOR,
            1,
            keepalive_seconds=config.stream_keepalive_seconds,
            max_seconds=config.stream_max_seconds,
        )
    )
    assert frames[0].startswith("retry:")
    assert frames.count(": keep-alive\n\n") >= 3, frames
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_stream_over_http_stays_open_while_idle(services: Services) -> None:
    table_id = idle_table(services)
    app = web_app(services.config, redis_client=services.redis)
    with app.test_client().get(f"/v1/tables/{table_id}/stream?after=1") as response:
        body = response.get_data(as_text=True)
    Services.of(app).hub.close()
    Services.of(app).repository.store.close()
    assert response.status_code == 200
    assert body.count(": keep-alive") >= 3, body


def test_a_client_that_drops_the_stream_logs_nothing(
    services: Services, caplog: pytest.LogCaptureFixture
) -> None:
    table_id = idle_table(services)
    config = services.config
    stream = event_stream(
        services.hub,
        table_id,
        SPECTATOR,
        1,
        keepalive_seconds=config.stream_keepalive_seconds,
        max_seconds=config.stream_max_seconds,
    )
    assert next(stream).startswith("retry:")
    assert next(stream) == ": keep-alive\n\n"
    stream.close()  # what the server does when the client goes away
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
