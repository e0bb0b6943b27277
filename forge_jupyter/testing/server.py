"""FakeModelServer: the demo model's loopback server, answering litellm from a test's script.

Routes: those of ``forge_jupyter.demo.server`` (OpenAI chat completions, Anthropic messages,
GET …/models) and POST …/embeddings (deterministic hashed bag-of-words vectors).

Each request consumes the next script entry (FIFO); with ``demo=True`` the demo model answers
once the script is used up. Streaming responses use `Transfer-Encoding: chunked` and write one
SSE event per chunk, so a scripted drop() (socket closed without the terminating 0-chunk) reads
as a broken stream on the client, never as a clean end.
"""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from forge_jupyter.demo import server as _demo
from forge_jupyter.demo import wire
from forge_jupyter.demo.responder import demo_turn
from forge_jupyter.demo.server import Outcome, RecordedRequest
from forge_jupyter.demo.turn import Protocol
from forge_jupyter.demo.turn import Turn as AnyTurn
from forge_jupyter.testing.embeddings import embeddings_body
from forge_jupyter.testing.sse import split_events
from forge_jupyter.testing.turns import Delay, Drop, ScriptItem, Turn, as_turn

__all__ = ["FakeModelServer", "Outcome", "RecordedRequest"]


class _Handler(_demo.Handler):

    @property
    def fake(self) -> FakeModelServer:
        return self.server.model_server  # type: ignore[return-value]

    def list_models(self) -> None:
        fake = self.fake
        with fake._lock:
            fake.model_list_requests += 1
        if fake.models_status != 200:
            message = "fake model server: scripted failure of GET /models"
            return self.send_json(fake.models_status,
                                  wire.error_body("openai", fake.models_status, message))
        super().list_models()

    def post(self, path: str, raw: bytes) -> None:
        if path.endswith("/embeddings"):
            return self._embeddings(raw)
        super().post(path, raw)

    def _embeddings(self, raw: bytes) -> None:
        """Deterministic vectors (embeddings.py), or the status ``embedding_status`` says."""
        fake = self.fake
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        with fake._lock:
            fake.embedding_requests.append(body)
        if fake.embedding_status != 200:
            return self.send_error_body("openai", fake.embedding_status, "fake embeddings: failing")
        try:
            answer = embeddings_body(body)
        except ValueError as exc:
            return self.send_error_body("openai", 400, f"fake embeddings: {exc}")
        self.send_json(200, json.dumps(answer).encode())

    def answer(self, rec: RecordedRequest) -> None:
        try:
            rec.turn = turn = self.fake.answer(rec)
        except Exception as exc:  # a responder in the script failed: tell the client why
            msg = f"fake model server: script entry raised {type(exc).__name__}: {exc}"
            return self.fail(rec, 500, msg)
        if turn is None:
            n = rec.index
            msg = f"fake model server: script exhausted after {n} requests; add turns with server.add(...)"
            return self.fail(rec, 500, msg)
        if isinstance(turn, Turn) and turn.replay_bytes is not None:
            if turn.replay_protocol != rec.protocol:
                msg = (
                    f"fake model server: replay of {turn.replay_name} is an {turn.replay_protocol} "
                    f"stream but the request came to the {rec.protocol} route ({rec.path})"
                )
                return self.fail(rec, 400, msg)
            if not rec.stream:
                msg = f"fake model server: replay of {turn.replay_name} needs a stream=True request"
                return self.fail(rec, 400, msg)
            return self.write_stream(rec, turn, split_events(turn.replay_bytes))
        if isinstance(turn, Turn) and (err := turn.error_event) is not None:
            for ev in turn.events[: turn.events.index(err)]:
                self.fake._pause(ev.seconds)  # type: ignore[attr-defined]  # only delays precede it
            return self.fail(rec, err.status, err.message, err.retry_after, err.error_type)
        if rec.stream:
            # Leading delays come before the response headers: a server that accepted the
            # request and has said nothing yet (the client sees no first byte at all).
            lead = 0
            while lead < len(turn.events) and isinstance(turn.events[lead], Delay):
                self.fake._pause(turn.events[lead].seconds)  # type: ignore[attr-defined]
                lead += 1
            if lead:
                turn = replace(turn, events=turn.events[lead:])
            return self.write_turn(rec, turn)
        for ev in turn.events:
            if isinstance(ev, Delay):
                self.fake._pause(ev.seconds)
            elif isinstance(ev, Drop):
                return self._drop(rec)
        self.write_turn(rec, turn)

    def act(self, rec: RecordedRequest, action: object) -> bool:
        if isinstance(action, Delay):
            self.fake._pause(action.seconds)
            return True
        if isinstance(action, Drop):
            self._drop(rec)
            return False
        return super().act(rec, action)

    def _drop(self, rec: RecordedRequest) -> None:
        rec.outcome = "dropped"
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)


class FakeModelServer(_demo.DemoServer):
    """A loopback model server speaking OpenAI and Anthropic streaming, answering from a script.

    script entries: Turn, a single event, a list of events, a str (a text turn), or a function
    `request -> Turn`. Demo mode answers by rule (``forge_jupyter.demo``) once the script is used up.
    """

    handler = _Handler
    name = "fake model server"
    model_id = "fake-model"

    def __init__(
        self,
        script: Iterable[ScriptItem] = (),
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        demo: bool = False,
        demo_chunk_delay: float = 0.0,
    ) -> None:
        super().__init__(host=host, port=port, chunk_delay=demo_chunk_delay)
        self.demo_mode = demo
        self._script: deque[ScriptItem] = deque(script)
        self._requests: list[RecordedRequest] = []
        self._stopping = threading.Event()  # ends scripted delays when the server stops
        # POST …/embeddings (embeddings.py): not scripted, not in ``requests``
        self.embedding_requests: list[dict[str, Any]] = []
        self.embedding_status = 200  # another status makes every embeddings request fail
        # GET …/models: how many were asked (not in ``requests``); another status fails them
        self.model_list_requests = 0
        self.models_status = 200

    @property
    def demo_chunk_delay(self) -> float:
        return self.chunk_delay

    @classmethod
    def demo(cls, chunk_delay: float = 0.0, **kwargs: Any) -> FakeModelServer:
        """The offline demo model: answers any request by rule and says that it is the demo."""
        return cls(demo=True, demo_chunk_delay=chunk_delay, **kwargs)

    def _started(self) -> None:
        self._stopping.clear()

    def _stopping_now(self) -> None:
        self._stopping.set()

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
        rec = super()._record(protocol, path, body, headers, at)
        with self._lock:
            self._requests.append(rec)
        return rec

    def answer(self, rec: RecordedRequest) -> AnyTurn | None:
        with self._lock:
            item = self._script.popleft() if self._script else None
        if item is not None:
            return as_turn(item, rec)
        if self.demo_mode:
            return demo_turn(rec, chunk_delay=self.chunk_delay)
        return None

    def _pause(self, seconds: float) -> None:
        """A scripted delay; cut short when the server stops (a long "hang" ends with it)."""
        self._stopping.wait(seconds)

    def __repr__(self) -> str:
        where = self.url if self._httpd else "stopped"
        return (
            f"<FakeModelServer {where} requests={len(self._requests)} remaining={self.remaining}>"
        )


