"""The envelope every stored event travels in, its canonical JSON and its SHA-256 chain."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from domain.rules import Event

GENESIS = "0" * 64
"""The `prev` of a stream's first event."""


def canonical_json(value: Any) -> bytes:
    """The one byte form of a JSON value that hashes are computed over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


@dataclass(frozen=True)
class Position:
    """Where a stream stands: how many events it holds and the hash of the last one."""

    version: int
    head: str = GENESIS


START = Position(0, GENESIS)


@dataclass(frozen=True)
class Recorded:
    """An event as stored: numbered, typed, versioned, with metadata and its link in the chain."""

    seq: int
    type: str
    v: int
    data: Mapping[str, Any]
    meta: Mapping[str, Any]
    prev: str
    hash: str
    raw: bytes = field(default=b"", compare=False, repr=False)
    """The canonical JSON of `body()` that `hash` was computed over, where it is at hand."""

    @property
    def event(self) -> Event:
        return Event(self.type, self.data, self.v)

    @property
    def position(self) -> Position:
        return Position(self.seq, self.hash)

    def body(self) -> dict[str, Any]:
        """The hashed fields."""
        return {
            "seq": self.seq,
            "type": self.type,
            "v": self.v,
            "data": self.data,
            "meta": self.meta,
            "prev": self.prev,
        }

    def to_json(self) -> dict[str, Any]:
        return {**self.body(), "hash": self.hash}

    @classmethod
    def from_stored(cls, raw: bytes, digest: str) -> Recorded:
        """A record from the bytes it was stored as (its body) and its hash."""
        body = json.loads(raw)
        return cls(hash=digest, raw=raw, **body)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Recorded:
        return cls(
            seq=data["seq"],
            type=data["type"],
            v=data["v"],
            data=data["data"],
            meta=data["meta"],
            prev=data["prev"],
            hash=data["hash"],
        )

    def computed_hash(self) -> str:
        return hashlib.sha256(canonical_json(self.body())).hexdigest()


def seal(events: Iterable[Event], meta: Mapping[str, Any], after: Position) -> list[Recorded]:
    """Number and chain new events so they follow `after`."""
    records = []
    seq, prev = after.version, after.head
    for event in events:
        seq += 1
        body = {
            "seq": seq,
            "type": event.type,
            "v": event.v,
            "data": event.data,
            "meta": meta,
            "prev": prev,
        }
        raw = canonical_json(body)
        digest = hashlib.sha256(raw).hexdigest()
        records.append(Recorded(seq, event.type, event.v, event.data, meta, prev, digest, raw))
        prev = digest
    return records


class ChainBroken(Exception):
    """The log does not verify: an entry was altered, removed, reordered or inserted."""

    def __init__(self, seq: int, reason: str) -> None:
        super().__init__(f"event {seq}: {reason}")
        self.seq = seq
        self.reason = reason


def verify_chain(
    records: Iterable[Recorded],
    after: Position = START,
    *,
    hash_of: Callable[[Recorded], str] = Recorded.computed_hash,
) -> Position:
    """Check numbering, links and hashes of `records` following `after`; return the new head."""
    position = after
    for record in records:
        if record.seq != position.version + 1:
            raise ChainBroken(record.seq, f"expected seq {position.version + 1}")
        if record.prev != position.head:
            raise ChainBroken(record.seq, "prev does not match the hash of the event before")
        if hash_of(record) != record.hash:
            raise ChainBroken(record.seq, "hash does not match the event's content")
        position = record.position
    return position
