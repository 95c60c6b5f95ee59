"""Chance: the draws a game's rules may make, and the named, versioned generators making them.

`setup` and `decide` draw every chance outcome through `Chance` and nothing else. Each generator
has an algorithm id, recorded in `table.GameCreated`, so a log is always re-decided with the
generator it was played with:

`sha256-ctr/1` (every new game) is ours, specified here in full; its outputs never change, and
the known-answer tests in `tests/test_chance.py` pin them:

- The key is the 32 bytes `dice.rng_at` derives from the seed, the entropy and the position.
- The byte stream is block 0, block 1, ... where block i = SHA-256(key || i as 8 bytes, big-endian);
  bytes are taken from it in order, each once.
- `randrange(n)`, n >= 1: 0 for n = 1 (no bytes taken); otherwise with b = bit length of n - 1,
  take ceil(b / 8) bytes as a big-endian integer, keep its low b bits, and return it if below n,
  else draw again (rejection sampling: uniform, no modulo bias).
- `randint(a, b)` = a + randrange(b - a + 1); `choice(s)` = s[randrange(len(s))].
- `shuffle(x)`: Fisher-Yates from the end: for i = len(x) - 1 down to 1, swap x[i] and
  x[randrange(i + 1)].
- `sample(population, k, counts=c)`: the pool is the population with its i-th item repeated
  c[i] times (once each without `counts`), in order; for i = 0 to k - 1, swap pool[i] and
  pool[i + randrange(len(pool) - i)]; the sample is pool[:k]. A weighted pick from a multiset is
  `sample(kinds, 1, counts=counts)`, or `multiset.draw`.

`python-random` is `random.Random` seeded with the key as a big-endian integer: what every game
was dealt with before `sha256-ctr/1`. Python keeps only its seeding and `random()` stable across
versions, not `shuffle`, `sample` or `randrange`, so it is kept for those logs only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, MutableSequence, Sequence
from random import Random
from typing import Any, Protocol, TypeVar

T = TypeVar("T")

SHA256_CTR = "sha256-ctr/1"
PYTHON_RANDOM = "python-random"
CURRENT = SHA256_CTR
"""The generator every new game is played with."""


class Chance(Protocol):
    """Exactly the draws the rules make; `random.Random` has them too (as `python-random`)."""

    def randrange(self, n: int, /) -> int:
        """An integer in [0, n), uniformly."""
        ...

    def randint(self, a: int, b: int, /) -> int:
        """An integer in [a, b], uniformly."""
        ...

    def choice(self, seq: Sequence[T], /) -> T:
        """One item of a non-empty `seq`, uniformly."""
        ...

    def shuffle(self, x: MutableSequence[Any], /) -> None:
        """Put `x` in a uniformly random order, in place."""
        ...

    def sample(
        self, population: Sequence[T], k: int, /, *, counts: Sequence[int] | None = None
    ) -> list[T]:
        """`k` distinct draws (without replacement) from `population`, each item repeated
        `counts[i]` times if given."""
        ...


class Sha256Chance:
    """The `sha256-ctr/1` generator: SHA-256 in counter mode over a 32-byte key."""

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._block = 0
        self._buffer = b""

    def _take(self, count: int) -> bytes:
        while len(self._buffer) < count:
            counter = self._block.to_bytes(8, "big")
            self._buffer += hashlib.sha256(self._key + counter).digest()
            self._block += 1
        taken, self._buffer = self._buffer[:count], self._buffer[count:]
        return taken

    def randrange(self, n: int, /) -> int:
        if n < 1:
            raise ValueError(f"randrange needs n >= 1, not {n}")
        bits = (n - 1).bit_length()
        while True:
            candidate = int.from_bytes(self._take((bits + 7) // 8), "big") & ((1 << bits) - 1)
            if candidate < n:
                return candidate

    def randint(self, a: int, b: int, /) -> int:
        return a + self.randrange(b - a + 1)

    def choice(self, seq: Sequence[T], /) -> T:
        if not seq:
            raise IndexError("cannot choose from an empty sequence")
        return seq[self.randrange(len(seq))]

    def shuffle(self, x: MutableSequence[Any], /) -> None:
        for i in range(len(x) - 1, 0, -1):
            j = self.randrange(i + 1)
            x[i], x[j] = x[j], x[i]

    def sample(
        self, population: Sequence[T], k: int, /, *, counts: Sequence[int] | None = None
    ) -> list[T]:
        repeats = counts if counts is not None else [1] * len(population)
        if len(repeats) != len(population):
            raise ValueError("counts must give one count per item of the population")
        pool = [item for item, count in zip(population, repeats, strict=True) for _ in range(count)]
        if not 0 <= k <= len(pool):
            raise ValueError(f"cannot sample {k} from {len(pool)}")
        for i in range(k):
            j = i + self.randrange(len(pool) - i)
            pool[i], pool[j] = pool[j], pool[i]
        return pool[:k]


def python_random(key: bytes) -> Random:
    """The `python-random` generator of the games recorded before `sha256-ctr/1`."""
    return Random(int.from_bytes(key, "big"))


GENERATORS: dict[str, Callable[[bytes], Chance]] = {
    SHA256_CTR: Sha256Chance,
    PYTHON_RANDOM: python_random,
}
"""Every generator a log may name, by algorithm id; an id once used is never reused."""


class UnknownChance(ValueError):
    """A log names a generator this code does not have."""

    def __init__(self, algorithm: str) -> None:
        super().__init__(f"unknown chance algorithm {algorithm!r}; known: {sorted(GENERATORS)}")
        self.algorithm = algorithm


def generator(algorithm: str, key: bytes) -> Chance:
    """The generator `algorithm` keyed with `key`."""
    try:
        make = GENERATORS[algorithm]
    except KeyError:
        raise UnknownChance(algorithm) from None
    return make(key)
