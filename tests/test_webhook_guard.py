"""Webhooks open no way into the service's network: internal addresses are refused when a seat
is taken and again, resolved, when the call is made; redirects are not followed; and every
failed call gives the log the same reason."""

from __future__ import annotations

import ipaddress
import socket
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
import redis

from bootstrap import Services, build, web_app
from domain.table import MOVE_SUBSTITUTED
from events.envelope import START
from service.config import Config
from tests.live import TEST_REDIS_URL
from tests.test_bots import FULL_SPEED, WebhookBot, drain, serving, webhook_table
from workers.webhook import UNANSWERED as UNANSWERED_REASON
from workers.webhook import AddressGuard, WebhookClient, WebhookFailed

DEPLOYED = replace(FULL_SPEED, redis_url=TEST_REDIS_URL, webhook_timeout_seconds=0.5)
"""A deployment's settings (a Redis URL: not embedded), with short webhook calls."""


def deployed(client: redis.Redis, *allowed: str) -> Services:
    return build(client, replace(DEPLOYED, webhook_allow=allowed))


def substitutions(runtime: Services, table_id: str) -> list[dict[str, Any]]:
    records = runtime.repository.store.read(table_id, START)
    return [dict(r.data) for r in records if r.type == MOVE_SUBSTITUTED]


def on_host(url: str, host: str) -> str:
    """`url` with its host spelled `host`, the port kept."""
    parts = urllib.parse.urlsplit(url)
    return parts._replace(netloc=f"{host}:{parts.port}").geturl()


def played(runtime: Services, url: str) -> list[dict[str, Any]]:
    """Seat the webhook at `url` at a new table, play its first turn: the substitutions."""
    table_id, _ = webhook_table(runtime, url)
    drain(runtime)
    return substitutions(runtime, table_id)


UNANSWERED = [{"seat": 1, "reason": "unanswered"}]


@pytest.fixture
def bot() -> WebhookBot:
    return WebhookBot()


@pytest.fixture
def bot_url(bot: WebhookBot) -> Iterator[str]:
    with serving(bot) as url:
        yield url


# -- the guard's rules ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://localhost:8000/",
        "http://LOCALHOST./",
        "http://api.localhost/",
        "http://0x7f000001/",
        "http://2130706433/",
        "http://127.1/",
        "http://0177.0.0.1/",
        "http://[::1]:6379/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:7f00:1]/",
        "http://[2002:7f00:1::]/",
        "http://0.0.0.0/",
        "http://[::]/",
        "http://10.0.0.1/",
        "http://172.16.5.4/",
        "http://192.168.1.1/",
        "http://100.64.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fe80::1%25eth0]/",
        "http://[fd00::1]/",
        "http://224.0.0.1/",
        "http://[ff02::1]/",
        "http://240.0.0.1/",
        "http://255.255.255.255/",
    ],
)
def test_internal_literal_addresses_are_refused_before_any_lookup(url: str) -> None:
    assert AddressGuard.of(()).refusal(url) is not None


@pytest.mark.parametrize(
    "url", ["http://8.8.8.8/", "https://bots.example.com/turn?key=1", "http://[2606:4700::1111]/"]
)
def test_public_addresses_and_names_pass_the_first_check(url: str) -> None:
    assert AddressGuard.of(()).refusal(url) is None


def test_the_allow_setting_admits_named_hosts_and_networks() -> None:
    guard = AddressGuard.of(["bots.internal", " 10.1.0.0/16", "[::1]", ""])
    assert guard.refusal("http://BOTS.internal./turn") is None
    assert guard.refusal("http://10.1.2.3/") is None
    assert guard.refusal("http://[::1]:9000/") is None
    assert guard.refusal("http://10.2.0.1/") is not None
    assert guard.refusal("http://127.0.0.1/") is not None, "::1 allowed is not 127.0.0.1"
    assert guard.allows(ipaddress.ip_address("10.1.255.255"))


def test_embedded_mode_allows_loopback_only() -> None:
    guard = AddressGuard.of((), loopback=True)
    assert guard.refusal("http://127.0.0.1:8001/") is None
    assert guard.refusal("http://[::1]:8001/") is None
    assert guard.refusal("http://192.168.0.1/") is not None


