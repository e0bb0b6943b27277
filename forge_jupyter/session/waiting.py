"""What approvals and questions share: requests that wait for a person's answer.

A request waits on a future of the loop that asked; who can answer registers a handler (the
widget, the side panel, a script's own function), which may answer at once or later from any
thread. A *fallback* handler answers only what no one else can: it is asked when no other
handler is registered (a headless run: nbconvert, papermill), and is handed what is still
waiting when the last other one goes (a live view that fell back to text) — so a notebook's
handler never answers before the person who can click in a live view. An answer is taken out of the pending set under a lock, so of two answers racing (the
cell's button and the side panel's) exactly one wins; the other gets ``NotFound``.
session/approval.py and session/question.py say what their requests and answers are.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

from ..bus import Bus
from ..errors import NotFound

log = logging.getLogger(__name__)


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
        self._fallbacks: list[Callable[[R], Any]] = []

    def add_handler(self, handler: Callable[[R], Any], *, fallback: bool = False
                    ) -> Callable[[], None]:
        """Register something that can answer: it may answer at once (return the answer) or
        return None and answer later. ``fallback``: only what no other handler can answer
        (see the module's docstring). Returns the function that removes it."""
        with self._lock:
            (self._fallbacks if fallback else self._handlers).append(handler)

        def remove() -> None:
            with self._lock:
                for handlers in (self._handlers, self._fallbacks):
                    if handler in handlers:
                        handlers.remove(handler)
                orphans = [] if fallback or self._handlers else [
                    r for r, _, _ in self._pending.values()]
                fallbacks = list(self._fallbacks)
            for request in orphans:  # no one left to click: a fallback may answer them
                self._offer(request, fallbacks, quiet=True)

        return remove

    @property
    def can_answer(self) -> bool:
        return bool(self._handlers or self._fallbacks)

    def pending(self, session_id: str | None = None) -> list[R]:
        with self._lock:
            return [r for r, _, _ in self._pending.values()
                    if session_id is None or r.session_id == session_id]

    async def _wait(self, request: R, asked: Any) -> Any:
        """Publish ``asked``, offer the request to the handlers (the first that answers at once
        wins, through ``_answer_now``; the fallbacks only when there is no other) and wait for
        the answer."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()
        with self._lock:
            self._pending[request.id] = (request, loop, future)
            handlers = list(self._handlers) or list(self._fallbacks)
        try:
            self.bus.publish(asked)
            self._offer(request, handlers)
            return await future
        finally:
            with self._lock:
                still = self._pending.pop(request.id, None)
            if still is not None:  # ended (a cancel) before anyone answered
                self._unanswered(request)

    def _offer(self, request: R, handlers: list[Callable[[R], Any]], quiet: bool = False) -> None:
        """Ask ``handlers`` in turn; the first that answers at once answers. ``quiet``: a
        handler's failure is logged, not raised (no one is waiting on this call to fail)."""
        for handler in handlers:
            try:
                immediate = handler(request)
                if immediate is not None:
                    self._answer_now(request, immediate, handler_name(handler))
                    return
            except NotFound:
                return  # answered meanwhile (a click raced the handler)
            except Exception:
                if not quiet:
                    raise
                log.warning("forge: a %s handler failed", self.noun, exc_info=True)

    def _answer_now(self, request: R, immediate: Any, by: str) -> None:
        """Record what a handler answered at once, as decided ``by`` it."""
        raise NotImplementedError

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


PEOPLE = frozenset({"user", "widget", "panel"})  # who a decision names as "you"
RESERVED = PEOPLE | {"forge", "rule", "handler"}


def handler_name(handler: Callable[..., Any]) -> str:
    """Who a handler's decision is recorded as: its function's name (``answer_approvals``), or
    "a handler" for one without a name of its own (a lambda) or with a name the record
    already gives another meaning ("user", "rule")."""
    name = getattr(handler, "__name__", None)
    if not isinstance(name, str) or not name.isidentifier() or name in RESERVED:
        return "a handler"
    return name
