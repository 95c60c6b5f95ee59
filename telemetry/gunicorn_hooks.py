"""Gunicorn's settings for Spieltisch's web server (`gunicorn --config
python:telemetry.gunicorn_hooks`, as the Procfile runs it; `launcher.Server` reads it the same
way for the `spieltisch` command): its logger, its server hooks, and its answer to a request it
refuses before the app sees it. Gunicorn reads every name here that is one of its settings; the
others are private.
"""

from __future__ import annotations

import json
import socket
from typing import Any

from gunicorn import util
from gunicorn.glogging import Logger

from telemetry.logs import (
    REQUEST_ID_HEADER,
    REQUEST_ID_META,
    accepted_request_id,
    as_json,
    log_json,
)
from telemetry.metrics import prepare_multiprocess_dir, process_exited


class JsonLogger(Logger):  # type: ignore[misc]  # gunicorn ships no type hints
    """Gunicorn's own lines as JSON lines from the first ("Starting gunicorn", written before
    any hook runs), in the master and every worker it forks."""

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)  # again on a reload, which sets its handlers anew
        for handler in self.error_log.handlers:
            as_json(handler)


logger_class = JsonLogger

# Gunicorn 25.1+ opens a control socket at one path per user ($XDG_RUNTIME_DIR or ~/.gunicorn),
# which every master on the host takes over in turn: a `gunicornc` command would reach whichever
# started last, and the first to stop removes the others' socket. The process manager's signals
# are how Spieltisch's servers are run.
control_socket_disable = True

# gunicorn_h1c, gunicorn's C parser of request lines and headers (picohttpparser), where the
# `fast` extra installed it (deployments, tests, benches): 4-7% less web CPU a move than
# gunicorn's Python parser, which serves where it is not (the quick start's install).
http_parser = "auto"


_PROTOCOL_PROBLEMS = {400: "bad-request", 500: "internal-error"}
"""The problem slug (openapi.yaml's) of each status gunicorn refuses a request with; any other
status (414 for a request line too long, 431 for headers too large, 501 for a transfer coding it
does not know, where the parser tells that apart...) is an `http-error`."""


_NOTHING_TO_RUN = "default-src 'none'; frame-ancestors 'none'"
"""The Content-Security-Policy of every answer that is not a page, as the app sends it
(`service.app.NOTHING_TO_RUN`; telemetry sits below service, and gunicorn's master imports no
Flask: `tests/test_e2e_operations.py` holds the two equal)."""


def _write_problem(sock: socket.socket, status: int, reason: str, message: str) -> None:
    """Gunicorn's answer to a request it cannot hand to the app (a malformed request line, a
    header too large, a broken chunk), as the app answers its own errors: a problem in
    `application/problem+json` naming what was wrong, where gunicorn writes an HTML page, with
    the app's security headers and a request id of its own (the request's cannot be trusted to
    have been read)."""
    slug = _PROTOCOL_PROBLEMS.get(status, "http-error")
    request_id = accepted_request_id(None)
    body = json.dumps(
        {
            "type": f"/problems/{slug}",
            "title": reason,
            "status": status,
            "detail": message or "the server failed; retry later",
            REQUEST_ID_META: request_id,
        }
    ).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/problem+json\r\n"
        f"Content-Length: {len(body)}\r\n"
        "X-Content-Type-Options: nosniff\r\n"
        f"Content-Security-Policy: {_NOTHING_TO_RUN}\r\n"
        f"{REQUEST_ID_HEADER}: {request_id}\r\n"
        "\r\n"
    )
    util.write_nonblock(sock, head.encode("latin-1") + body)


def on_starting(server: Any) -> None:
    """In the master, before it forks: JSON log lines for every other logger of it and of every
    worker it forks, a multiprocess directory without the files of dead processes, and problems
    instead of HTML pages for the requests gunicorn refuses itself."""
    log_json()
    prepare_multiprocess_dir()
    # The workers call it through the module (`util.write_error`), in the processes forked
    # from here; gunicorn has no setting for it.
    util.write_error = _write_problem


def child_exit(server: Any, worker: Any) -> None:
    """A worker process exited (or was killed): its streams no longer count as open."""
    process_exited(worker.pid)
