"""A live view as someone who can answer: approvals (session/approval.py) and the question
tool's questions (session/question.py), shared by the cell widget and the side panel.

While a view that a person can click is live, it registers "I will answer later" handlers on
the Forge, so an ``ask`` and a question wait for the click instead of being refused at once;
when no one can click any more (the view fell back to text, the last panel closed) what is
still waiting is refused or closed, as in a plain script.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)


def _later(_request: Any) -> None:
    return None  # the person answers in the view, later


def listen(forge: Any) -> Callable[[], None]:
    """Register ``forge``'s approval and question handlers; returns what removes both."""
    removers = [forge.on_approval(_later)]
    on_question = getattr(forge, "on_question", None)
    if on_question is not None:
        removers.append(on_question(_later))

    def remove() -> None:
        for r in removers:
            r()

    return remove


def close_waiting(forge: Any, session_id: str | None, reason: str) -> None:
    """Deny the approvals and close the questions of ``session_id`` still waiting: nobody can
    answer them now."""
    for request in forge.approvals.pending(session_id):
        try:
            forge.approve(request.id, "deny", reason, by="forge")
        except Exception:
            log.debug("forge: approval already answered", exc_info=True)
    questions = getattr(forge, "questions", None)
    for question in questions.pending(session_id) if questions is not None else ():
        try:
            questions.dismiss(question.id, reason.replace("approvals", "questions"), by="forge")
        except Exception:
            log.debug("forge: question already answered", exc_info=True)


def answer_from_view(forge: Any, content: dict[str, Any], by: str) -> str | None:
    """Act on a view's ``approve`` or ``answer`` message; None, or the notice saying why not."""
    kind = content.get("type")
    what = "approval" if kind == "approve" else "answer"
    if forge is None:
        return f"That {what} could not be sent: the run has ended."
    request_id = content.get("request_id")
    if not isinstance(request_id, str) or not 0 < len(request_id) <= 100:  # never echoed whole
        return f"That {what} could not be sent: it names no pending request."
    try:
        if kind == "approve":
            answer, reason = content.get("answer"), content.get("reason") or None
            if answer not in ("once", "session", "deny"):
                return "That approval could not be sent: the answer is once, session or deny."
            if reason is not None and (not isinstance(reason, str) or len(reason) > 2000):
                return "That approval could not be sent: the reason is text under 2,000 characters."
            forge.approve(request_id, answer, reason, by=by)
        else:
            text = content.get("text")
            if not isinstance(text, str):
                return "That answer could not be sent: type an answer or pick an option."
            forge.answer(request_id, text, by=by)
    except Exception as exc:  # already answered, the run ended, an empty or huge answer
        return f"That {what} could not be sent: {exc}"
    return None
