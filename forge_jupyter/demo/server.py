"""DemoServer: a real HTTP server on loopback that answers litellm as the offline demo model.

Routes (matched by path suffix, so either base URL form works):
  POST …/chat/completions   OpenAI chat completions   (litellm: api_base=server.openai_base)
  POST …/messages           Anthropic messages        (litellm: api_base=server.anthropic_base)
  GET  …/models             a one-model list
litellm posts to `{api_base}/chat/completions` for `openai/…` models and to
`{api_base}/v1/messages` for `anthropic/…` models.

Each request is answered by `DemoServer.answer` (the demo's rules, `responder.py`). Streaming
responses use `Transfer-Encoding: chunked` and write one SSE event per chunk.
``forge_jupyter.testing.FakeModelServer`` builds on this class: a script of turns, faults,
recorded streams and embeddings.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, Self
from urllib.parse import urlsplit

from . import wire
from .responder import demo_turn
from .turn import Protocol, Turn

Outcome = Literal["complete", "dropped", "http_error", "client_closed"]


@dataclass
class RecordedRequest:
    """One request as the server saw it. Times are time.monotonic()."""

    index: int  # 0-based arrival order
    protocol: Protocol
    path: str
    body: dict[str, Any]
    headers: dict[str, str]  # names lower-cased
    received_at: float  # when the request line had arrived
    responded_at: float | None = None  # when the first response byte was written
    finished_at: float | None = None
    status: int | None = None
    outcome: Outcome | None = None  # None while the response is being written
    turn: Turn | None = field(default=None, repr=False)

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation sent (OpenAI or Anthropic shape)."""
        return list(self.body.get("messages") or [])

    @property
    def tools(self) -> list[str]:
        """Names of the tools offered (OpenAI `function.name` or Anthropic `name`)."""
        return [t.get("function", t).get("name", "") for t in self.body.get("tools") or []]

    @property
    def model(self) -> str | None:
        """The model name the client asked for."""
        return self.body.get("model")

    @property
    def stream(self) -> bool:
        """Whether the client asked for a stream."""
        return bool(self.body.get("stream"))


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    model_server: DemoServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up (a cancelled stream, a closed pool) is normal here, not news.
        if not isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            super().handle_error(request, client_address)


