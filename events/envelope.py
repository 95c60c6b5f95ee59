"""The envelope every stored event travels in, its canonical JSON and its SHA-256 chain."""

from __future__ import annotations

import hashlib
import json
import uuid
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


ENVELOPE = 2
"""The envelope new events are stored in.

v1 stored with every event its `seq`, the `prev` hash and its command's whole `meta`, hashed as
the canonical JSON of all of them. v2 stores only what the stream does not already hold: the
stream id is the `seq` and the entry before holds `prev`, and a command's `meta` (less its
`command_id`) is stored with the first of its events only, under short keys:
`{"e": 2, "t": type, "v": v, "d": data, "m": meta}`. Its hash is the SHA-256 of
`"<seq>:<prev>:"` followed by that canonical JSON, so the chain still binds the number and the
predecessor of each event. A command's id is the first 32 hex digits of its first event's hash,
written as a UUID.
Reading a v2 event gives it back whole (every event of a command carries its `meta`); v1 events
are read and verified as they were written.
"""


def command_id(digest: str) -> str:
    """The id of the command whose first (v2) event has the hash `digest`."""
    return str(uuid.UUID(hex=digest[:32]))


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
    """The bytes stored for the event (the canonical JSON `hash` covers), where at hand."""
    envelope: int = 1

    @property
    def event(self) -> Event:
        return Event(self.type, self.data, self.v)

    @property
    def position(self) -> Position:
        return Position(self.seq, self.hash)

    @property
    def opens_command(self) -> bool:
        """Whether this (v2) event is the first of its command's, the one storing its meta."""
        return self.meta.get("command_id") == command_id(self.hash)

    def body(self) -> dict[str, Any]:
        """The fields of the event."""
        return {
            "seq": self.seq,
            "type": self.type,
            "v": self.v,
            "data": self.data,
            "meta": self.meta,
            "prev": self.prev,
        }

    def stored_body(self) -> dict[str, Any]:
        """What is stored of the event (v1: every field; v2: see `ENVELOPE`)."""
        if self.envelope == 1:
            return self.body()
        stored = {"e": self.envelope, "t": self.type, "v": self.v, "d": self.data}
        if self.opens_command:
            stored["m"] = {k: v for k, v in self.meta.items() if k != "command_id"}
        return stored

    def to_json(self) -> dict[str, Any]:
        """The event whole, with its hash (and its envelope, from v2 on)."""
        extra = {} if self.envelope == 1 else {"envelope": self.envelope}
        return {**self.body(), "hash": self.hash, **extra}

    @classmethod
    def from_stored(
        cls, raw: bytes, digest: str, seq: int, prev: str, meta: Mapping[str, Any] | None
    ) -> Recorded:
        """A record from the bytes it was stored as and its hash; a v2 record is number `seq`,
        follows `prev`, and takes `meta`, its command's, unless it stores that itself."""
        body = json.loads(raw)
        if "e" not in body:
            return cls(hash=digest, raw=raw, **body)
        if "m" in body:
            meta = {**body["m"], "command_id": command_id(digest)}
        return cls(seq, body["t"], body["v"], body["d"], meta or {}, prev, digest, raw, body["e"])

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
            envelope=data.get("envelope", 1),
        )

    def _preimage(self, stored: bytes) -> bytes:
        """What the hash is computed over, given the stored bytes."""
        if self.envelope == 1:
            return stored
        return f"{self.seq}:{self.prev}:".encode() + stored

    def computed_hash(self) -> str:
        """The hash of the event's fields, encoded as its envelope stores them."""
        return hashlib.sha256(self._preimage(canonical_json(self.stored_body()))).hexdigest()

    def stored_hash(self) -> str:
        """The hash of the bytes the event was read from: no need to encode it again."""
        return hashlib.sha256(self._preimage(self.raw)).hexdigest()


def seal(
    events: Iterable[Event], meta: Mapping[str, Any], after: Position, envelope: int = ENVELOPE
) -> list[Recorded]:
    """Number and chain the events of one command (its `meta`) so they follow `after`.
    `envelope` 1 writes the format of logs before v2, for tests and benchmarks of old logs."""
    records: list[Recorded] = []
    seq, prev = after.version, after.head
    if envelope == 2:
        meta = {k: v for k, v in meta.items() if k != "command_id"}
    for event in events:
        seq += 1
        if envelope == 1:
            body: dict[str, Any] = {
                "seq": seq,
                "type": event.type,
                "v": event.v,
                "data": event.data,
                "meta": meta,
                "prev": prev,
            }
            raw = canonical_json(body)
            digest = hashlib.sha256(raw).hexdigest()
            record = Recorded(seq, event.type, event.v, event.data, meta, prev, digest, raw)
        else:
            body = {"e": 2, "t": event.type, "v": event.v, "d": event.data}
            if not records:
                body["m"] = meta
            raw = canonical_json(body)
            digest = hashlib.sha256(f"{seq}:{prev}:".encode() + raw).hexdigest()
            if not records:
                meta = {**meta, "command_id": command_id(digest)}
            record = Recorded(seq, event.type, event.v, event.data, meta, prev, digest, raw, 2)
        records.append(record)
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
    position, before = after, None
    for record in records:
        if record.seq != position.version + 1:
            raise ChainBroken(record.seq, f"expected seq {position.version + 1}")
        if record.prev != position.head:
            raise ChainBroken(record.seq, "prev does not match the hash of the event before")
        if hash_of(record) != record.hash:
            raise ChainBroken(record.seq, "hash does not match the event's content")
        # A v2 event after the first of its command stores no meta: the hash does not cover
        # what it carries, so it must be its command's, as the event before it carries.
        continues = record.envelope > 1 and not record.opens_command
        if continues and before is not None and record.meta != before.meta:
            raise ChainBroken(record.seq, "meta is not that of the command it continues")
        position, before = record.position, record
    return position
