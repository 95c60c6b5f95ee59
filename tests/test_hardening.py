"""Answers fit for the open internet: names that cannot disguise themselves, no type sniffing,
a content policy on everything served."""

from __future__ import annotations

import io

import fakeredis
import pytest
from flask.testing import FlaskClient

DISGUISES = [
    "Ada\u202eevil",  # right-to-left override
    "Ad\u200da",  # zero-width joiner
    "A\u2066da",  # left-to-right isolate
    "Ada\x00",  # NUL
    "Ada\r\nSet-Cookie: x",  # CR/LF
    "\ufeffAda",  # zero-width no-break space
    "Ada\u2028",  # line separator
]


def open_table(client: FlaskClient) -> str:
    created = client.post("/v1/tables", json={"game": "pig10", "seats": 2})
    assert created.status_code == 201
    table_id: str = created.get_json()["id"]
    return table_id


@pytest.mark.parametrize("name", DISGUISES)
def test_a_name_that_could_disguise_itself_is_refused_and_writes_nothing(
    client: FlaskClient, fake_redis: fakeredis.FakeRedis, name: str
) -> None:
    table_id = open_table(client)
    stream = f"game:{{{table_id}}}:events"
    length = fake_redis.xlen(stream)
    refused = client.post(f"/v1/tables/{table_id}/seats", json={"name": name})
    assert refused.status_code == 422
    problem = refused.get_json()
    assert problem["type"] == "/problems/invalid-body"
    assert "control or format characters" in problem["errors"]["name"][0]
    assert fake_redis.xlen(stream) == length
    bots = [{"seat": 1, "bot": "random", "name": name}]
    refused = client.post("/v1/tables", json={"game": "pig10", "seats": 2, "bots": bots})
    assert refused.status_code == 422


def test_names_are_normalised_and_trimmed(client: FlaskClient) -> None:
    table_id = open_table(client)
    taken = client.post(f"/v1/tables/{table_id}/seats", json={"name": "  Jose\u0301  "})
    assert taken.status_code == 201
    assert taken.get_json()["table"]["seats"][0]["name"] == "Jos\u00e9"
    blank = client.post(f"/v1/tables/{table_id}/seats", json={"name": "   "})
    assert blank.status_code == 422


@pytest.mark.parametrize("path", ["/", "/v1/games", "/static/app.js", "/openapi.yaml", "/nope"])
def test_every_answer_forbids_sniffing_and_carries_a_content_policy(
    client: FlaskClient, path: str
) -> None:
    answer = client.get(path, buffered=True)
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    policy = answer.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in policy
    if answer.mimetype == "text/html":
        assert "script-src 'self'" in policy
    else:
        assert policy.startswith("default-src 'none'")


def test_a_chunked_body_over_the_limit_is_too_large_not_malformed(client: FlaskClient) -> None:
    """A body without Content-Length (chunked) longer than the limit is a 413, as one with it."""
    big = b'{"game": "pig10", "seats": 2, "entropy": "' + b"e" * 100_000 + b'"}'
    answer = client.post(
        "/v1/tables",
        input_stream=io.BytesIO(big),
        headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"},
        environ_overrides={"wsgi.input_terminated": True},
    )
    assert answer.status_code == 413
    assert answer.get_json()["type"] == "/problems/body-too-large"
    small = b'{"game": "pig10", "seats": 2}'
    answer = client.post(
        "/v1/tables",
        input_stream=io.BytesIO(small),
        headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"},
        environ_overrides={"wsgi.input_terminated": True},
    )
    assert answer.status_code == 201
