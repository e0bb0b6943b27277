"""FakeModelServer: a real HTTP server on loopback that answers litellm with scripted turns.

Routes (matched by path suffix, so either base URL form works):
  POST …/chat/completions   OpenAI chat completions   (litellm: api_base=server.openai_base)
  POST …/messages           Anthropic messages        (litellm: api_base=server.anthropic_base)
  POST …/embeddings         OpenAI embeddings: deterministic hashed bag-of-words vectors
  GET  …/models             a one-model list
litellm 1.110 posts to `{api_base}/chat/completions` for `openai/…` models and to
`{api_base}/v1/messages` for `anthropic/…` models.

Each request consumes the next script entry (FIFO). Streaming responses use
`Transfer-Encoding: chunked` and write one SSE event per chunk, so a scripted drop() (socket closed
without the terminating 0-chunk) reads as a broken stream on the client, never as a clean end.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import urlsplit

from forge_jupyter.testing import wire
from forge_jupyter.testing.demo import demo_turn
from forge_jupyter.testing.embeddings import embeddings_body
from forge_jupyter.testing.sse import Protocol, split_events
from forge_jupyter.testing.turns import Delay, Drop, ScriptItem, Turn, as_turn

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
        return list(self.body.get("messages") or [])

    @property
    def tools(self) -> list[str]:
        """Names of the tools offered (OpenAI `function.name` or Anthropic `name`)."""
        return [t.get("function", t).get("name", "") for t in self.body.get("tools") or []]

    @property
    def model(self) -> str | None:
        return self.body.get("model")

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeModelServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up (a cancelled stream, a closed pool) is normal here, not news.
        if not isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and chunked transfer
    disable_nagle_algorithm = True  # every SSE event leaves at once
    server: _HTTPServer
    _arrived = 0.0

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def setup(self) -> None:
        super().setup()
        self.server.fake._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        self.server.fake._track(self.connection, add=False)

    def parse_request(self) -> bool:
        self._arrived = time.monotonic()
        return super().parse_request()

    # -- plumbing ----------------------------------------------------------------------------
    def _send_json(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status, "Overloaded" if status == 529 else None)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _send_error(
        self,
        protocol: Protocol,
        status: int,
        message: str,
        retry_after: float | None = None,
        error_type: str | None = None,
    ) -> None:
        headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else None
        self._send_json(status, wire.error_body(protocol, status, message, error_type), headers)

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        if urlsplit(self.path).path.rstrip("/").endswith("/models"):
            fake = self.server.fake
            with fake._lock:
                fake.model_list_requests += 1
            if fake.models_status != 200:
                message = "fake model server: scripted failure of GET /models"
                return self._send_json(fake.models_status,
                                       wire.error_body("openai", fake.models_status, message))
            model = {"id": "fake-model", "object": "model", "created": 0, "owned_by": "forge"}
            self._send_json(200, json.dumps({"object": "list", "data": [model]}).encode())
        else:
            body = f"fake model server: POST {self.server.fake.openai_base}/chat/completions or "
            body += f"{self.server.fake.anthropic_base}/v1/messages"
            self._send_json(404, wire.error_body("openai", 404, body))

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        path = urlsplit(self.path).path.rstrip("/")
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if path.endswith("/embeddings"):
            return self._embeddings(raw)
        protocol: Protocol | None = (
            "openai"
            if path.endswith("/chat/completions")
            else "anthropic"
            if path.endswith("/messages")
            else None
        )
        if protocol is None:
            msg = (
                f"fake model server: no route for POST {path}; use …/chat/completions or …/messages"
            )
            return self._send_error("openai", 404, msg)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return self._send_error(protocol, 400, "fake model server: request body is not JSON")
        fake = self.server.fake
        headers = {k.lower(): v for k, v in self.headers.items()}
        rec = fake._record(protocol, path, body, headers, self._arrived)
        try:
            self._answer(rec)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError):
            rec.outcome = "client_closed"
            self.close_connection = True
        finally:
            rec.finished_at = time.monotonic()

    def _embeddings(self, raw: bytes) -> None:
        """Deterministic vectors (embeddings.py), or the status ``embedding_status`` says."""
        fake = self.server.fake
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        with fake._lock:
            fake.embedding_requests.append(body)
        if fake.embedding_status != 200:
            return self._send_error("openai", fake.embedding_status, "fake embeddings: failing")
        try:
            answer = embeddings_body(body)
        except ValueError as exc:
            return self._send_error("openai", 400, f"fake embeddings: {exc}")
        self._send_json(200, json.dumps(answer).encode())

    # -- answering ---------------------------------------------------------------------------
    def _answer(self, rec: RecordedRequest) -> None:
        try:
            rec.turn = turn = self.server.fake._next_turn(rec)
        except Exception as exc:  # a responder in the script failed: tell the client why
            msg = f"fake model server: script entry raised {type(exc).__name__}: {exc}"
            return self._fail(rec, 500, msg)
        if turn is None:
            n = rec.index
            msg = f"fake model server: script exhausted after {n} requests; add turns with server.add(...)"
            return self._fail(rec, 500, msg)
        if turn.replay_bytes is not None:
            if turn.replay_protocol != rec.protocol:
                msg = (
                    f"fake model server: replay of {turn.replay_name} is an {turn.replay_protocol} "
                    f"stream but the request came to the {rec.protocol} route ({rec.path})"
                )
                return self._fail(rec, 400, msg)
            if not rec.stream:
                msg = f"fake model server: replay of {turn.replay_name} needs a stream=True request"
                return self._fail(rec, 400, msg)
            return self._write_stream(rec, turn, split_events(turn.replay_bytes))
        if (err := turn.error_event) is not None:
            for ev in turn.events[: turn.events.index(err)]:
                self.server.fake._pause(ev.seconds)  # type: ignore[union-attr]  # only delays precede it
            return self._fail(rec, err.status, err.message, err.retry_after, err.error_type)
        if rec.stream:
            # Leading delays come before the response headers: a server that accepted the
            # request and has said nothing yet (the client sees no first byte at all).
            lead = 0
            while lead < len(turn.events) and isinstance(turn.events[lead], Delay):
                self.server.fake._pause(turn.events[lead].seconds)  # type: ignore[union-attr]
                lead += 1
            if lead:
                turn = replace(turn, events=turn.events[lead:])
            return self._write_stream(rec, turn, wire.stream(turn, rec))
        for ev in turn.events:
            if isinstance(ev, Delay):
                self.server.fake._pause(ev.seconds)
            elif isinstance(ev, Drop):
                return self._drop(rec)
        rec.responded_at = time.monotonic()
        self._send_json(200, wire.complete(turn, rec))
        rec.status, rec.outcome = 200, "complete"

    def _fail(self, rec: RecordedRequest, status: int, message: str, *args: Any) -> None:
        rec.responded_at = time.monotonic()
        self._send_error(rec.protocol, status, message, *args)
        rec.status, rec.outcome = status, "http_error"

    def _drop(self, rec: RecordedRequest) -> None:
        rec.outcome = "dropped"
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)

    def _write_stream(self, rec: RecordedRequest, turn: Turn, actions: Iterable[Any]) -> None:
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
            elif isinstance(action, Delay):
                self.server.fake._pause(action.seconds)
            elif isinstance(action, Drop):
                return self._drop(rec)
        write(b"0\r\n\r\n")
        rec.outcome = "complete"


class FakeModelServer:
    """A loopback model server speaking OpenAI and Anthropic streaming, answering from a script.

    script entries: Turn, a single event, a list of events, a str (a text turn), or a function
    `request -> Turn`. Demo mode answers by rule (see demo.py) once the script is used up.
    """

    def __init__(
        self,
        script: Iterable[ScriptItem] = (),
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        demo: bool = False,
        demo_chunk_delay: float = 0.0,
    ) -> None:
        self.host, self.port = host, port
        self.demo_mode, self.demo_chunk_delay = demo, demo_chunk_delay
        self._script: deque[ScriptItem] = deque(script)
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()  # ends scripted delays when the server stops
        # POST …/embeddings (embeddings.py): not scripted, not in ``requests``
        self.embedding_requests: list[dict[str, Any]] = []
        self.embedding_status = 200  # another status makes every embeddings request fail
        # GET …/models: how many were asked (not in ``requests``); another status fails them
        self.model_list_requests = 0
        self.models_status = 200

    @classmethod
    def demo(cls, chunk_delay: float = 0.0, **kwargs: Any) -> FakeModelServer:
        """The offline demo model: answers any request by rule and says that it is the demo."""
        return cls(demo=True, demo_chunk_delay=chunk_delay, **kwargs)

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> FakeModelServer:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = _HTTPServer((self.host, self.port), _Handler)
        httpd.fake = self
        self._httpd, self.port = httpd, httpd.server_address[1]
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"fake-model-server:{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
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

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- addresses ---------------------------------------------------------------------------
    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("FakeModelServer is not running: call start() or use `with`")
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_base(self) -> str:
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

    # -- script and recording ----------------------------------------------------------------
    def add(self, *turns: ScriptItem) -> FakeModelServer:
        """Append script entries (thread-safe)."""
        with self._lock:
            self._script.extend(turns)
        return self

    def clear(self) -> FakeModelServer:
        """Drop every script entry not consumed yet (thread-safe)."""
        with self._lock:
            self._script.clear()
        return self

    def reset(self) -> FakeModelServer:
        """As if new: no script entry left and no request recorded (thread-safe), for a server
        that outlives one test module (one per run, shared by the browser tests)."""
        with self._lock:
            self._script.clear()
            self._requests.clear()
        self.embedding_requests.clear()
        self.embedding_status, self.model_list_requests, self.models_status = 200, 0, 200
        return self

    @property
    def remaining(self) -> int:
        """Script entries not consumed yet."""
        with self._lock:
            return len(self._script)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def first_byte_times(self) -> list[float]:
        """time.monotonic() at which each request arrived (its request line was read)."""
        return [r.received_at for r in self.requests]

    def _record(
        self, protocol: Protocol, path: str, body: Any, headers: dict[str, str], at: float
    ) -> RecordedRequest:
        with self._lock:
            body = body if isinstance(body, dict) else {"_body": body}
            rec = RecordedRequest(len(self._requests), protocol, path, body, headers, at)
            self._requests.append(rec)
            return rec

    def _next_turn(self, rec: RecordedRequest) -> Turn | None:
        with self._lock:
            item = self._script.popleft() if self._script else None
        if item is not None:
            return as_turn(item, rec)
        if self.demo_mode:
            return demo_turn(rec, chunk_delay=self.demo_chunk_delay)
        return None

    def _pause(self, seconds: float) -> None:
        """A scripted delay; cut short when the server stops (a long "hang" ends with it)."""
        self._stopping.wait(seconds)

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._lock:
            (self._connections.add if add else self._connections.discard)(conn)

    def __repr__(self) -> str:
        where = self.url if self._httpd else "stopped"
        return (
            f"<FakeModelServer {where} requests={len(self._requests)} remaining={self.remaining}>"
        )
