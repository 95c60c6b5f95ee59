"""Deterministic chance: every random outcome derives from the secret seed and a log position.

Given the seed (revealed when the game ends), the entropy the players mixed in (public in the log)
and the position of the events a command appended, anyone can re-derive the generator that command
used, and so check every shuffle and roll recorded in the log.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from domain.chance import CURRENT, Chance, generator

DOMAIN_TAG = b"spieltisch/rng/v1"
SEED_BYTES = 32


def commitment(seed: bytes) -> str:
    """The public SHA-256 commitment to a secret seed."""
    return hashlib.sha256(seed).hexdigest()


def rng_key(seed: bytes, entropy: Sequence[str], position: int) -> bytes:
    """The 32-byte key of the generator for the command whose first event lands at `position`:
    SHA-256 over the tag, then the seed and each entropy string (each prefixed with its length
    as 4 bytes, big-endian), then the position as 8 bytes, big-endian."""
    digest = hashlib.sha256(DOMAIN_TAG)
    digest.update(len(seed).to_bytes(4, "big") + seed)
    for item in entropy:
        encoded = item.encode()
        digest.update(len(encoded).to_bytes(4, "big") + encoded)
    digest.update(position.to_bytes(8, "big"))
    return digest.digest()


def rng_at(seed: bytes, entropy: Sequence[str], position: int, algorithm: str = CURRENT) -> Chance:
    """The generator (`algorithm`, as `GameCreated` names it) for the command whose first event
    lands at `position`."""
    return generator(algorithm, rng_key(seed, entropy, position))
