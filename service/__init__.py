"""The HTTP service: Flask app factory, routes, schemas, errors and the table service."""

from service.app import create_app

__all__ = ["create_app"]
