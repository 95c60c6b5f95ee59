"""`spieltisch` / `python -m service`: run the service on one machine (embedded unless REDIS_URL
is set); `spieltisch verify BUNDLE ...` checks an exported game offline instead."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from service.verifier import main as verify


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["verify"]:
        sys.exit(verify(args[1:]))
    parser = argparse.ArgumentParser(
        description="Run the Spieltisch game service; `spieltisch verify BUNDLE` checks a game.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    options = parser.parse_args(args)
    # Imported only to serve: verifying needs neither Flask nor Redis.
    from service.app import create_app  # noqa: PLC0415

    create_app().run(host=options.host, port=options.port, threaded=True)


if __name__ == "__main__":
    main()
