"""Calling an external bot's webhook: the seat's view and legal moves out, a move back."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import http.client
import io
import ipaddress
import json
import logging
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from domain.rules import JSON

log = logging.getLogger(__name__)

MAX_ANSWER_BYTES = 64 * 1024
SIGNATURE_HEADER = "X-Spieltisch-Signature"
UNANSWERED = "unanswered"
"""The public reason of every failed call, whatever failed: a reason (or a time) that told a
closed port from a silent one, or a refused address from a missing name, would let anyone who
can take a seat map the service's network. The detail goes to the worker's log only."""

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
LOOPBACK: tuple[Network, ...] = (
    ipaddress.ip_network("127.0.0.0/8"),
    ipaddress.ip_network("::1/128"),
)


class WebhookFailed(Exception):
    """The webhook gave no usable answer; `reason` is public, `detail` for the log only."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


class AddressRefused(OSError):
    """A webhook's host is, or resolves to, an address the service does not call."""


# No well-kept library fits: `advocate` (the known one) wraps requests and has not been released
# since 2020, and the calls here need their own deadline socket. So the guard is the standard
# library's `ipaddress` and `socket`: resolve once, check every address, connect to one of them.
@dataclass(frozen=True)
class AddressGuard:
    """Which addresses webhooks may be called at: public unicast ones, and what is allowed.

    `hosts` are names whose addresses are all allowed (a deployment's own bots), `networks`
    are allowed networks (embedded mode allows loopback, so the examples/ bots work there).
    """

    hosts: frozenset[str] = frozenset()
    networks: tuple[Network, ...] = ()

    @classmethod
    def of(cls, allowed: Iterable[str], *, loopback: bool = False) -> AddressGuard:
        """A guard allowing each of `allowed`, a host name or a network (CIDR or one address)."""
        hosts: set[str] = set()
        networks = list(LOOPBACK if loopback else ())
        for entry in (item.strip() for item in allowed):
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            except ValueError:
                hosts.add(host_key(entry))
        return cls(frozenset(hosts), tuple(networks))

    def refusal(self, url: str) -> str | None:
        """Why `url` is refused before any name is looked up, or None: seat-taking's check of a
        literal address or an obviously internal name (the call checks again, resolved)."""
        host = urllib.parse.urlsplit(url).hostname or ""
        if host_key(host) in self.hosts:
            return None
        if host_key(host) == "localhost" or host_key(host).endswith(".localhost"):
            return f"{host} is this machine"
        address = literal_address(host)
        if address is not None and not self.allows(address):
            return f"{host} is not a public address"
        return None

    def allows(self, address: IPAddress) -> bool:
        """Whether a call may go to `address` (a host name's own allowance aside)."""
        if any(address in network for network in self.networks):
            return True
        return all(is_public(inner) for inner in embedded_addresses(address))

    def resolve(self, host: str, port: int, timeout: float | None = None) -> list[tuple[Any, ...]]:
        """`getaddrinfo` for `host` (given up after `timeout` seconds), every address checked:
        all of them allowed, or none."""
        found = lookup(host, port, timeout)
        if host_key(host) in self.hosts:
            return found
        for _, _, _, _, sockaddr in found:
            address = ipaddress.ip_address(str(sockaddr[0]).partition("%")[0])
            if not self.allows(address):
                raise AddressRefused(f"{host} resolves to {address}, which is not public")
        return found

    def connect(
        self, address: tuple[str, int], timeout: float, source: tuple[str, int] | None = None
    ) -> socket.socket:
        """A socket connected to a checked address of `host`: the name is resolved once, so a
        second answer (DNS rebinding) is never asked for. `socket.create_connection`'s signature,
        as http.client calls it."""
        host, port = address
        error: OSError = OSError(f"{host} has no address")
        for family, kind, proto, _, sockaddr in self.resolve(host, port, timeout):
            sock = socket.socket(family, kind, proto)
            try:
                sock.settimeout(timeout)
                if source is not None:
                    sock.bind(source)
                sock.connect(sockaddr)
            except OSError as failed:
                sock.close()
                error = failed
                continue
            return sock
        raise error


def lookup(host: str, port: int, timeout: float | None) -> list[tuple[Any, ...]]:
    """`socket.getaddrinfo` for a stream socket, given up after `timeout` seconds (None: never).

    The resolver takes no timeout and may wait on a slow name server far past a webhook's
    deadline; so it asks on a thread of its own, which is left to finish by itself if late."""
    if timeout is None:
        return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    answer: list[list[tuple[Any, ...]] | OSError] = []

    def ask() -> None:
        try:
            answer.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except OSError as error:
            answer.append(error)

    asking = threading.Thread(target=ask, name=f"lookup {host}", daemon=True)
    asking.start()
    asking.join(timeout)
    if not answer:
        raise TimeoutError(f"{host} was not resolved within {timeout:.3g} s")
    if isinstance(found := answer[0], OSError):
        raise found
    return found


def host_key(host: str) -> str:
    """A host name as the guard compares it: lower case, no trailing dot, no brackets."""
    return host.strip("[]").rstrip(".").lower()


def literal_address(host: str) -> IPAddress | None:
    """The address `host` spells, in any spelling the resolver reads as one (`0x7f000001`,
    `2130706433`, `127.1`, `[::1]`), or None for a name."""
    host = host_key(host).partition("%")[0]
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:
        # inet_aton reads the old BSD forms (hex, octal, one to four parts) as getaddrinfo does.
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


