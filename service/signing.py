"""The service's Ed25519 key: it signs the final hash of every exported game; anyone checks the
signature with the public key (`GET /v1/keys`), offline.

Keys travel as base64 (or hex) of their 32 raw bytes: the private key in SPIELTISCH_SIGNING_KEY,
the public key in bundles, in `/v1/keys` and in the `--key` of `spieltisch verify`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

ALGORITHM = "ed25519"
KEY_BYTES = 32


def decode_key(text: str) -> bytes:
    """The 32 raw bytes of a key given as hex or base64; ValueError for anything else."""
    text = text.strip()
    try:
        raw = (
            bytes.fromhex(text)
            if len(text) == 2 * KEY_BYTES
            else base64.b64decode(text, validate=True)
        )
    except (ValueError, binascii.Error):
        raw = b""
    if len(raw) != KEY_BYTES:
        raise ValueError(f"a key is {KEY_BYTES} bytes, written as hex or base64")
    return raw


def encode_key(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def key_id(public_key: bytes) -> str:
    """A short name of a public key: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(public_key).hexdigest()[:16]


class Signer:
    """Signs with one Ed25519 private key."""

    def __init__(self, private_key: Ed25519PrivateKey) -> None:
        self._key = private_key
        self.public_key = private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    @classmethod
    def generate(cls) -> Signer:
        """A fresh key: an embedded service's, which lives as long as the process."""
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_text(cls, text: str) -> Signer:
        """The key whose 32 private bytes `text` holds (hex or base64)."""
        return cls(Ed25519PrivateKey.from_private_bytes(decode_key(text)))

    def sign(self, message: bytes) -> bytes:
        return self._key.sign(message)

    def public_json(self) -> dict[str, str]:
        """The public key as `/v1/keys` lists it and bundles carry it."""
        return {
            "algorithm": ALGORITHM,
            "key_id": key_id(self.public_key),
            "public_key": encode_key(self.public_key),
        }


def signature_holds(public_key: bytes, signature: bytes, message: bytes) -> bool:
    """Whether `signature` is the Ed25519 signature of `message` by `public_key`."""
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True
