"""What operators see of Spieltisch: Prometheus metrics (`metrics`), JSON-lines logs and request
ids (`logs`), and the gunicorn hooks that set both up for the Procfile's web server.

A leaf beside `domain/`: it imports nothing of Spieltisch, so `events/`, `service/` and
`workers/` can all record into it; the composition root (`bootstrap`) builds what they record into.
"""
