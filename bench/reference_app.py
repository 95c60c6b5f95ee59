"""The service as the Procfile runs it, plus the reference endpoint `bench/http_moves.py` uses.

`POST /bench/reference/<stream>` does only what the reference is defined as: read the last 50
entries of a stream and append one entry conditionally (the explicit id one above the last one,
so a stale id fails), with a JSON field of about 300 bytes, and answer with a small JSON body.
It runs in the same gunicorn workers, on the same Redis client, as the real API.

    REDIS_URL=redis://127.0.0.1:6379/14 gunicorn 'bench.reference_app:web_app()'
"""

from __future__ import annotations

import json
import time

import redis
from flask import Flask, Response, jsonify, request

import bootstrap

REFERENCE_READ = 50
"""How many entries the reference reads before it appends."""
REFERENCE_KEY = "bench:reference:{}"
PAD = "x" * 220


def reference_key(stream: str) -> str:
    return REFERENCE_KEY.format(stream)


def reference_entry(number: int) -> str:
    """The ~300-byte JSON field of a reference entry."""
    return json.dumps(
        {
            "seq": number,
            "type": "bench.Reference",
            "data": {"pad": PAD},
            "time": time.time(),
        }
    )


def web_app() -> Flask:
    app = bootstrap.web_app()
    client: redis.Redis = app.extensions["redis"]

    @app.post("/bench/reference/<stream>")
    def reference(stream: str) -> tuple[Response, int]:
        request.get_json(silent=True)  # read the body, as the real API does
        key = reference_key(stream)
        entries: list[tuple[bytes, dict[bytes, bytes]]] = client.xrevrange(  # type: ignore[assignment]
            key, "+", "-", count=REFERENCE_READ
        )
        last = int(entries[0][0].split(b"-")[0]) if entries else 0
        try:
            client.xadd(key, {"e": reference_entry(last + 1)}, id=f"{last + 1}-0")
        except redis.ResponseError:
            return jsonify({"conflict": True, "version": last}), 409
        return jsonify({"version": last + 1, "read": len(entries)}), 200

    return app
