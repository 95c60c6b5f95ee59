"""What the web app tells its operators: a request id on every request, one JSON log line and
the request metrics per request, and the metrics themselves at `GET /metrics`.

`observe` registers Flask hooks (before and after every request), so the routes know nothing of it.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import time

from flask import Flask, Response, abort, g, request
from werkzeug.exceptions import Unauthorized

from service.config import Config
from telemetry.logs import ACCESS_LOG, REQUEST_ID, REQUEST_ID_HEADER, accepted_request_id
from telemetry.metrics import CONTENT_TYPE, UNMATCHED, Metrics

ACCESS = logging.getLogger(ACCESS_LOG)
METRICS_PATH = "/metrics"


def observe(app: Flask, metrics: Metrics, config: Config) -> None:
    """Register the hooks and `/metrics` on `app`. Call it before any other `before_request`
    hook is registered (the rate limiter's refuses requests there), so that every request,
    refused ones included, has its id."""

    @app.before_request
    def start() -> None:
        g.started = time.perf_counter()
        g.request_id = accepted_request_id(request.headers.get(REQUEST_ID_HEADER))
        g.request_id_token = REQUEST_ID.set(g.request_id)

    @app.after_request
    def finish(response: Response) -> Response:
        seconds = time.perf_counter() - g.get("started", time.perf_counter())
        response.headers[REQUEST_ID_HEADER] = g.get("request_id", "")
        route = request.url_rule.rule if request.url_rule else UNMATCHED
        metrics.request(request.method, route, response.status_code, seconds)
        if ACCESS.isEnabledFor(logging.INFO):  # the line's fields cost a little: only if written
            ACCESS.info(
                "%s %s %d",
                request.method,
                route,
                response.status_code,
                extra={
                    "method": request.method,
                    "route": route,
                    "path": request.path,
                    "status": response.status_code,
                    "duration_ms": round(seconds * 1000, 3),
                    "table_id": (request.view_args or {}).get("table_id"),
                    "remote_addr": request.remote_addr,
                },
            )
        return response

    @app.teardown_request
    def forget(_: BaseException | None) -> None:
        if (token := g.pop("request_id_token", None)) is not None:
            REQUEST_ID.reset(token)

    @app.get(METRICS_PATH)
    def scrape() -> Response:
        """The metrics, for the callers `SPIELTISCH_METRICS` admits."""
        admit(config)
        return Response(metrics.render(), content_type=CONTENT_TYPE)


def admit(config: Config) -> None:
    """Refuse a scrape `config.metrics` does not allow: `off` or `loopback` from elsewhere as if
    there were no such route (404), a missing or wrong token as 401."""
    mode = config.metrics
    if mode == "public":
        return
    if mode == "token":
        sent = request.headers.get("Authorization", "")
        expected = f"Bearer {config.metrics_token}"
        if not hmac.compare_digest(sent.encode(), expected.encode()):
            raise Unauthorized("send the metrics token as 'Authorization: Bearer <token>'")
        return
    if mode == "loopback" and from_this_host(config):
        return
    abort(404)


def from_this_host(config: Config) -> bool:
    """Whether the request came from this machine: a loopback address, and, unless proxies are
    trusted to say who the client is, not passed on by a proxy (a proxy on this host would make
    every client look local)."""
    if config.trusted_proxies == 0 and "X-Forwarded-For" in request.headers:
        return False
    try:
        return ipaddress.ip_address(request.remote_addr or "").is_loopback
    except ValueError:
        return False
