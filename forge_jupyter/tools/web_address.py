"""Where webfetch may go: one spelling of a URL, and the addresses it may connect to.

A URL is normalized before any rule reads it (``normalize_url``): http and https only, no
userinfo (``http://example.com@127.0.0.1/`` names 127.0.0.1, whatever it looks like), the host
lower-cased, IDNA-encoded and without its trailing dot, numeric IPv4 spellings read as browsers
read them (``127.1``, ``2130706433``, ``0x7f.0.0.1``, ``0177.0.0.1`` are all ``127.0.0.1``),
IPv6 in its compressed form, the default port dropped, the fragment dropped. Rules match that
string, so ``webfetch:https://docs.python.org/*=allow`` means what it says.

Whether an address is reachable is decided on the address itself, after resolution
(``blocked_reason``): loopback, private (RFC 1918, ULA fc00::/7), link-local (the cloud
metadata service at 169.254.169.254), unspecified, multicast, shared CGNAT (100.64.0.0/10),
reserved and documentation ranges are refused, and so is an IPv6 address that carries such an
IPv4 address inside it (IPv4-mapped ``::ffff:127.0.0.1``, IPv4-compatible ``::127.0.0.1``,
6to4 ``2002:7f00:1::``, NAT64 ``64:ff9b::7f00:1``, Teredo). ``localhost`` and ``*.localhost``
are loopback by definition (RFC 6761) and never looked up.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from ..errors import ToolError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
DEFAULT_PORTS = {"http": 80, "https": 443}
_LABEL = re.compile(r"^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?$")
_SAFE_PATH = "/%:@!$&'()*+,;=-._~"  # kept as they are in a path; everything else is %-encoded
_SAFE_QUERY = _SAFE_PATH + "?"
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_COMPATIBLE = ipaddress.ip_network("::/96")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
_SITE_LOCAL = ipaddress.ip_network("fec0::/10")


@dataclass(frozen=True)
class Url:
    """A URL webfetch may ask for, in its one normalized spelling (``str(url)``)."""

    scheme: str  # http | https
    host: str  # lower-case ASCII, no trailing dot; an IP address in its canonical form
    port: int
    target: str  # path and query, as sent in the request line
    ip: IPAddress | None  # the host when it is an IP address

    @property
    def origin(self) -> str:
        host = f"[{self.host}]" if isinstance(self.ip, ipaddress.IPv6Address) else self.host
        port = "" if DEFAULT_PORTS[self.scheme] == self.port else f":{self.port}"
        return f"{self.scheme}://{host}{port}"

    @property
    def host_header(self) -> str:
        return self.origin.split("://", 1)[1]

    def __str__(self) -> str:
        return self.origin + self.target


def normalize_url(raw: object) -> Url:
    """``raw`` as a ``Url``, or a ToolError saying what is wrong with it and what to send."""
    if not isinstance(raw, str) or not raw.strip():
        raise ToolError("webfetch needs a url: an http:// or https:// address.")
    text = raw.strip()
    if any(ord(c) < 0x21 or ord(c) == 0x7F for c in text):
        raise ToolError(f"The url {text[:200]!r} holds spaces or control characters; "
                        "percent-encode them (%20).")
    try:
        parts = urlsplit(text)
        host_part = parts.hostname
    except ValueError as exc:  # "Invalid IPv6 URL", …
        raise ToolError(f"The url {text[:200]!r} cannot be read: {exc}.") from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        shown = f"{scheme}:" if scheme else "no scheme"
        raise ToolError(f"webfetch reads http:// and https:// URLs only, not {shown} "
                        f"({text[:200]!r}). Local files are read with the read tool.")
    netloc = parts.netloc
    if "@" in netloc or "\\" in netloc:
        raise ToolError(f"The url {text[:200]!r} carries a user name or password (or a "
                        "backslash) before its host; webfetch does not send credentials. "
                        "Give the URL without them.")
    if not host_part:
        raise ToolError(f"The url {text[:200]!r} has no host.")
    try:
        port = parts.port or DEFAULT_PORTS[scheme]
    except ValueError as exc:
        raise ToolError(f"The url {text[:200]!r} has an invalid port: {exc}.") from None
    if not 0 < port < 65536:
        raise ToolError(f"The url {text[:200]!r} has an invalid port {port}.")
    host, ip = normalize_host(host_part, bracketed=netloc.rsplit("@", 1)[-1].startswith("["))
    path = quote(parts.path or "/", safe=_SAFE_PATH)
    query = f"?{quote(parts.query, safe=_SAFE_QUERY)}" if parts.query else ""
    return Url(scheme, host, port, path + query, ip)


def normalize_host(host: str, *, bracketed: bool = False) -> tuple[str, IPAddress | None]:
    """The host's one spelling, and its address when it is an IP address."""
    if bracketed:  # only an IPv6 literal goes in brackets; a zone (%eth0) is refused
        try:
            if "%" in host:
                raise ValueError("a zone index")
            v6 = ipaddress.IPv6Address(host)
        except ValueError:
            raise ToolError(f"[{host}] is not an IPv6 address.") from None
        return v6.compressed, v6
    try:  # fullwidth digits and other Unicode forms become ASCII here (IDNA's mapping)
        ascii_host = host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise ToolError(f"The host {host!r} is not a valid domain name.") from None
    if ascii_host.endswith("."):
        ascii_host = ascii_host[:-1]
    v4 = parse_ipv4(ascii_host)
    if v4 is not None:
        return str(v4), v4
    labels = ascii_host.split(".")
    if len(ascii_host) > 253 or not all(_LABEL.match(label) for label in labels):
        raise ToolError(f"The host {host!r} is not a valid domain name.")
    return ascii_host, None


