"""Gunicorn's own refusals (`telemetry.gunicorn_hooks._write_problem`) carry the headers the
app's answers carry, with the app's values: telemetry sits below service and keeps its own copy
of them, so this holds the two together without starting gunicorn
(`tests/test_e2e_operations.py` asks the real server)."""

from __future__ import annotations

import json
import re
import socket
from typing import Any

import pytest
from flask.testing import FlaskClient

from telemetry.gunicorn_hooks import _write_problem
from telemetry.logs import REQUEST_ID_HEADER

SHARED = ("X-Content-Type-Options", "Content-Security-Policy")
"""The security headers every answer of the app that is not a page carries."""


def written(status: int, reason: str, message: str) -> tuple[str, dict[str, str], Any]:
    """What `_write_problem` writes: its status line, headers (by lower-case name) and body."""
    ours, theirs = socket.socketpair()
    with ours, theirs:
        _write_problem(ours, status, reason, message)
        ours.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := theirs.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (h.partition(":") for h in lines)}
    assert int(headers["content-length"]) == len(body)
    return status_line, headers, json.loads(body)


@pytest.mark.parametrize(
    ("status", "reason", "slug"),
    [
        (400, "Bad Request", "bad-request"),
        (414, "URI Too Long", "http-error"),
        (501, "Not Implemented", "http-error"),
        (500, "Internal Server Error", "internal-error"),
    ],
)
def test_a_refusal_carries_the_apps_security_headers_and_a_request_id(
    client: FlaskClient, status: int, reason: str, slug: str
) -> None:
    app_answer = client.get("/v1/no-such-route")
    assert app_answer.mimetype == "application/problem+json"
    status_line, headers, problem = written(status, reason, "what was wrong")
    assert status_line == f"HTTP/1.1 {status} {reason}"
    assert headers["content-type"] == "application/problem+json"
    for name in SHARED:
        assert headers[name.lower()] == app_answer.headers[name], name
    assert re.fullmatch(r"[0-9a-f]{32}", headers[REQUEST_ID_HEADER.lower()])
    assert problem == {
        "type": f"/problems/{slug}",
        "title": reason,
        "status": status,
        "detail": "what was wrong",
        "request_id": headers[REQUEST_ID_HEADER.lower()],
    }


def test_each_refusal_has_a_request_id_of_its_own() -> None:
    ids = {written(400, "Bad Request", "")[1][REQUEST_ID_HEADER.lower()] for _ in range(3)}
    assert len(ids) == 3
