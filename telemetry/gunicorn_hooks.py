"""Gunicorn's server hooks for Spieltisch's web server (`gunicorn --config
python:telemetry.gunicorn_hooks`, as the Procfile runs it; `launcher.server_options` sets the
same for the `spieltisch` command). Gunicorn reads every name here that is one of its settings,
so this module defines hooks only.
"""

from __future__ import annotations

from typing import Any

from telemetry.logs import as_json, log_json
from telemetry.metrics import prepare_multiprocess_dir, process_exited


def on_starting(server: Any) -> None:
    """In the master, before it forks: JSON log lines for it and every worker it forks (gunicorn's
    own lines too), and a multiprocess directory without the files of dead processes."""
    log_json()
    for handler in server.log.error_log.handlers:
        as_json(handler)
    prepare_multiprocess_dir()


def child_exit(server: Any, worker: Any) -> None:
    """A worker process exited (or was killed): its streams no longer count as open."""
    process_exited(worker.pid)
