"""Approvals: an ``ask`` suspends the tool call until a person answers (DESIGN §5).

The request is published on the bus (the widget and side panel show it) and recorded as an
event; the answer — ``once``, ``session`` (allow this tool for the rest of the session) or
``deny`` with a reason — comes back through ``Forge.approve`` from any thread, and is
recorded too. When nothing can answer (no approval handler registered: a plain script), an
ask is denied at once with that reason: it never hangs.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..bus import ApprovalAnswered, ApprovalRequested, Bus
from ..errors import NotFound
from ..ids import new_id
from ..model import now

ANSWERS = ("once", "session", "deny")


@dataclass
class ApprovalRequest:
    session_id: str
    part_id: str
    tool: str
    input: dict[str, Any]
    subject: str
    rule: str
    id: str = field(default_factory=lambda: new_id("approval"))
    created_at: float = field(default_factory=now)


@dataclass(frozen=True)
class Answer:
    answer: str  # once | session | deny
    reason: str | None = None
    by: str = "user"


Handler = Callable[[ApprovalRequest], Answer | str | None]


class Approvals:
    def __init__(self, bus: Bus) -> None:
        self.bus = bus
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[ApprovalRequest, asyncio.AbstractEventLoop, asyncio.Future]] = {}
        self._handlers: list[Handler] = []

    def add_handler(self, handler: Handler) -> Callable[[], None]:
        """Register something that can answer: it may answer at once (return an Answer or
        "once"/"session"/"deny") or return None and answer later via ``answer()``."""
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

    def pending(self, session_id: str | None = None) -> list[ApprovalRequest]:
        with self._lock:
            return [r for r, _, _ in self._pending.values()
                    if session_id is None or r.session_id == session_id]

    async def ask(self, request: ApprovalRequest) -> Answer:
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()
        with self._lock:
            self._pending[request.id] = (request, loop, future)
            handlers = list(self._handlers)
        try:
            self.bus.publish(ApprovalRequested(request.session_id, request.id, request.part_id,
                                               request.tool, request.input, request.rule))
            for handler in handlers:
                immediate = handler(request)
                if immediate is not None:
                    self.answer(request.id, immediate)
                    break
            return await future
        finally:
            with self._lock:
                self._pending.pop(request.id, None)

    def answer(self, request_id: str, answer: Answer | str, reason: str | None = None,
               by: str = "user") -> None:
        """Answer a pending request from any thread."""
        if isinstance(answer, str):
            answer = Answer(answer, reason, by)
        if answer.answer not in ANSWERS:
            raise ValueError(f"an approval answer is one of {', '.join(ANSWERS)}, not {answer.answer!r}")
        # Taken out under the lock, so of two answers racing (the widget and the side panel
        # clicked at once) exactly one wins and is published; the other gets NotFound.
        with self._lock:
            found = self._pending.pop(request_id, None)
        if found is None:
            raise NotFound(f"no pending approval {request_id!r} (already answered, or the run ended)")
        request, loop, future = found

        def resolve() -> None:
            if not future.done():
                future.set_result(answer)

        loop.call_soon_threadsafe(resolve)
        self.bus.publish(ApprovalAnswered(request.session_id, request_id, answer.answer, answer.reason))
