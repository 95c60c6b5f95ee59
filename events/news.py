"""The news of an append, as the append script publishes it (see events/append.lua), read back
into the records it stored, for live streams that follow a table without reading its stream."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from events.envelope import ChainBroken, Position, Recorded, verify_chain
from events.store import entry_record

HASH_LENGTH = 64
"""A stored event's SHA-256, in hex."""


def entries(message: bytes) -> list[tuple[bytes, dict[bytes, bytes]]]:
    """The stream entries one message announces, as a stream read would give them."""
    first, _, rest = message.partition(b":")
    found: list[tuple[bytes, dict[bytes, bytes]]] = []
    seq, at = int(first), 0
    while at < len(rest):
        colon = rest.index(b":", at)
        start = colon + 1
        end = start + int(rest[at:colon])
        stored, digest = rest[start:end], rest[end : end + HASH_LENGTH]
        found.append((b"%d-0" % seq, {b"e": stored, b"h": digest}))
        seq, at = seq + 1, end + HASH_LENGTH + 1
    return found


def contradicts(records: Sequence[Recorded], last: Position, messages: list[bytes]) -> bool:
    """Whether `messages` announce an event of another hash at a version read already (the
    consecutive `records`, or `last`, the position read up to): the stream lost those events
    and was written on since. (`records_after` skips what it announces at such versions.) What
    does not parse contradicts too: the stream tells."""
    first = records[0].seq if records else last.version
    try:
        for message in messages:
            if int(message.partition(b":")[0]) > last.version:
                continue  # news after what was read, as nearly every message is
            for entry_id, fields in entries(message):
                seq = int(entry_id.split(b"-", 1)[0])
                if first <= seq <= last.version:
                    known = last.head if seq == last.version else records[seq - first].hash
                    if fields[b"h"].decode() != known:
                        return True
    except (ValueError, LookupError):
        return True
    return False


def records_after(
    position: Position, messages: list[bytes], upcast: Callable[[Recorded], Recorded]
) -> list[Recorded] | None:
    """The records `messages` announce after `position`, their chain verified from it and
    upcast; None when they do not follow it (a message was missed) or do not verify: the
    stream must be read instead."""
    try:
        return _records_after(position, messages, upcast)
    except (ChainBroken, ValueError, LookupError, zlib.error):
        return None  # not what the script publishes, or not what followed: the stream tells


def _records_after(
    position: Position, messages: list[bytes], upcast: Callable[[Recorded], Recorded]
) -> list[Recorded] | None:
    """`records_after`, raising where what was heard does not decode or verify."""
    records: list[Recorded] = []
    head, prev = position, position.head
    meta: Mapping[str, Any] | None = None
    for message in messages:
        announced = entries(message)
        first = int(announced[0][0].split(b"-", 1)[0])
        if first + len(announced) - 1 <= head.version:
            continue  # already read
        if first != head.version + 1:
            return None
        for entry in announced:
            record = entry_record(entry, prev, meta)
            if record.envelope > 1 and not record.meta:
                return None  # its command began before what was heard: a read looks it up
            records.append(record)
            prev, meta = record.hash, record.meta
        head = records[-1].position
    verify_chain(records, position, hash_of=Recorded.stored_hash)
    return [upcast(record) for record in records]
