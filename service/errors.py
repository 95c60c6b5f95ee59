"""Problem details (RFC 9457): every error the API returns, with a stable `type` per kind."""

from __future__ import annotations

from typing import Any

from flask import Flask, Response, json
from werkzeug.exceptions import HTTPException

PROBLEM_JSON = "application/problem+json"
PROBLEM_BASE = "/problems/"
"""Problem types are relative references, e.g. `/problems/illegal-move` (listed in openapi.yaml)."""


class Problem(Exception):
    """An error answered as `application/problem+json`."""

    def __init__(self, status: int, slug: str, title: str, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.status = status
        self.slug = slug
        self.title = title
        self.detail = detail
        self.extra = extra

    def to_json(self) -> dict[str, Any]:
        return {
            "type": PROBLEM_BASE + self.slug,
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
            **self.extra,
        }


def problem_response(problem: Problem) -> Response:
    return Response(json.dumps(problem.to_json()), status=problem.status, mimetype=PROBLEM_JSON)


# Werkzeug's own HTTP errors (404 for unknown routes, 405, 413, 415 ...) keep their status and
# get a stable slug here.
HTTP_SLUGS = {
    400: "bad-request",
    401: "unauthorized",
    404: "not-found",
    405: "method-not-allowed",
    406: "not-acceptable",
    413: "body-too-large",
    415: "unsupported-media-type",
}


def register_error_handlers(app: Flask) -> None:
    @app.errorhandler(Problem)
    def on_problem(problem: Problem) -> Response:
        return problem_response(problem)

    @app.errorhandler(HTTPException)
    def on_http_exception(error: HTTPException) -> Response:
        status = error.code or 500
        detail = error.description or error.name
        if status == 413:
            limit = app.config.get("MAX_CONTENT_LENGTH")
            detail = f"the request body is larger than the limit of {limit} bytes"
        response = problem_response(
            Problem(status, HTTP_SLUGS.get(status, "http-error"), error.name, detail)
        )
        if status == 405 and error.valid_methods:  # type: ignore[attr-defined]
            response.headers["Allow"] = ", ".join(error.valid_methods)  # type: ignore[attr-defined]
        return response

    @app.errorhandler(Exception)
    def on_unexpected(error: Exception) -> Response:
        app.logger.exception("unhandled error", exc_info=error)
        return problem_response(
            Problem(
                500, "internal-error", "Internal Server Error", "the server failed; retry later"
            )
        )