def test_a_name_resolving_inside_is_refused_at_call_time() -> None:
    guard = AddressGuard.of(())
    with pytest.raises(OSError, match="not public"):
        guard.resolve("localhost", 80)
    assert AddressGuard.of(["localhost"]).resolve("localhost", 80), "allowed by its name"


# -- calls, with real servers on loopback -----------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "0x7f000001", "2130706433", "127.1"])
def test_a_deployment_never_calls_a_webhook_on_loopback(
    real_redis: redis.Redis, bot: WebhookBot, bot_url: str, host: str
) -> None:
    assert played(deployed(real_redis), on_host(bot_url, host)) == UNANSWERED
    assert bot.received == [], "the server was never called"


@pytest.mark.parametrize(
    ("allowed", "host"),
    [("127.0.0.1", "127.0.0.1"), ("127.0.0.0/8", "127.1"), ("localhost", "localhost")],
)
def test_the_allow_setting_lets_a_deployment_call_its_own_bots(
    real_redis: redis.Redis, bot: WebhookBot, bot_url: str, allowed: str, host: str
) -> None:
    assert played(deployed(real_redis, allowed), on_host(bot_url, host)) == []
    assert len(bot.received) == 1, "the allowed bot played its turn"


def test_a_redirect_is_a_failed_call_and_is_not_followed(
    real_redis: redis.Redis, bot: WebhookBot, bot_url: str
) -> None:
    inside = WebhookBot()
    with serving(inside) as inside_url:
        bot.behave = "redirect"
        bot.redirect_to = inside_url
        runtime = deployed(real_redis, "localhost")
        assert played(runtime, on_host(bot_url, "localhost")) == UNANSWERED
    assert len(bot.received) == 1, "the allowed webhook was called"
    assert inside.received == [], "the internal address it pointed to was not"


@pytest.fixture
def silent_url() -> Iterator[str]:
    """A port that accepts connections and never answers."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/"


@pytest.fixture
def closed_url() -> str:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
    return f"http://127.0.0.1:{port}/"


def test_every_failed_call_gives_the_same_reason(
    real_redis: redis.Redis, silent_url: str, closed_url: str
) -> None:
    allowed = deployed(real_redis, "127.0.0.1")
    reasons = {
        "silent port": played(allowed, silent_url),
        "closed port": played(allowed, closed_url),
        "refused by the guard": played(deployed(real_redis), silent_url),
        "no such name": played(allowed, "http://no-such-host.invalid/"),
    }
    assert reasons == dict.fromkeys(reasons, UNANSWERED)


def test_a_name_server_that_never_answers_fails_the_call_at_its_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The resolver takes no timeout of its own: a lookup that hangs (here, until the test ends)
    must not hold the turn past the call's deadline."""
    hung = threading.Event()
    resolve = socket.getaddrinfo

    def hanging(host: str, *args: Any, **kwargs: Any) -> Any:
        if host == "hangs.example":
            hung.wait(60)
        return resolve(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", hanging)
    client = WebhookClient(0.2, AddressGuard.of(["hangs.example"]))
    try:
        with pytest.raises(WebhookFailed) as failed:
            client.ask("http://hangs.example/", {"table": "t"}, None)
    finally:
        hung.set()
    assert failed.value.reason == UNANSWERED_REASON
    assert failed.value.detail == "no answer within 0.2 s", "given up, not answered by the lookup"


# -- over HTTP ------------------------------------------------------------------------------------


def test_taking_a_seat_for_an_internal_webhook_is_refused_and_writes_nothing(
    real_redis: redis.Redis,
) -> None:
    config = Config(redis_url=TEST_REDIS_URL, signing_key="00" * 32, rate_limits=False)
    client = web_app(config, redis_client=real_redis).test_client()
    table = client.post("/v1/tables", json={"game": "pig10", "seats": 2}).get_json()
    seats = f"/v1/tables/{table['id']}/seats"
    refused = client.post(seats, json={"webhook": "http://0x7f000001:6379/"})
    assert refused.status_code == 422
    assert refused.mimetype == "application/problem+json"
    problem = refused.get_json()
    assert problem["type"] == "/problems/invalid-body"
    assert list(problem["errors"]) == ["webhook"]
    assert [seat["taken"] for seat in client.get(seats).get_json()] == [False, False]
    taken = client.post(seats, json={"webhook": "https://bots.example.com/turn"})
    assert taken.status_code == 201, "a public name is looked up when it is called, not now"
