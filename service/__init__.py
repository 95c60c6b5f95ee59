"""The HTTP service: Flask app factory, routes, schemas, errors and the table service.

`create_app` is importable from here (the Procfile's `service:create_app()`), but only loaded
when asked for: the workers import `service.tables` without the web app, and the app imports
the workers' modules to build its own bot machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from service.app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from service.app import create_app  # noqa: PLC0415

        return create_app
    raise AttributeError(f"module 'service' has no attribute {name!r}")
