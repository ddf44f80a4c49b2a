"""Web pages to pin (the PinPages port): fetched once over http(s) with the standard library, as plain text.

Server-side request forgery is the risk: a pin asked for in Slack makes the server fetch an address someone typed.
So the host is resolved once, every address it resolves to must be a public one (not private, loopback, link-local,
shared, reserved or multicast), and the connection goes to that checked address (no second look-up a DNS answer
could change in between), with the host name kept for the Host header and for checking the TLS certificate. An IPv6
address that carries an IPv4 one (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96` and
`64:ff9b:1::/48`, 6to4 `2002::/16`, Teredo `2001::/32`) is judged by the IPv4 addresses it carries: it may reach them
through a gateway. Hosts
listed in NIGHTWATCH_PIN_URL_HOSTS may resolve to private addresses (an intranet wiki; the tests' local server).
Redirects are followed by hand, at most MAX_REDIRECTS, each checked the same way. No proxy is used.

A fetch has a timeout per step and one overall deadline that covers connecting, the TLS handshake, the headers and the
body across every redirect: a watchdog shuts the socket when it passes, so a server that drips headers or body a byte
at a time cannot hold a fetch past it (connecting waits at most the time left). A fetch reads at most MAX_DOWNLOAD
bytes, accepts text, markdown and HTML (turned into plain text simply: scripts and styles dropped, block elements on
lines of their own) and keeps at most MAX_TEXT characters. Anything else is a clear error, and nothing is pinned.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from nightwatch.adapters.pins.page_text import (
    charset_of,
    html_to_text,
)
from nightwatch.adapters.secrets import redact
from nightwatch.domain.errors import FetchError, InvalidInputError, NotFoundError
from nightwatch.domain.inputs import shown
from nightwatch.domain.pins import validate_pin_url
from nightwatch.domain.pins.ports import PinSnapshot

HOSTS_SETTING = "NIGHTWATCH_PIN_URL_HOSTS"
MAX_REDIRECTS = 3
MAX_DOWNLOAD = 2 * 1024 * 1024
MAX_TEXT = 256 * 1024
TIMEOUT_SECONDS = 10.0
DEADLINE_SECONDS = 20.0
USER_AGENT = "NightWatch-pin/1 (+a persona's pinned context)"
_TEXT_TYPES = ("text/", "application/xhtml+xml", "application/json", "application/xml")
_HTML_TYPES = ("text/html", "application/xhtml+xml")

Resolver = Callable[[str, int], list[str]]


def resolve(host: str, port: int) -> list[str]:
    """Every address `host` resolves to, in the resolver's order."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True)
class _Answer:
    status: int
    reason: str
    location: str | None
    content_type: str
    body: bytes


class PageFetcher:
    """Fetches pages to pin; `allowed_hosts` may resolve to private addresses (see the module)."""

    def __init__(
        self,
        *,
        allowed_hosts: Collection[str] = (),
        resolver: Resolver = resolve,
        timeout: float = TIMEOUT_SECONDS,
        deadline: float = DEADLINE_SECONDS,
    ) -> None:
        self._allowed = frozenset(host.strip().lower().strip("[]") for host in allowed_hosts if host.strip())
        self._resolve = resolver
        self._timeout = timeout
        self._deadline = deadline

    def fetch(self, url: str) -> PinSnapshot:
        """The page at `url` as plain text (redacted); raise InvalidInputError, NotFoundError or FetchError."""
        first = current = validate_pin_url(url)
        ends = time.monotonic() + self._deadline
        for _ in range(MAX_REDIRECTS + 1):
            if time.monotonic() > ends:
                raise FetchError(self._too_long(first))
            try:
                answer = self._get(current, ends)
            except FetchError as err:
                if time.monotonic() >= ends:  # the watchdog shut the socket: say why, not what it broke
                    raise FetchError(self._too_long(first)) from err
                raise
            if answer.status in (301, 302, 303, 307, 308) and answer.location:
                current = validate_pin_url(urljoin(current, answer.location))
                continue
            return PinSnapshot(source=first, text=redact(_page_text(answer, current)))
        raise FetchError(f"{shown(first, 80)} redirected more than {MAX_REDIRECTS} times; pin the final address.")

    def _too_long(self, url: str) -> str:
        return f"{shown(url, 80)} took too long to fetch (over {self._deadline:g} s); nothing was pinned."

    def _get(self, url: str, ends: float) -> _Answer:
        parts = urlsplit(url)
        host = parts.hostname or ""
        secure = parts.scheme.lower() == "https"
        port = parts.port or (443 if secure else 80)
        address = self._address(host, port, url)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        timeout = max(0.001, min(self._timeout, ends - time.monotonic()))
        connection = _connection(host, port, address, secure=secure, timeout=timeout)
        watchdog = threading.Timer(max(0.0, ends - time.monotonic()), _shut, (connection,))
        watchdog.daemon = True
        watchdog.start()
        try:
            connection.request("GET", path, headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity"})
            response = connection.getresponse()
            body = b"" if response.status in (301, 302, 303, 307, 308) else _read(response, url)
            if time.monotonic() >= ends:  # a body cut short by the watchdog is not the page
                raise TimeoutError
            return _Answer(
                response.status,
                response.reason,
                response.getheader("Location"),
                (response.getheader("Content-Type") or "").lower(),
                body,
            )
        except (OSError, http.client.HTTPException) as err:
            raise FetchError(f"{shown(url, 80)} could not be fetched ({_why(err)}); nothing was pinned.") from err
        finally:
            watchdog.cancel()
            connection.close()

    def _address(self, host: str, port: int, url: str) -> str:
        """The checked address to connect to: public, unless the host is allowed to be private."""
        try:
            addresses = self._resolve(host, port)
        except OSError as err:
            raise FetchError(f"The host of {shown(url, 80)} could not be found ({_why(err)}); check the URL.") from err
        if not addresses:
            raise FetchError(f"The host of {shown(url, 80)} has no address; check the URL.")
        if host.lower() not in self._allowed:
            private = [address for address in addresses if not _public(address)]
            if private:
                raise InvalidInputError(
                    f"{shown(url, 80)} leads to {private[0]}, a private, loopback or reserved address, which pins "
                    f"may not fetch. An operator can allow the host {host!r} with {HOSTS_SETTING}."
                )
        return addresses[0]


_NAT64 = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("64:ff9b:1::/48"))
_LOW_32_BITS = 0xFFFFFFFF


