"""Questions: the ``question`` tool asks the person and waits for the answer (seed
request-lifecycle, "the interactive question tool").

Built like approvals (session/approval.py): the request is published on the bus (the widget and
the side panel show it as a card with its options and a text box) and recorded as an event by
the tool; the answer comes back through ``Forge.answer`` / ``Session.answer`` from any thread,
or from a handler registered with ``Forge.on_question``. Where nothing can answer (no handler:
a plain script, nbconvert) the tool returns at once saying so, as an ``ask`` is denied at once:
it never hangs. A question still waiting when its run stops (Stop, abort, the tool's timeout)
is closed, and its card says so.

Handlers for questions and for approvals are kept apart: an approval handler that answers
``"once"`` to everything must never answer a question with the word "once".
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from ..bus import Bus, QuestionAnswered, QuestionAsked
from ..errors import NotFound
from ..ids import new_id
from ..model import now

MAX_ANSWER = 10_000  # characters of an answer: the model reads it, the store keeps it
NO_ONE = ("no one can answer questions here (no question handler is registered and no live "
          "notebook view shows this run, as in a plain script or nbconvert)")
STOPPED = "the run stopped before the question was answered"


@dataclass
class QuestionRequest:
    session_id: str
    part_id: str
    question: str
    options: tuple[str, ...] = ()
    id: str = field(default_factory=lambda: new_id("question"))
    created_at: float = field(default_factory=now)


@dataclass(frozen=True)
class Reply:
    """How a question ended: ``text`` is the person's answer; None when there is none
    (``reason`` says why: dismissed, no one could answer, the run stopped)."""

    text: str | None
    by: str = "user"
    reason: str | None = None


QuestionHandler = Callable[[QuestionRequest], "Reply | str | None"]


def check_answer(text: object) -> str:
    """The answer as the model will read it, or a ValueError saying what to send instead."""
    if not isinstance(text, str):
        raise ValueError(f"an answer to a question is text (a str), not {type(text).__name__}")
    text = text.strip()
    if not text:
        raise ValueError("the answer is empty: type an answer or pick one of the options")
    if len(text) > MAX_ANSWER:
        raise ValueError(f"the answer is {len(text):,} characters; keep it under {MAX_ANSWER:,}")
    return text


class Questions:
    """The questions waiting for a person, and who can answer them."""

    def __init__(self, bus: Bus) -> None:
        self.bus = bus
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[QuestionRequest, asyncio.AbstractEventLoop, asyncio.Future]] = {}
        self._handlers: list[QuestionHandler] = []

    def add_handler(self, handler: QuestionHandler) -> Callable[[], None]:
        """Register something that can answer: it may answer at once (return the text or a
        Reply) or return None and answer later via ``answer()``. Returns the remover."""
        with self._lock:
            self._handlers.append(handler)

        def remove() -> None:
            with self._lock:
                if handler in self._handlers:
                    self._handlers.remove(handler)

        return remove

    @property
    def can_answer(self) -> bool:
        return bool(self._handlers)

    def pending(self, session_id: str | None = None) -> list[QuestionRequest]:
        with self._lock:
            return [r for r, _, _ in self._pending.values()
                    if session_id is None or r.session_id == session_id]

    async def ask(self, request: QuestionRequest) -> Reply:
        """Wait for the answer; a cancel (Stop, abort, timeout) closes the question first."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()
        with self._lock:
            self._pending[request.id] = (request, loop, future)
            handlers = list(self._handlers)
        try:
            self.bus.publish(QuestionAsked(request.session_id, request.id, request.part_id,
                                           request.question, tuple(request.options)))
            for handler in handlers:
                immediate = handler(request)
                if immediate is not None:
                    if isinstance(immediate, Reply):
                        self._resolve(request.id, immediate)
                    else:
                        self.answer(request.id, immediate, by="handler")
                    break
            return await future
        finally:
            with self._lock:
                still = self._pending.pop(request.id, None)
            if still is not None:  # never answered: the card must not go on asking
                self.bus.publish(QuestionAnswered(request.session_id, request.id, None,
                                                  "forge", STOPPED))

    def answer(self, request_id: str, text: str, by: str = "user") -> None:
        """Answer a pending question from any thread (the text is checked first)."""
        self._resolve(request_id, Reply(check_answer(text), by))

    def dismiss(self, request_id: str, reason: str, by: str = "forge") -> None:
        """End a pending question without an answer; the model reads ``reason``."""
        self._resolve(request_id, Reply(None, by, reason))

    def _resolve(self, request_id: str, reply: Reply) -> None:
        if reply.text is not None:
            reply = Reply(check_answer(reply.text), reply.by, reply.reason)
        # Taken out under the lock: of two answers racing (the widget and the side panel)
        # exactly one wins and is published; the other gets NotFound.
        with self._lock:
            found = self._pending.pop(request_id, None)
        if found is None:
            raise NotFound(f"no pending question {request_id!r} (already answered, or its run ended)")
        request, loop, future = found

        def resolve() -> None:
            if not future.done():
                future.set_result(reply)

        loop.call_soon_threadsafe(resolve)
        self.bus.publish(QuestionAnswered(request.session_id, request_id, reply.text, reply.by,
                                          reply.reason))
