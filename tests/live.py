"""Talking to servers running in other processes: the test Redis, a free port, JSON over HTTP."""

from __future__ import annotations

import json
import os
import socket
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit


def own_redis_url() -> str:
    """`SPIELTISCH_TEST_REDIS_URL` (default: database 13 of 127.0.0.1:6379). Under pytest-xdist
    each test process `gwN` takes the database N below it, so that processes running side by
    side never flush each other's data."""
    url = urlsplit(os.environ.get("SPIELTISCH_TEST_REDIS_URL", "redis://127.0.0.1:6379/13"))
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        return url.geturl()
    database = int(url.path.strip("/") or 0) - int(worker.removeprefix("gw"))
    if database < 0:
        raise RuntimeError(f"test process {worker} has no database below {url.geturl()}")
    return url._replace(path=f"/{database}").geturl()


TEST_REDIS_URL = own_redis_url()
"""The real Redis the tests use; they flush only this database."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def call(
    base: str,
    method: str,
    path: str,
    body: Any = None,
    token: str | None = None,
    *,
    headers: Mapping[str, str] | None = None,
) -> tuple[int, Any]:
    """The status and the JSON body; a problem answer also names its `content_type`."""
    request = urllib.request.Request(f"{base}{path}", method=method, headers=dict(headers or {}))
    if body is not None:
        request.data = json.dumps(body).encode()
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        with error:  # its body is the open connection: close it, as a with-block does above
            problem = json.load(error)
        problem["content_type"] = error.headers["Content-Type"]
        return error.code, problem
