"""Approvals: an ``ask`` suspends the tool call until a person answers (DESIGN §5).

The request is published on the bus (the widget and side panel show it) and recorded as an
event; the answer — ``once``, ``session`` (allow this tool for the rest of the session) or
``deny`` with a reason — comes back through ``Forge.approve`` from any thread, and is
recorded too, with who decided: a person (in the widget, the side panel) or the handler that
answered at once, by its name. When nothing can answer (no approval handler registered: a
plain script), an ask is denied at once with that reason: it never hangs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..bus import ApprovalAnswered, ApprovalRequested, Bus
from ..ids import new_id
from ..message import now
from ..tools.permission import Rule
from .waiting import Waiting

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
    handler: bool = False  # decided by an approval handler itself (``by`` is its name)


Handler = Callable[[ApprovalRequest], Answer | str | None]


class Approvals(Waiting[ApprovalRequest]):
    noun = "approval"

    def __init__(self, bus: Bus) -> None:
        super().__init__(bus)
        # "Allow for session" answers, by session id: they live with the person and the process
        # (the kernel) that gave them, never in the store — a row someone else wrote, an
        # imported session, a copied store or a restarted kernel grants nothing.
        self._grants: dict[str, list[Rule]] = {}
        self._grants_lock = threading.Lock()

    def grant(self, session_id: str, rule: Rule) -> None:
        with self._grants_lock:
            self._grants.setdefault(session_id, []).append(rule)

    def granted(self, session_id: str) -> list[Rule]:
        """This process's "allow for session" grants of ``session_id``."""
        with self._grants_lock:
            return list(self._grants.get(session_id, ()))

    async def ask(self, request: ApprovalRequest) -> Answer:
        asked = ApprovalRequested(request.session_id, request.id, request.part_id, request.tool,
                                  request.input, request.rule)
        return await self._wait(request, asked)

    def _answer_now(self, request: ApprovalRequest, immediate: Answer | str, by: str) -> None:
        if isinstance(immediate, str):
            immediate = Answer(immediate, None, by, handler=True)
        elif immediate.by == "user":  # left at its default: the handler decided, not a person
            immediate = replace(immediate, by=by, handler=True)
        self.answer(request.id, immediate)

    def answer(self, request_id: str, answer: Answer | str, reason: str | None = None,
               by: str = "user") -> None:
        """Answer a pending request from any thread."""
        if isinstance(answer, str):
            answer = Answer(answer, reason, by)
        if answer.answer not in ANSWERS:
            raise ValueError(f"an approval answer is one of {', '.join(ANSWERS)}, not {answer.answer!r}")
        request = self._settle(request_id, answer)
        self.bus.publish(ApprovalAnswered(request.session_id, request_id, answer.answer, answer.reason))
