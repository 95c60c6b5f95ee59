"""The `spieltisch` command: serve the service with gunicorn, as the Procfile's `web:` does, or
`spieltisch verify BUNDLE ...` to check an exported game offline.

The service's modules are imported only where they run: the app in each gunicorn worker, after
its gevent worker class has patched the standard library, and the verifier for `verify`. The
master imports none of them, as under the Procfile's line: redis-py imports `ssl`, and gevent
patches a module imported before it only partly (it warns so at every start).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gunicorn.app.base import BaseApplication

from telemetry import gunicorn_hooks

if TYPE_CHECKING:
    from flask import Flask


class Server(BaseApplication):  # type: ignore[misc]  # gunicorn ships no type hints
    """Gunicorn, the Procfile's production server, run from the `spieltisch` command."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        # The Procfile's settings module first, read as `gunicorn --config python:...` reads it
        # (every name that is a setting), so both servers share its logger and hooks.
        for name, value in vars(gunicorn_hooks).items():
            if name in self.cfg.settings:
                self.cfg.set(name, value)
        for name, value in self.options.items():
            self.cfg.set(name, value)

    def load(self) -> Flask:
        import bootstrap  # noqa: PLC0415 (here, in the patched worker: see the module's docstring)

        return bootstrap.web_app()


def server_options(host: str, port: int, environ: dict[str, str]) -> dict[str, Any]:
    """Gunicorn's settings for `spieltisch`: the Procfile's gevent workers (a slow client holds
    a greenlet, not one of a few threads); embedded (no `REDIS_URL`), one process (the fakeredis
    and the bot worker live in it); with `REDIS_URL`, as many processes as the Procfile."""
    embedded = not environ.get("REDIS_URL")
    processes = 1 if embedded else int(environ.get("WEB_CONCURRENCY", "2"))
    return {
        "bind": f"{host}:{port}",
        "workers": processes,
        "worker_class": "gevent",
        "worker_connections": int(environ.get("WEB_CONNECTIONS", "5000")),
        # No gunicorn access log: the app logs each request as a JSON line (service.observe).
    }


def main(argv: Sequence[str] | None = None) -> None:
    """`spieltisch`: serve on one machine (embedded unless REDIS_URL is set), or
    `spieltisch verify BUNDLE ...` to check an exported game offline."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["verify"]:
        from service.verifier import main as verify  # noqa: PLC0415 (only for `verify`)

        sys.exit(verify(args[1:]))
    parser = argparse.ArgumentParser(
        description="Run the Spieltisch game service; `spieltisch verify BUNDLE` checks a game.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    options = parser.parse_args(args)
    Server(server_options(options.host, options.port, dict(os.environ))).run()


if __name__ == "__main__":
    main()
