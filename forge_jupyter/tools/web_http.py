"""One HTTP/1.1 GET to an address already checked, its body read in bounded pieces.

The connection goes to one of the addresses ``web_address.resolve`` returned and that were
checked — the host is never looked up a second time, so a DNS answer that changes between the
check and the connection (rebinding) changes nothing; TLS still verifies the certificate for
the URL's host name. The body is read as it arrives and reading stops at ``max_bytes``
(decompressed bytes, when a server compresses anyway), so a 100 MB answer costs at most
``max_bytes`` of memory and the time to read that much; every wait is inside the caller's
deadline. h11 parses the response (chunked, Content-Length, or until the server closes).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import h11

from .._version import __version__
from ..errors import ToolError
from .web_address import IPAddress, Url

READ_SIZE = 64 * 1024
MAX_HEADER_BYTES = 64 * 1024
USER_AGENT = f"forge-jupyter-webfetch/{__version__}"  # says what asks, points nowhere made up
ACCEPT = ("text/html, application/xhtml+xml, text/markdown, text/plain;q=0.9, "
          "application/json;q=0.9, application/xml;q=0.8, */*;q=0.1")


@dataclass
class Response:
    status: int
    reason: str
    headers: dict[str, str]  # names lower-cased; a repeated header keeps its last value
    body: bytes = b""
    cut: bool = False  # reading stopped at max_bytes: the rest was not downloaded
    address: str = ""
    announced: int | None = None  # Content-Length, when the server said it
    notes: list[str] = field(default_factory=list)

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")

    @property
    def media_type(self) -> str:
        return self.content_type.split(";", 1)[0].strip().lower()


# Called with the response (headers only) before any body is read: raises to refuse it.
BodyCheck = Callable[[Response], None]


async def get(url: Url, addresses: list[IPAddress], *, connect_timeout: float,
              max_bytes: int, check: BodyCheck | None = None) -> Response:
    """GET ``url`` from the first of ``addresses`` that accepts a connection. The caller
    bounds the total time (``asyncio.timeout``); ``connect_timeout`` bounds each connect."""
    reader, writer, address = await _connect(url, addresses, connect_timeout)
    try:
        return await _exchange(url, reader, writer, address, max_bytes, check)
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            async with asyncio.timeout(1):
                await writer.wait_closed()


async def _connect(url: Url, addresses: list[IPAddress], timeout: float
                   ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, str]:
    tls = ssl.create_default_context() if url.scheme == "https" else None
    failures: list[str] = []
    for ip in addresses:
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(
                    str(ip), url.port, ssl=tls, server_hostname=url.host if tls else None,
                    limit=READ_SIZE * 2)
            return reader, writer, str(ip)
        except TimeoutError:
            failures.append(f"{ip}: no answer within {timeout:g} s")
        except ssl.SSLError as exc:
            raise ToolError(f"The TLS handshake with {url.host} ({ip}) failed: "
                            f"{exc.reason or exc}. webfetch only reads sites whose "
                            "certificate checks out.") from None
        except OSError as exc:
            failures.append(f"{ip}: {exc.strerror or exc}")
    raise ToolError(f"Could not connect to {url.origin} ({'; '.join(failures)}).")


async def _exchange(url: Url, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                    address: str, max_bytes: int, check: BodyCheck | None) -> Response:
    conn = h11.Connection(our_role=h11.CLIENT, max_incomplete_event_size=MAX_HEADER_BYTES)
    request = h11.Request(method="GET", target=url.target, headers=[
        ("Host", url.host_header), ("User-Agent", USER_AGENT), ("Accept", ACCEPT),
        ("Accept-Encoding", "identity"), ("Connection", "close")])
    writer.write(conn.send(request) + conn.send(h11.EndOfMessage()))
    await writer.drain()
    response: Response | None = None
    body = bytearray()
    decoder: _Decoder | None = None
    while True:
        try:
            event = conn.next_event()
        except h11.RemoteProtocolError as exc:
            raise ToolError(f"{url.origin} sent a malformed HTTP response ({exc}).") from None
        if event is h11.NEED_DATA:
            data = await reader.read(READ_SIZE)
            conn.receive_data(data)  # b"": the server closed (an end only when h11 says so)
            continue
        if isinstance(event, h11.Response):
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in event.headers}
            response = Response(event.status_code, event.reason.decode("latin-1", "replace"),
                                headers, address=address)
            length = headers.get("content-length", "")
            response.announced = int(length) if length.isdigit() else None
            if 300 <= event.status_code < 400 and "location" in headers:
                return response  # the caller follows it (and checks where it goes)
            if check is not None:
                check(response)
            decoder = _Decoder.for_encoding(headers.get("content-encoding", ""), url)
        elif isinstance(event, h11.Data) and decoder is not None and response is not None:
            body += decoder.feed(bytes(event.data), max_bytes - len(body))
            if len(body) >= max_bytes or decoder.full:
                response.body, response.cut = bytes(body[:max_bytes]), True
                return response
        elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
            if response is None:
                raise ToolError(f"{url.origin} closed the connection without an answer.")
            response.body = bytes(body)
            return response
        elif isinstance(event, h11.InformationalResponse):
            continue


class _Decoder:
    """Bytes of the body as the server encoded them → the content, at most ``room`` at a time
    (a small compressed body cannot expand past the cap: a zip bomb stops where reading does)."""

    def __init__(self, inflate: zlib._Decompress | None) -> None:  # type: ignore[name-defined]
        self.inflate = inflate
        self.full = False

    @classmethod
    def for_encoding(cls, encoding: str, url: Url) -> _Decoder:
        name = encoding.strip().lower()
        if name in ("", "identity"):
            return cls(None)
        if name in ("gzip", "x-gzip", "deflate"):
            return cls(zlib.decompressobj(zlib.MAX_WBITS | 32))  # gzip or zlib header, either
        raise ToolError(f"{url.origin} sent the page compressed as {encoding!r}, which webfetch "
                        "does not read (it asks for uncompressed pages).")

    def feed(self, data: bytes, room: int) -> bytes:
        if self.inflate is None:
            return data
        try:
            out = self.inflate.decompress(data, max(room, 0) + 1)
        except zlib.error as exc:
            raise ToolError(f"The page's compressed body is corrupt ({exc}).") from None
        if self.inflate.unconsumed_tail:
            self.full = True  # more would come out than there is room for
        return out
