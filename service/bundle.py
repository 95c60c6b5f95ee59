"""The export bundle of a finished game: one JSON document holding every stored event as hashed
(private values as their commitments, see `events.envelope.SEALED`), the revealed seed, the
generator and rules versions it was decided under, and the service's Ed25519 signature over the
final hash. `spieltisch verify` checks it offline.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from domain.rules import JSON
from domain.table import GAME_FINISHED
from events.envelope import Recorded, canonical_json
from service.audit import Upcast
from service.signing import ALGORITHM, Signer, decode_key

FORMAT = "spieltisch-bundle/1"


class BundleError(ValueError):
    """A document that is not a bundle this code reads."""


def signed_message(head: str) -> bytes:
    """What a bundle's signature signs: the canonical JSON of `{"format", "head"}`, `head` being
    the hash of the last event, which the chain ties to every event before it."""
    return canonical_json({"format": FORMAT, "head": head})


def build(records: Sequence[Recorded], upcast: Upcast, signer: Signer) -> dict[str, JSON]:
    """The bundle of a finished game's stored `records`, signed by `signer`."""
    created = upcast(records[0]).data
    head = records[-1].hash
    finished = next(r for r in reversed(records) if r.type == GAME_FINISHED)
    return {
        "format": FORMAT,
        "table": created["table"],
        "game": created["game"],
        "chance": created["chance"],
        "rules_version": created["rules_version"],
        "seed": finished.data["seed"],
        "version": records[-1].seq,
        "head": head,
        "events": [record.to_json() for record in records],
        "signature": {
            **signer.public_json(),
            "value": base64.b64encode(signer.sign(signed_message(head))).decode(),
        },
    }


@dataclass(frozen=True)
class Bundle:
    """A bundle as read: the records as stored, the seed it claims, and its signature."""

    records: tuple[Recorded, ...]
    seed: bytes
    public_key: bytes
    signature: bytes

    @property
    def head(self) -> str:
        return self.records[-1].hash if self.records else ""


def parse(document: Any) -> Bundle:
    """Read a bundle; `BundleError` says what is missing or malformed."""
    if not isinstance(document, Mapping) or document.get("format") != FORMAT:
        raise BundleError(f"not a {FORMAT} document")
    try:
        signature: Mapping[str, str] = document["signature"]
        algorithm = signature["algorithm"]
        bundle = Bundle(
            records=tuple(
                _recorded(number, event) for number, event in enumerate(document["events"], 1)
            ),
            seed=bytes.fromhex(document["seed"]),
            public_key=decode_key(signature["public_key"]),
            signature=base64.b64decode(signature["value"], validate=True),
        )
    except BundleError:
        raise
    except (AttributeError, KeyError, TypeError, ValueError, binascii.Error) as error:
        raise BundleError(f"malformed bundle: {error!r}") from None
    if algorithm != ALGORITHM:
        raise BundleError(f"signed with {algorithm}, not {ALGORITHM}")
    return bundle


EVENT_FIELDS: dict[str, type] = {
    "seq": int,
    "type": str,
    "v": int,
    "data": Mapping,
    "meta": Mapping,
    "prev": str,
    "hash": str,
}
"""The fields of a bundle's event and their JSON types (`envelope`, an int, may be missing: the
events of the first envelope were written without it). The audit and the rules read them as the
service stored them, so a bundle with events shaped otherwise is refused before they do."""


def _recorded(number: int, event: Any) -> Recorded:
    """The `number`th event of a bundle, once its fields are of their types."""
    if not isinstance(event, Mapping):
        raise BundleError(f"malformed bundle: event {number} is not an object")
    fields = EVENT_FIELDS | ({"envelope": int} if "envelope" in event else {})
    for name, kind in fields.items():
        value = event.get(name)
        if isinstance(value, bool) or not isinstance(value, kind):
            raise BundleError(f"malformed bundle: event {number} has no {name!r} of its type")
    return Recorded.from_json(event)