def embedded_addresses(address: IPAddress) -> list[IPAddress]:
    """`address` and any IPv4 address it carries (mapped, 6to4, Teredo), each checked."""
    if isinstance(address, ipaddress.IPv4Address):
        return [address]
    inner: list[IPAddress] = [address]
    if address.ipv4_mapped is not None:
        inner.append(address.ipv4_mapped)
    if address.sixtofour is not None:
        inner.append(address.sixtofour)
    if address.teredo is not None:
        inner.extend(address.teredo)
    return inner


def is_public(address: IPAddress) -> bool:
    """Global unicast: not loopback, private, link-local, multicast, reserved or unspecified."""
    return address.is_global and not (address.is_multicast or address.is_reserved)


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
    """An HTTP connection to a checked address whose whole exchange ends by `deadline`."""

    def __init__(self, host: str, deadline: float, guard: AddressGuard, **kwargs: Any) -> None:
        super().__init__(host, timeout=max(deadline - time.monotonic(), 0.001), **kwargs)
        self.deadline = deadline
        # http.client's own hook (set in its __init__) for how the socket is made.
        self._create_connection = guard.connect

    def connect(self) -> None:
        super().connect()
        self.sock = DeadlineSocket(self.sock, self.deadline)


class DeadlineHTTPSConnection(http.client.HTTPSConnection):
    """`DeadlineConnection` over TLS: the handshake counts against the deadline too, and the
    certificate and SNI are the host name's, though the socket went to the checked address."""

    def __init__(self, host: str, deadline: float, guard: AddressGuard, **kwargs: Any) -> None:
        context = ssl.create_default_context()
        timeout = max(deadline - time.monotonic(), 0.001)
        super().__init__(host, timeout=timeout, context=context, **kwargs)
        self.deadline = deadline
        self._create_connection = guard.connect

    def connect(self) -> None:
        super().connect()
        self.sock = DeadlineSocket(self.sock, self.deadline)


class WebhookClient:
    """POSTs a turn to a webhook and returns the `move` of its JSON answer.

    The whole call (connect, send, answer, body) ends `timeout_seconds` after it began, by the
    clock: anything but a JSON object with a `move` by then raises `WebhookFailed`, and the
    caller plays a stand-in move instead, so a broken or slow bot never stalls a game. A call
    goes only to an address `guard` allows, follows no redirect (a 3xx is a failed call), and
    a failed call ends at its deadline whatever failed, so neither its reason nor its time
    tells what is listening at an address.
    """

    def __init__(self, timeout_seconds: float, guard: AddressGuard | None = None) -> None:
        self.timeout_seconds = timeout_seconds
        self.guard = guard or AddressGuard()

    def ask(self, url: str, turn: Mapping[str, JSON], key: str | None) -> JSON:
        body = json.dumps(turn, separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json", "User-Agent": "spieltisch-bots"}
        if key is not None:
            headers[SIGNATURE_HEADER] = signature(key, body)
        deadline = time.monotonic() + self.timeout_seconds
        try:
            return self._ask(url, body, headers, deadline)
        except WebhookFailed as failure:
            log.warning("webhook %s failed: %s", redacted(url), failure.detail)
            time.sleep(max(0.0, deadline - time.monotonic()))
            raise

    def _ask(self, url: str, body: bytes, headers: dict[str, str], deadline: float) -> JSON:
        answer = self._post(url, body, headers, deadline)
        if len(answer) > MAX_ANSWER_BYTES:
            raise WebhookFailed(UNANSWERED, f"the answer is larger than {MAX_ANSWER_BYTES} bytes")
        try:
            decoded = json.loads(answer)
        except ValueError as error:
            raise WebhookFailed(UNANSWERED, "the answer is not JSON") from error
        if not isinstance(decoded, dict) or "move" not in decoded:
            raise WebhookFailed(UNANSWERED, 'the answer is not a JSON object with a "move"')
        move: JSON = decoded["move"]
        return move

    def _post(self, url: str, body: bytes, headers: dict[str, str], deadline: float) -> bytes:
        parts = urllib.parse.urlsplit(url)
        kind = {"http": DeadlineConnection, "https": DeadlineHTTPSConnection}.get(parts.scheme)
        if kind is None or not parts.netloc:
            raise WebhookFailed(UNANSWERED, f"not an http(s) URL: {parts.scheme}")
        target = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
        try:
            with contextlib.closing(kind(parts.netloc, deadline, self.guard)) as connection:
                connection.request("POST", target, body, headers)
                response = connection.getresponse()
                answer = response.read(MAX_ANSWER_BYTES + 1)
        except TimeoutError as error:
            raise WebhookFailed(UNANSWERED, f"no answer within {self.timeout_seconds} s") from error
        except (OSError, http.client.HTTPException, ValueError) as error:
            raise WebhookFailed(UNANSWERED, f"cannot reach the webhook: {error!r}") from error
        if not 200 <= response.status < 300:
            raise WebhookFailed(UNANSWERED, f"HTTP status {response.status}")
        return answer


def redacted(url: str) -> str:
    """Where `url` points, without its user info, path or query: they may hold a secret."""
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
