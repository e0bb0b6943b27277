"""What becomes of a batch the store refused (projection.py): the rows it could not take,
reported as ``Rejected``; the messages they belonged to, marked; and the order that lets a
failed batch be cut into several transactions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..message import ErrorInfo, Message
from .ops import Op, PutMessage, PutPart

# A buffered row's slot: its kind (message | part | append | event, as ``Rejected.kind``) and
# its id — a newer full row of the same id replaces the buffered one; an append's id is the
# pointer (session, message).
Key = tuple[str, ...]
REASON_MAX = 400  # characters of an error kept in a report


@dataclass(frozen=True, slots=True)
class Rejected:
    """A row the store refused: what it was, where it belonged, and why."""

    kind: str  # message | part | append | event
    id: str
    session_id: str | None
    message_id: str | None
    reason: str

    def describe(self) -> str:
        return f"{self.kind} {self.id} was not stored: {self.reason}"



def safe(text: str | None, limit: int = REASON_MAX) -> str:
    """Text any store accepts: valid UTF-8 (lone surrogates escaped), bounded."""
    text = (text or "").encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= limit else text[:limit] + " …"


def reason(exc: BaseException) -> str:
    return safe(f"{type(exc).__name__}: {exc}")


def marked(m: Message, notes: list[str]) -> Message:
    update: dict[str, Any] = {"metadata": {**m.metadata, "not_stored": list(notes)}}
    if m.is_terminal and m.error is None:
        update["error"] = ErrorInfo(
            type="not_stored",
            message=safe("; ".join(notes), 2000) + ". The rest of the message was saved.")
        if m.role == "assistant" and m.status == "completed":
            update["status"] = "error"
    return m.model_copy(update=update)


def splittable(entries: list[tuple[Key, Op]]) -> list[tuple[Key, Op]]:
    """The batch in an order that stays valid when cut into several transactions.

    In one transaction a message may finish before its last parts land (rows are coalesced
    by id); in separate ones a finished message refuses new parts. So a finished message that
    parts of this batch follow is written as still running at its place, and finished right
    after its last part.
    """
    last_part: dict[str, int] = {}
    for i, (_key, op) in enumerate(entries):
        if isinstance(op, PutPart):
            last_part[op.part.message_id] = i
    finish_after: dict[int, list[tuple[Key, Op]]] = {}
    out: list[tuple[Key, Op]] = []
    for i, (key, op) in enumerate(entries):
        if (isinstance(op, PutMessage) and op.message.is_terminal
                and last_part.get(op.message.id, -1) > i):
            running = op.message.model_copy(update={
                "status": "running", "finish": None, "error": None, "completed_at": None})
            out.append((key, PutMessage(running)))
            finish_after.setdefault(last_part[op.message.id], []).append((key, op))
        else:
            out.append((key, op))
        out.extend(finish_after.pop(i, ()))
    return out