def parse_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address a host spells as browsers read it (WHATWG URL: one to four parts,
    each decimal, 0x-hex or 0-octal, the last filling the remaining bytes), None when the
    host is a domain name, a ToolError when it looks like an address but is not one."""
    parts = host.split(".")
    if len(parts) > 1 and parts[-1] == "":
        parts = parts[:-1]
    if not parts or _number(parts[-1]) is None:
        return None  # does not end in a number: a domain name
    numbers = [_number(p) for p in parts]
    if len(parts) > 4 or any(n is None for n in numbers):
        raise ToolError(f"The host {host!r} looks like an IPv4 address but is not one.")
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(numbers)):  # type: ignore[operator]
        raise ToolError(f"The host {host!r} is out of the IPv4 range.")
    value = last
    for i, n in enumerate(head):
        value += n << (8 * (3 - i))  # type: ignore[operator]
    return ipaddress.IPv4Address(value)


def _number(part: str) -> int | None:
    try:
        if part[:2].lower() == "0x":
            return int(part[2:] or "0", 16)
        if len(part) > 1 and part.startswith("0"):
            return int(part[1:], 8)
        return int(part, 10) if part.isdigit() else None
    except ValueError:
        return None


def blocked_reason(ip: IPAddress) -> str | None:
    """Why webfetch must not connect to ``ip`` without an explicit rule, or None (public)."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            inner = blocked_reason(ip.ipv4_mapped)
            return inner and f"IPv4-mapped {ip.ipv4_mapped}: {inner}"
        if ip in _COMPATIBLE:  # ::, ::1 and the deprecated IPv4-compatible form
            return ("unspecified" if int(ip) == 0 else "loopback" if int(ip) == 1
                    else "IPv4-compatible IPv6, deprecated")
        if ip in _NAT64_LOCAL:
            return "local-use NAT64"
        embedded = ip.sixtofour or (ip.teredo[1] if ip.teredo else None) or (
            ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF) if ip in _NAT64 else None)
        if embedded is not None:
            inner = blocked_reason(embedded)
            return inner and f"6to4, NAT64 or Teredo form of {embedded}: {inner}"
        if ip in _SITE_LOCAL:
            return "site-local"
    for test, name in ((ip.is_loopback, "loopback"), (ip.is_unspecified, "unspecified"),
                       (ip.is_link_local, "link-local, where cloud metadata services live"),
                       (ip.is_multicast, "multicast"), (ip in _CGNAT, "shared CGNAT space"),
                       (ip.is_private, "private"), (ip.is_reserved, "reserved")):
        if test:
            return name
    if not ip.is_global:
        return "not globally routable"
    return None


def is_loopback_name(host: str) -> bool:
    return host == "localhost" or host.endswith(".localhost")


async def resolve(url: Url, timeout: float) -> list[IPAddress]:
    """Every address ``url``'s host names, looked up once (the connection uses these)."""
    if url.ip is not None:
        return [url.ip]
    if is_loopback_name(url.host):  # RFC 6761: loopback, whatever a resolver would say
        return [ipaddress.IPv4Address("127.0.0.1"), ipaddress.IPv6Address("::1")]
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(timeout):
            infos = await loop.getaddrinfo(url.host, url.port, type=socket.SOCK_STREAM)
    except TimeoutError:
        raise ToolError(f"Looking up {url.host} took over {timeout:g} s; try again later.") from None
    except OSError as exc:
        raise ToolError(f"{url.host} could not be found ({exc.strerror or exc}). Check the "
                        "address; this machine may have no internet access.") from None
    found: list[IPAddress] = []
    for *_, sockaddr in infos:
        ip = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if ip not in found:
            found.append(ip)
    return found
