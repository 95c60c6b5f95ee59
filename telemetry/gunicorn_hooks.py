"""Gunicorn's settings for Spieltisch's web server (`gunicorn --config
python:telemetry.gunicorn_hooks`, as the Procfile runs it; `launcher.Server` reads it the same
way for the `spieltisch` command): its logger and its server hooks. Gunicorn reads every name
here that is one of its settings, so this module defines nothing else.
"""

from __future__ import annotations

from typing import Any

from gunicorn.glogging import Logger

from telemetry.logs import as_json, log_json
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


def on_starting(server: Any) -> None:
    """In the master, before it forks: JSON log lines for every other logger of it and of every
    worker it forks, and a multiprocess directory without the files of dead processes."""
    log_json()
    prepare_multiprocess_dir()


def child_exit(server: Any, worker: Any) -> None:
    """A worker process exited (or was killed): its streams no longer count as open."""
    process_exited(worker.pid)
