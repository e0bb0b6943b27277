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

from collections.abc import Callable
from dataclasses import dataclass, field

from ..bus import QuestionAnswered, QuestionAsked
from ..ids import new_id
from ..message import now
from .waiting import Waiting

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


class Questions(Waiting[QuestionRequest]):
    """The questions waiting for a person, and who can answer them."""

    noun = "question"

    async def ask(self, request: QuestionRequest) -> Reply:
        """Wait for the answer; a cancel (Stop, abort, timeout) closes the question first."""
        asked = QuestionAsked(request.session_id, request.id, request.part_id, request.question,
                              tuple(request.options))
        return await self._wait(request, asked)

    def _answer_now(self, request: QuestionRequest, reply: Reply | str, by: str) -> None:
        if isinstance(reply, Reply):
            self._resolve(request.id, reply)
        else:
            self.answer(request.id, reply, by="handler")

    def _unanswered(self, request: QuestionRequest) -> None:
        # the card must not go on asking
        self.bus.publish(QuestionAnswered(request.session_id, request.id, None, "forge", STOPPED))

    def answer(self, request_id: str, text: str, by: str = "user") -> None:
        """Answer a pending question from any thread (the text is checked first)."""
        self._resolve(request_id, Reply(check_answer(text), by))

    def dismiss(self, request_id: str, reason: str, by: str = "forge") -> None:
        """End a pending question without an answer; the model reads ``reason``."""
        self._resolve(request_id, Reply(None, by, reason))

    def _resolve(self, request_id: str, reply: Reply) -> None:
        if reply.text is not None:
            reply = Reply(check_answer(reply.text), reply.by, reply.reason)
        request = self._settle(request_id, reply)
        self.bus.publish(QuestionAnswered(request.session_id, request_id, reply.text, reply.by,
                                          reply.reason))
