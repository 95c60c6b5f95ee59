"""End to end: the Procfile's gunicorn serving the app over real HTTP, on a real Redis."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
import redis

from service.signing import Signer, decode_key, encode_key
from service.verifier import verify
from tests.bounds import bounded
from tests.live import TEST_REDIS_URL, call, free_port

pytestmark = pytest.mark.redis
SIGNING_KEY = "11" * 32
"""The key both gunicorn processes sign exports with (a test key, in hex)."""


@pytest.fixture
def server(real_redis: redis.Redis) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "gunicorn", "--workers", "2"),
            *("--bind", f"127.0.0.1:{port}", "bootstrap:web_app()"),
        ],
        env={**os.environ, "REDIS_URL": TEST_REDIS_URL, "SPIELTISCH_SIGNING_KEY": SIGNING_KEY},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{base}/health", timeout=1).close()
                break
            except OSError:
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stderr is not None:
            process.stderr.close()


def test_three_seats_play_pig10_over_http_across_two_workers(server: str) -> None:
    status, table = call(server, "POST", "/v1/tables", {"game": "pig10", "seats": 3})
    assert status == 201
    path = f"/v1/tables/{table['id']}"
    tokens = [call(server, "POST", f"{path}/seats", {"name": n})[1]["token"] for n in "abc"]
    moves = 0
    for _ in bounded("the game did not end"):
        if (table := call(server, "GET", path)[1])["status"] != "running":
            break
        seat = table["to_act"][0]
        legal = call(server, "GET", f"{path}/moves", token=tokens[seat])[1]
        move = {"move": legal["moves"][0], "expected_version": legal["version"]}
        status, answer = call(server, "POST", f"{path}/moves", move, tokens[seat])
        assert status == 200, answer
        moves += 1
    assert moves == 80, "every card of the deck is played once"
    assert table["status"] == "finished"
    status, audit = call(server, "GET", f"{path}/audit")
    assert (status, audit["ok"]) == (200, True)
    keys = [call(server, "GET", "/v1/keys")[1]["keys"][0]["public_key"] for _ in range(4)]
    assert keys == [encode_key(Signer.from_text(SIGNING_KEY).public_key)] * 4, "either process"
    status, bundle = call(server, "GET", f"{path}/export")
    assert status == 200
    report = verify(bundle, decode_key(keys[0]))
    assert report.ok, report.text()
    exported = json.dumps(bundle)
    assert not [t for t in tokens if hashlib.sha256(t.encode()).hexdigest() in exported]
    status, garbage = call(server, "POST", f"{path}/moves", {"move": 1}, tokens[0])
    assert status == 422
    assert garbage["type"] == "/problems/invalid-body"
    assert garbage["content_type"] == "application/problem+json"
