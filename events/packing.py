"""How a v2 event's canonical JSON is kept in its stream entry: deflated against a fixed
dictionary of typical events.

The events of a game repeat the same keys, type names and command shapes, so deflate with a
preset dictionary (zlib's `zdict`) keeps a 190-byte event in a few dozen. The hash covers the
canonical JSON, not these bytes: packing is the store's business only, and bundles, the audit
and `spieltisch verify` never see it. Stored bytes that start with `{` are JSON as written
(envelope 1); `PACKED_1` starts raw deflate (a 16 KiB window) against `zdict-1.txt`, a few of
the commonest events of each game's golden log in envelope 2. That file must never change: a
new dictionary takes a new first byte, and every one ever used stays readable.
"""

from __future__ import annotations

import zlib
from functools import cache
from importlib.resources import files

PACKED_1 = b"\x01"
WINDOW_BITS = -14
"""Raw deflate (no header: the first byte says what follows) in a 16 KiB window."""
DICTIONARY_1 = files("events").joinpath("zdict-1.txt").read_bytes()


@cache
def _primed() -> zlib._Compress:
    # A compressor that has read the dictionary, copied for each event: cheaper than reading
    # the dictionary again (copy() holds the compressor's lock, so threads may share it).
    return zlib.compressobj(6, zlib.DEFLATED, WINDOW_BITS, 4, zdict=DICTIONARY_1)


def pack(raw: bytes) -> bytes:
    """What to store for the canonical JSON `raw` of a v2 event."""
    compressor = _primed().copy()
    return PACKED_1 + compressor.compress(raw) + compressor.flush()


def unpack(stored: bytes) -> bytes:
    """The canonical JSON a stream entry holds, packed or not."""
    if stored[:1] != PACKED_1:
        return stored
    inflater = zlib.decompressobj(WINDOW_BITS, zdict=DICTIONARY_1)
    return inflater.decompress(stored[1:]) + inflater.flush()