class Handler(BaseHTTPRequestHandler):
    """One connection: routes a request to its server's `answer` and writes the turn."""

    protocol_version = "HTTP/1.1"  # keep-alive and chunked transfer
    disable_nagle_algorithm = True  # every SSE event leaves at once
    server: _HTTPServer
    raised = "answering raised"  # how a failed answer is reported (500), before the exception
    _arrived = 0.0

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def setup(self) -> None:
        super().setup()
        self.server.model_server._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        self.server.model_server._track(self.connection, add=False)

    def parse_request(self) -> bool:
        self._arrived = time.monotonic()
        return super().parse_request()

    # -- plumbing ----------------------------------------------------------------------------
    def send_json(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        """A whole JSON response."""
        self.send_response(status, "Overloaded" if status == 529 else None)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def send_error_body(
        self,
        protocol: Protocol,
        status: int,
        message: str,
        retry_after: float | None = None,
        error_type: str | None = None,
    ) -> None:
        """A provider-shaped JSON error (see `wire.error_body`)."""
        headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else None
        self.send_json(status, wire.error_body(protocol, status, message, error_type), headers)

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        if urlsplit(self.path).path.rstrip("/").endswith("/models"):
            self.list_models()
        else:
            model = self.server.model_server
            body = f"{model.name}: POST {model.openai_base}/chat/completions or "
            body += f"{model.anthropic_base}/v1/messages"
            self.send_json(404, wire.error_body("openai", 404, body))

    def list_models(self) -> None:
        """GET …/models: the one model this server is."""
        model = {"id": self.server.model_server.model_id, "object": "model", "created": 0,
                 "owned_by": "forge"}
        self.send_json(200, json.dumps({"object": "list", "data": [model]}).encode())

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        path = urlsplit(self.path).path.rstrip("/")
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.post(path, raw)

    def post(self, path: str, raw: bytes) -> None:
        """A model request on either protocol's route, recorded and answered."""
        name = self.server.model_server.name
        protocol: Protocol | None = (
            "openai"
            if path.endswith("/chat/completions")
            else "anthropic"
            if path.endswith("/messages")
            else None
        )
        if protocol is None:
            msg = f"{name}: no route for POST {path}; use …/chat/completions or …/messages"
            return self.send_error_body("openai", 404, msg)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return self.send_error_body(protocol, 400, f"{name}: request body is not JSON")
        headers = {k.lower(): v for k, v in self.headers.items()}
        rec = self.server.model_server._record(protocol, path, body, headers, self._arrived)
        try:
            self.answer(rec)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError):
            rec.outcome = "client_closed"
            self.close_connection = True
        finally:
            rec.finished_at = time.monotonic()

    # -- answering ---------------------------------------------------------------------------
    def answer(self, rec: RecordedRequest) -> None:
        """Write the server's turn for ``rec``: streamed when it asked for a stream."""
        try:
            rec.turn = turn = self.server.model_server.answer(rec)
        except Exception as exc:  # a responder failed: tell the client why
            name = self.server.model_server.name
            msg = f"{name}: {self.raised} {type(exc).__name__}: {exc}"
            return self.fail(rec, 500, msg)
        if turn is None:
            return self.fail(rec, 500, f"{self.server.model_server.name}: no answer")
        self.write_turn(rec, turn)

    def write_turn(self, rec: RecordedRequest, turn: Turn) -> None:
        """``turn`` as an SSE stream or one JSON body."""
        if rec.stream:
            return self.write_stream(rec, turn, wire.stream(turn, rec))
        rec.responded_at = time.monotonic()
        self.send_json(200, wire.complete(turn, rec))
        rec.status, rec.outcome = 200, "complete"

    def fail(self, rec: RecordedRequest, status: int, message: str, *args: Any) -> None:
        """Answer ``rec`` with an HTTP error."""
        rec.responded_at = time.monotonic()
        self.send_error_body(rec.protocol, status, message, *args)
        rec.status, rec.outcome = status, "http_error"

    def act(self, rec: RecordedRequest, action: object) -> bool:
        """Carry out an event of the turn that is not on the wire; False ends the stream.
        The demo model's turns have none."""
        raise TypeError(f"{self.server.model_server.name} cannot act on {action!r}")

    def write_stream(self, rec: RecordedRequest, turn: Turn, actions: Iterable[object]) -> None:
        """A chunked SSE response: one chunk per event, ``turn.chunk_delay`` apart."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        rec.responded_at, rec.status = time.monotonic(), 200
        write, pause, first = self.wfile.write, turn.chunk_delay, True
        for action in actions:
            if isinstance(action, bytes):
                if pause and not first:
                    time.sleep(pause)
                first = False
                write(b"%X\r\n%s\r\n" % (len(action), action))
            elif not self.act(rec, action):
                return
        write(b"0\r\n\r\n")
        rec.outcome = "complete"


class DemoServer:
    """A loopback model server speaking OpenAI and Anthropic streaming, answering every request
    by the demo model's rules (`responder.py`); it says in every answer that it is the demo."""

    handler: type[Handler] = Handler
    name = "demo model server"  # how its errors and its thread name it
    model_id = "forge-demo"  # what GET …/models lists

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, chunk_delay: float = 0.0) -> None:
        self.host, self.port = host, port
        self.chunk_delay = chunk_delay  # seconds between two streamed events (a readable pace)
        self._answered = 0
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def answer(self, rec: RecordedRequest) -> Turn | None:
        """The turn that answers ``rec``: the demo model's."""
        return demo_turn(rec, chunk_delay=self.chunk_delay)

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> Self:
        """Listen (on a free port when ``port`` is 0) and answer from a daemon thread."""
        if self._httpd is not None:
            return self
        self._started()
        httpd = _HTTPServer((self.host, self.port), self.handler)
        httpd.model_server = self
        self._httpd, self.port = httpd, httpd.server_address[1]
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"{self.name.replace(' ', '-')}:{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def _started(self) -> None:
        """Called as the server starts, before it listens."""

    def _stopping_now(self) -> None:
        """Called as the server stops, before its connections are closed."""

    def stop(self) -> None:
        """Stop listening and close every open connection."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping_now()
        httpd.shutdown()
        with self._lock:
            conns = list(self._connections)
        for conn in conns:  # pooled keep-alive connections must not outlive the server
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- addresses ---------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """``http://host:port``; the server must be running."""
        if self._httpd is None:
            raise RuntimeError(f"{type(self).__name__} is not running: call start() or use `with`")
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base(self) -> str:
        """The ``api_base`` for litellm's ``openai/…`` models."""
        return f"{self.url}/v1"

    @property
    def anthropic_base(self) -> str:
        """The ``api_base`` for litellm's ``anthropic/…`` models."""
        return self.url

    def model_kwargs(
        self, protocol: Protocol = "openai", model: str | None = None
    ) -> dict[str, str]:
        """litellm keyword arguments that reach this server: model, api_base, api_key."""
        if protocol == "anthropic":
            return {
                "model": f"anthropic/{model or 'claude-sonnet-4-5'}",
                "api_base": self.anthropic_base,
                "api_key": "sk-ant-fake",
            }
        if protocol != "openai":
            raise ValueError(f"protocol must be 'openai' or 'anthropic', not {protocol!r}")
        return {
            "model": f"openai/{model or 'fake-model'}",
            "api_base": self.openai_base,
            "api_key": "sk-fake",
        }

    def _record(
        self, protocol: Protocol, path: str, body: Any, headers: dict[str, str], at: float
    ) -> RecordedRequest:
        with self._lock:
            body = body if isinstance(body, dict) else {"_body": body}
            rec = RecordedRequest(self._answered, protocol, path, body, headers, at)
            self._answered += 1
            return rec

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._lock:
            (self._connections.add if add else self._connections.discard)(conn)

    def __repr__(self) -> str:
        where = self.url if self._httpd else "stopped"
        return f"<{type(self).__name__} {where}>"
