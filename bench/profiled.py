"""The shipped web app with its requests profiled, for `bench/load.py --profile DIR`.

Each gunicorn worker keeps one cProfile of every request but live streams (which would hold
it for their whole life) and writes it to `DIR/web-<pid>.prof` every few hundred requests.
A profiler runs one thread at a time, so profiled requests take turns: the figures of a
profiled run are for the profile, not for throughput.
"""

from __future__ import annotations

import cProfile
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from flask import Flask

import bootstrap

DUMP_EVERY = 300


def web_app() -> Flask:
    app = bootstrap.web_app()
    target = Path(os.environ["SPIELTISCH_BENCH_PROFILE"]) / f"web-{os.getpid()}.prof"
    profile = cProfile.Profile()
    lock = threading.Lock()
    served = 0
    inner = app.wsgi_app

    def profiled(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        nonlocal served
        if environ.get("PATH_INFO", "").endswith("/stream"):
            return inner(environ, start_response)
        with lock:
            profile.enable()
            try:
                body = list(inner(environ, start_response))
            finally:
                profile.disable()
            served += 1
            if served % DUMP_EVERY == 0:
                profile.dump_stats(target)
        return body

    app.wsgi_app = profiled  # type: ignore[method-assign]
    return app
