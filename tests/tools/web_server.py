"""A real HTTP server on 127.0.0.1 for the webfetch tests: pages, a 100 MB body, a slow drip,
a silent socket, redirects, binary and compressed answers; it records every request it saw."""

from __future__ import annotations

import functools
import gzip
import ssl
import subprocess
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

PAGE = b"""<!doctype html><html><head><title>Loopback  page</title>
<style>body{color:red}</style><script>document.write("SCRIPT-TEXT")</script></head>
<body><h1>Hello from loopback</h1><p>A <b>bold</b> claim and <a href="/docs/x">a link</a>.</p>
<ul><li>one</li><li>two</li></ul><pre>x = 1\ny = 2</pre></body></html>"""
BIG = 100 * 1024 * 1024
BLOCK = b"<p>" + b"a" * 65_000 + b"</p>\n"


@functools.cache
def bomb() -> bytes:
    """256 MB of spaces, gzip-compressed, made without holding the 256 MB."""
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b" " * (1 << 20)
    return b"".join([*(z.compress(block) for _ in range(256)), z.flush()])


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: WebServer

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass

    def _send(self, status: int, body: bytes, ctype: str, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        self.server.seen.append((self.path, self.headers.get("Host", "")))
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        route = url.path
        if route in ("/", "/page"):
            self._send(200, PAGE, "text/html; charset=utf-8")
        elif route == "/json":
            self._send(200, b'{"answer": 42, "secret": "' + self.server.secret.encode() + b'"}',
                       "application/json")
        elif route == "/big":  # 100 MB announced and streamed for as long as anyone reads
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(BIG))
            self.end_headers()
            try:
                while self.server.big_sent < BIG:
                    self.wfile.write(BLOCK)
                    self.server.big_sent += len(BLOCK)
            except OSError:
                pass
        elif route == "/slow":  # headers at once, then a byte a second
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            try:
                for _ in range(1000):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(1)
            except OSError:
                pass
        elif route == "/silent":
            time.sleep(float(query.get("s", "30")))
        elif route == "/redirect":
            self.send_response(int(query.get("code", "302")))
            self.send_header("Location", query.get("to", "/page"))
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif route == "/loop":
            self.send_response(302)
            self.send_header("Location", "/loop")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif route == "/png":
            self._send(200, b"\x89PNG\r\n\x1a\n" + b"\x00" * 4096, "image/png")
        elif route == "/octets":
            self._send(200, b"\x00\x01\x02binary" * 100, "text/plain")
        elif route == "/gzip":
            self._send(200, gzip.compress(b"<p>compressed words</p>"), "text/html",
                       Content_Encoding="gzip")
        elif route == "/bomb":  # 256 MB of spaces in about 250 KB
            self._send(200, bomb(), "text/plain", Content_Encoding="gzip")
        elif route == "/missing":
            self._send(404, b"<h1>No such page</h1>", "text/html")
        else:
            self._send(404, b"not found", "text/plain")


class WebServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, secret: str = "", tls: tuple[str, str] | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.scheme = "http"
        if tls is not None:  # (certificate file, key file): an https server
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self.socket = context.wrap_socket(self.socket, server_side=True)
            self.scheme = "https"
        self.seen: list[tuple[str, str]] = []  # (path, Host header) of every request
        self.big_sent = 0
        self.secret = secret
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self.server_address[1]

    @property
    def origin(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def __enter__(self) -> WebServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


def self_signed(folder) -> tuple[str, str]:
    """A certificate for 127.0.0.1 and localhost, and its key (openssl, EC: fast)."""
    cert, key = str(folder / "cert.pem"), str(folder / "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, capture_output=True)
    return cert, key
