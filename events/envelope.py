"""The envelope every stored event travels in, its canonical JSON and its SHA-256 chain."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from domain.rules import Event

GENESIS = "0" * 64
"""The `prev` of a stream's first event."""


CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
"""`json.dumps` with these arguments, built once: `dumps` builds an encoder on every call."""


def canonical_json(value: Any) -> bytes:
    """The one byte form of a JSON value that hashes are computed over."""
    return CANONICAL.encode(value).encode()


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


SEALED = 3
"""The envelope of an event that carries private values (a seat's token hash, a webhook's URL).

v2's layout, except that in the body the hash covers each private value is replaced by a
commitment, `{"sha256": SHA-256 of "<nonce>:<key>:" followed by the value's canonical JSON}`;
the values and the event's random nonce are stored beside that body, outside the hash, as
`"x": {"n": nonce, "s": {key: value}}`. So an export, which holds the hashed body alone,
verifies without showing them, while the service reads them back and checks each against its
commitment. Events without private values stay v2.
"""
PRIVATE = "x"
"""The key of a v3 event's private values in what is stored."""


def commitment(nonce: str, key: str, value: Any) -> dict[str, str]:
    """What a v3 event's hashed body holds in place of the private `value` under `key`."""
    digest = hashlib.sha256(f"{nonce}:{key}:".encode() + canonical_json(value))
    return {"sha256": digest.hexdigest()}


def conceal(value: Any, private: Collection[str], nonce: str, found: dict[str, Any]) -> Any:
    """`value` with the non-null value of every key in `private`, at any depth, replaced by its
    commitment; the values replaced go into `found`, by key (one value per key and event)."""
    if isinstance(value, Mapping):
        concealed = {}
        for key, item in value.items():
            if key in private and item is not None:
                if found.setdefault(key, item) != item:
                    raise ValueError(f"an event holds two values for the private key {key!r}")
                concealed[key] = commitment(nonce, key, item)
            else:
                concealed[key] = conceal(item, private, nonce, found)
        return concealed
    if isinstance(value, list):
        return [conceal(item, private, nonce, found) for item in value]
    return value


def mentions(encoded: bytes, keys: Collection[str]) -> bool:
    """Whether the canonical JSON `encoded` may hold one of `keys` as a key: most events hold
    none, and looking for them in their bytes is cheaper than walking them (`conceal`). A
    string that spells such a key out only costs that walk, which finds nothing."""
    return any(b'"' + key.encode() + b'":' in encoded for key in keys)


def reveal(value: Any, secrets: Mapping[str, Any], nonce: str) -> Any:
    """`value` with each commitment to one of `secrets` replaced by the value it commits to."""
    if isinstance(value, Mapping):
        return {
            key: secrets[key]
            if key in secrets and item == commitment(nonce, key, secrets[key])
            else reveal(item, secrets, nonce)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [reveal(item, secrets, nonce) for item in value]
    return value


def command_id(digest: str) -> str:
    """The id of the command whose first (v2) event has the hash `digest`: its first 32 hex
    digits in a UUID's groups (as `str(uuid.UUID(hex=...))` writes them, in a third the time;
    every stored event read is numbered by it)."""
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


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
    private: Mapping[str, Any] = field(default_factory=dict, repr=False)
    """A v3 event's private values, by key, which `data` and `meta` hold as commitments; empty
    where they were not read (an export)."""
    nonce: str = field(default="", repr=False)

    @property
    def event(self) -> Event:
        """The event as decided, its private values revealed where they were read."""
        if not self.private:
            return Event(self.type, self.data, self.v)
        return Event(self.type, reveal(self.data, self.private, self.nonce), self.v)

    @property
    def public_event(self) -> Event:
        """The event as exported: private values as their commitments."""
        return Event(self.type, self.data, self.v)

    def private_values_hold(self) -> bool:
        """Whether each private value read beside the event is one its body commits to."""
        body = {"d": self.data, "m": self.meta}
        return all(
            commitment(self.nonce, key, value) in committed(body, key)
            for key, value in self.private.items()
        )

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
        private = body.get(PRIVATE, {})
        return cls(
            seq,
            body["t"],
            body["v"],
            body["d"],
            meta or {},
            prev,
            digest,
            raw,
            body["e"],
            private.get("s", {}),
            private.get("n", ""),
        )

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
        """The hash of the bytes the event was read from: no need to encode it again (but for
        v3, whose stored bytes hold its private values beside the body the hash covers)."""
        if self.envelope >= SEALED:
            return self.computed_hash()
        return hashlib.sha256(self._preimage(self.raw)).hexdigest()


def seal(
    events: Iterable[Event],
    meta: Mapping[str, Any],
    after: Position,
    envelope: int = ENVELOPE,
    *,
    private: Collection[str] = (),
) -> list[Recorded]:
    """Number and chain the events of one command (its `meta`) so they follow `after`.
    `envelope` 1 writes the format of logs before v2, for tests and benchmarks of old logs.
    The values of the keys named `private`, in an event's data or its command's meta, are kept
    out of what the hash covers: such an event is sealed in envelope 3 (see `SEALED`)."""
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
            hashed = raw = canonical_json(body)
            nonce, found = "", dict[str, Any]()
            if mentions(hashed, private):
                nonce = os.urandom(16).hex()
                body = conceal(body, private, nonce, found)
            if found:
                body["e"] = SEALED
                hashed = canonical_json(body)
                raw = canonical_json({**body, PRIVATE: {"n": nonce, "s": found}})
            digest = hashlib.sha256(f"{seq}:{prev}:".encode() + hashed).hexdigest()
            if not records:
                meta = {**body["m"], "command_id": command_id(digest)}
            record = Recorded(
                seq,
                event.type,
                event.v,
                body["d"],
                meta,
                prev,
                digest,
                raw,
                body["e"],
                found,
                nonce if found else "",
            )
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
        if not record.private_values_hold():
            raise ChainBroken(record.seq, "a private value does not match its commitment")
        # A v2 event after the first of its command stores no meta: the hash does not cover
        # what it carries, so it must be its command's, as the event before it carries.
        continues = record.envelope > 1 and not record.opens_command
        if continues and before is not None and record.meta != before.meta:
            raise ChainBroken(record.seq, "meta is not that of the command it continues")
        position, before = record.position, record
    return position


def committed(value: Any, key: str) -> list[Any]:
    """Every value held under `key` at any depth of `value`."""
    if isinstance(value, Mapping):
        held = [item for name, item in value.items() if name == key]
        return held + [found for item in value.values() for found in committed(item, key)]
    if isinstance(value, list):
        return [found for item in value for found in committed(item, key)]
    return []