def _public(address: str) -> bool:
    """Whether `address` is a public one; an IPv6 address carrying IPv4 ones is judged by those (see the module)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    carried = carried_ipv4(ip) if isinstance(ip, ipaddress.IPv6Address) else ()
    return all(inner.is_global and not inner.is_multicast for inner in carried or (ip,))


def carried_ipv4(ip: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    """The IPv4 addresses an IPv6 address carries and may lead to (none for an ordinary IPv6 address)."""
    if ip.ipv4_mapped is not None:
        return (ip.ipv4_mapped,)
    if ip.sixtofour is not None:
        return (ip.sixtofour,)
    if ip.teredo is not None:
        return ip.teredo  # the Teredo server and the client behind it
    if int(ip) >> 32 == 0 or any(ip in network for network in _NAT64):  # IPv4-compatible (::1 too), NAT64
        return (ipaddress.IPv4Address(int(ip) & _LOW_32_BITS),)
    return ()


def _shut(connection: http.client.HTTPConnection) -> None:
    """Shut the connection's socket (the deadline passed): a read or handshake under way ends at once."""
    if connection.sock is not None:
        with contextlib.suppress(OSError):
            connection.sock.shutdown(socket.SHUT_RDWR)


class _PinnedHTTP(http.client.HTTPConnection):
    """An HTTP connection to a checked address, sending the host's name as Host."""

    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPS(http.client.HTTPSConnection):
    """An HTTPS connection to a checked address; the certificate is checked against the host's name."""

    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        self._tls = ssl.create_default_context()
        super().__init__(host, port, timeout=timeout, context=self._tls)
        self._address = address

    def connect(self) -> None:
        raw = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = raw  # the watchdog can shut it during the handshake
        self.sock = self._tls.wrap_socket(raw, server_hostname=self.host)


def _connection(host: str, port: int, address: str, *, secure: bool, timeout: float) -> http.client.HTTPConnection:
    if secure:
        return _PinnedHTTPS(host, port, address, timeout)
    return _PinnedHTTP(host, port, address, timeout)


def _read(response: http.client.HTTPResponse, url: str) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while chunk := response.read(65536):
        size += len(chunk)
        if size > MAX_DOWNLOAD:
            raise InvalidInputError(
                f"{shown(url, 80)} is larger than {MAX_DOWNLOAD // 1024 // 1024} MiB; pin a smaller page."
            )
        chunks.append(chunk)
    return b"".join(chunks)


def _page_text(answer: _Answer, url: str) -> str:
    if answer.status in (404, 410):
        raise NotFoundError(f"{shown(url, 80)} answered {answer.status} {answer.reason}; check the address.")
    if answer.status != 200:
        raise FetchError(f"{shown(url, 80)} answered {answer.status} {answer.reason}; nothing was pinned.")
    media = answer.content_type.split(";", 1)[0].strip()
    if media and not media.startswith(_TEXT_TYPES):
        raise InvalidInputError(f"{shown(url, 80)} is {media}, not text; pin a text, markdown or HTML page.")
    charset = charset_of(answer.content_type)
    text = answer.body.decode(charset, errors="replace").replace("\x00", "").replace("\r\n", "\n")
    if media in _HTML_TYPES or (not media and text.lstrip()[:1] == "<"):
        text = html_to_text(text)
    if len(text) > MAX_TEXT:
        raise InvalidInputError(
            f"{shown(url, 80)} holds {len(text):,} characters of text; a pinned page may hold at most {MAX_TEXT:,}. "
            "Pin a smaller page, or the part that matters as a text pin."
        )
    return text.strip()


def _why(err: BaseException) -> str:
    if isinstance(err, TimeoutError):
        return "it timed out"
    return str(getattr(err, "strerror", None) or err) or type(err).__name__


# --- HTML to plain text ----------------------------------------------------------------------------------------------
