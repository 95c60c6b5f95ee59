"""Bounds for the loops of tests: a loop that would run forever fails instead, naming what did
not happen."""

from __future__ import annotations

from collections.abc import Iterator

MAX_STEPS = 20_000
"""No game of the suite takes this many moves; a test reaching it has found a game that never
ends (or a loop that never stops)."""


def bounded(what: str, limit: int = MAX_STEPS) -> Iterator[int]:
    """0, 1, 2 ... for a loop that `break`s when done; past `limit` steps the test fails."""
    yield from range(limit)
    raise AssertionError(f"{what}: not done in {limit} steps")
