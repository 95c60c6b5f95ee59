"""`python -m service`: run the service on one machine (embedded unless REDIS_URL is set)."""

from __future__ import annotations

import argparse

from service.app import create_app


def main() -> None:
    parser = argparse.ArgumentParser(description="Run the Spieltisch game service.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    create_app().run(host=args.host, port=args.port, threaded=True)


if __name__ == "__main__":
    main()
