"""Calling an external bot's webhook: the seat's view and legal moves out, a move back."""

from __future__ import annotations

import hashlib
import hmac
import http.client
import io
import json
import socket
import ssl
import time
import urllib.parse
from collections.abc import Mapping
from typing import Any

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


class DeadlineSocket:
    """A connected socket whose every send and receive ends by `deadline` (monotonic seconds).

    A socket timeout bounds each read on its own, so a peer trickling a byte a second keeps a
    call alive for as long as it likes; here each read may only wait for what is left.
    """

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock = sock
        self._deadline = deadline
        # As a socket does, it stays open while the answer's file reads from it.
        self._files = 0
        self._closed = False

    def _arm(self) -> None:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the deadline has passed")
        self._sock.settimeout(left)

    def sendall(self, data: bytes) -> None:
        self._arm()
        self._sock.sendall(data)

    def recv_into(self, buffer: Any, nbytes: int = 0) -> int:
        self._arm()
        return self._sock.recv_into(buffer, nbytes)

    def makefile(self, mode: str) -> io.BufferedReader:
        assert mode == "rb", "http.client reads its answer through this file only"
        self._files += 1
        return io.BufferedReader(socket.SocketIO(self, "rb"))  # type: ignore[arg-type]

    def _decref_socketios(self) -> None:
        """`SocketIO.close` calls it when the file is closed."""
        self._files -= 1
        if self._closed:
            self.close()

    def close(self) -> None:
        self._closed = True
        if self._files <= 0:
            self._sock.close()


class DeadlineConnection(http.client.HTTPConnection):
    """An HTTP connection whose whole exchange ends by `deadline`."""

    def __init__(self, host: str, deadline: float, **kwargs: Any) -> None:
        super().__init__(host, timeout=max(deadline - time.monotonic(), 0.001), **kwargs)
        self.deadline = deadline

    def connect(self) -> None:
        super().connect()
        self.sock = DeadlineSocket(self.sock, self.deadline)


class DeadlineHTTPSConnection(http.client.HTTPSConnection):
    """`DeadlineConnection` over TLS: the handshake counts against the deadline too."""

    def __init__(self, host: str, deadline: float, **kwargs: Any) -> None:
        context = ssl.create_default_context()
        timeout = max(deadline - time.monotonic(), 0.001)
        super().__init__(host, timeout=timeout, context=context, **kwargs)
        self.deadline = deadline

    def connect(self) -> None:
        super().connect()
        self.sock = DeadlineSocket(self.sock, self.deadline)


class WebhookClient:
    """POSTs a turn to a webhook and returns the `move` of its JSON answer.

    The whole call (connect, send, answer, body) ends `timeout_seconds` after it began, by the
    clock: anything but a JSON object with a `move` by then raises `WebhookFailed`, and the
    caller plays a stand-in move instead, so a broken or slow bot never stalls a game.
    """

    def __init__(self, timeout_seconds: float) -> None:
        self.timeout_seconds = timeout_seconds

    def ask(self, url: str, turn: Mapping[str, JSON], key: str | None) -> JSON:
        body = json.dumps(turn, separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json", "User-Agent": "spieltisch-bots"}
        if key is not None:
            headers[SIGNATURE_HEADER] = signature(key, body)
        deadline = time.monotonic() + self.timeout_seconds
        answer = self._post(url, body, headers, deadline)
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

    def _post(self, url: str, body: bytes, headers: dict[str, str], deadline: float) -> bytes:
        parts = urllib.parse.urlsplit(url)
        kind = {"http": DeadlineConnection, "https": DeadlineHTTPSConnection}.get(parts.scheme)
        if kind is None or not parts.netloc:
            raise WebhookFailed("error", f"not an http(s) URL: {parts.scheme}")
        target = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
        connection = kind(parts.netloc, deadline)
        try:
            connection.request("POST", target, body, headers)
            response = connection.getresponse()
            answer = response.read(MAX_ANSWER_BYTES + 1)
        except TimeoutError as error:
            raise WebhookFailed("timeout", f"no answer within {self.timeout_seconds} s") from error
        except (OSError, http.client.HTTPException, ValueError) as error:
            raise WebhookFailed("error", f"cannot reach the webhook: {error}") from error
        finally:
            connection.close()
        if not 200 <= response.status < 300:
            raise WebhookFailed("error", f"HTTP status {response.status}")
        return answer
