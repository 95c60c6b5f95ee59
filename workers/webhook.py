"""Calling an external bot's webhook: the seat's view and legal moves out, a move back."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import urllib.error
import urllib.request
from collections.abc import Mapping

from domain.rules import JSON

MAX_ANSWER_BYTES = 64 * 1024
SIGNATURE_HEADER = "X-Spieltisch-Signature"


class WebhookFailed(Exception):
    """The webhook gave no usable answer; `reason` is "timeout" or "error"."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def signature(key: str, body: bytes) -> str:
    """The value of the signature header: HMAC-SHA256 of the body under `key`."""
    digest = hmac.new(key.encode(), body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


class WebhookClient:
    """POSTs a turn to a webhook and returns the `move` of its JSON answer.

    Anything but a JSON object with a `move`, in time, raises `WebhookFailed`: the caller plays a
    stand-in move instead, so a broken bot never stalls a game.
    """

    def __init__(self, timeout_seconds: float) -> None:
        self.timeout_seconds = timeout_seconds

    def ask(self, url: str, turn: Mapping[str, JSON], key: str | None) -> JSON:
        body = json.dumps(turn, separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json", "User-Agent": "spieltisch-bots"}
        if key is not None:
            headers[SIGNATURE_HEADER] = signature(key, body)
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        late = f"no answer within {self.timeout_seconds} s"
        started = time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_seconds) as response:
                answer = response.read(MAX_ANSWER_BYTES + 1)
        except TimeoutError as error:
            raise WebhookFailed("timeout", late) from error
        except urllib.error.HTTPError as error:
            raise WebhookFailed("error", f"HTTP status {error.code}") from error
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError):
                raise WebhookFailed(
                    "timeout", f"no answer within {self.timeout_seconds} s"
                ) from error
            raise WebhookFailed("error", f"cannot reach the webhook: {error.reason}") from error
        except (OSError, ValueError) as error:
            raise WebhookFailed("error", f"cannot reach the webhook: {error}") from error
        if time.monotonic() - started > self.timeout_seconds:
            # A bot that trickles its answer past the deadline is as late as one that never answers.
            raise WebhookFailed("timeout", f"answered after {self.timeout_seconds} s")
        if len(answer) > MAX_ANSWER_BYTES:
            raise WebhookFailed("error", f"the answer is larger than {MAX_ANSWER_BYTES} bytes")
        try:
            decoded = json.loads(answer)
        except ValueError as error:
            raise WebhookFailed("error", "the answer is not JSON") from error
        if not isinstance(decoded, dict) or "move" not in decoded:
            raise WebhookFailed("error", 'the answer is not a JSON object with a "move"')
        move: JSON = decoded["move"]
        return move
