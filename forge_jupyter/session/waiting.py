"""What approvals and questions share: requests that wait for a person's answer.

A request waits on a future of the loop that asked; who can answer registers a handler (the
widget, the side panel, a script's own function), which may answer at once or later from any
thread. An answer is taken out of the pending set under a lock, so of two answers racing (the
cell's button and the side panel's) exactly one wins; the other gets ``NotFound``.
session/approval.py and session/question.py say what their requests and answers are.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

from ..bus import Bus
from ..errors import NotFound


class _Request(Protocol):
    id: str
    session_id: str


R = TypeVar("R", bound=_Request)


class Waiting(Generic[R]):
    """The requests of one kind waiting for an answer, and who can answer them."""

    noun = "request"  # in the NotFound message: "no pending <noun> …"

    def __init__(self, bus: Bus) -> None:
        self.bus = bus
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[R, asyncio.AbstractEventLoop, asyncio.Future]] = {}
        self._handlers: list[Callable[[R], Any]] = []

    def add_handler(self, handler: Callable[[R], Any]) -> Callable[[], None]:
        """Register something that can answer: it may answer at once (return the answer) or
        return None and answer later. Returns the function that removes it."""
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

    def pending(self, session_id: str | None = None) -> list[R]:
        with self._lock:
            return [r for r, _, _ in self._pending.values()
                    if session_id is None or r.session_id == session_id]

    async def _wait(self, request: R, asked: Any,
                    answer_now: Callable[[R, Any], None]) -> Any:
        """Publish ``asked``, offer the request to the handlers (the first that answers at once
        wins, through ``answer_now``) and wait for the answer."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()
        with self._lock:
            self._pending[request.id] = (request, loop, future)
            handlers = list(self._handlers)
        try:
            self.bus.publish(asked)
            for handler in handlers:
                immediate = handler(request)
                if immediate is not None:
                    answer_now(request, immediate)
                    break
            return await future
        finally:
            with self._lock:
                still = self._pending.pop(request.id, None)
            if still is not None:  # ended (a cancel) before anyone answered
                self._unanswered(request)

    def _unanswered(self, request: R) -> None:
        """A request's wait ended without an answer (its run stopped)."""

    def _settle(self, request_id: str, answer: Any) -> R:
        """Hand ``answer`` to the waiting request, from any thread; the request it answered."""
        with self._lock:
            found = self._pending.pop(request_id, None)
        if found is None:
            raise NotFound(f"no pending {self.noun} {request_id!r} (already answered, or its "
                           "run ended)")
        request, loop, future = found

        def resolve() -> None:
            if not future.done():
                future.set_result(answer)

        loop.call_soon_threadsafe(resolve)
        return request
