"""The HTTP service: the Flask app, routes, schemas, errors, views, live streams, and the
application service (`service.tables`). Built by the composition root, `bootstrap`."""
