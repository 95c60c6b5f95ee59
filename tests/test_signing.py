"""The service's signing key: how it is given, made and checked."""

from __future__ import annotations

import base64

import pytest

from service.app import signer_for
from service.config import Config
from service.signing import Signer, decode_key, encode_key, key_id, signature_holds

PRIVATE = bytes(range(32))


def test_a_key_is_given_as_hex_or_base64() -> None:
    assert decode_key(PRIVATE.hex()) == PRIVATE
    assert decode_key(base64.b64encode(PRIVATE).decode() + "\n") == PRIVATE
    for wrong in ["", "00" * 31, "not a key", base64.b64encode(bytes(33)).decode()]:
        with pytest.raises(ValueError, match="a key is 32 bytes"):
            decode_key(wrong)


def test_production_reads_its_key_and_embedded_makes_one() -> None:
    environment = {"REDIS_URL": "redis://redis:6379/0", "SPIELTISCH_SIGNING_KEY": PRIVATE.hex()}
    configured = signer_for(Config.from_env(environment))
    assert configured.public_key == Signer.from_text(encode_key(PRIVATE)).public_key
    with pytest.raises(RuntimeError, match="SPIELTISCH_SIGNING_KEY"):
        signer_for(Config(redis_url="redis://redis:6379/0"))
    assert signer_for(Config()).public_key != signer_for(Config()).public_key


def test_a_signature_holds_for_its_key_and_message_only() -> None:
    signer, other = Signer.from_text(PRIVATE.hex()), Signer.generate()
    signature = signer.sign(b"head")
    assert signature_holds(signer.public_key, signature, b"head")
    assert not signature_holds(signer.public_key, signature, b"other head")
    assert not signature_holds(other.public_key, signature, b"head")
    assert not signature_holds(signer.public_key, signature[:-1], b"head")
    public = signer.public_json()
    assert public == {
        "algorithm": "ed25519",
        "key_id": key_id(signer.public_key),
        "public_key": encode_key(signer.public_key),
    }
