"""Crash recovery: close what a dead runner left open (DESIGN §3).

Text and reasoning keep what was stored and are finalized; tool calls become errors
("interrupted"); the message is marked ``interrupted``; one ``recovery`` event says what was
closed. The whole repair is one batch, so it is applied entirely or not at all. The caller
must hold the session's runner lease (or know no runner is alive) before calling.
"""

from __future__ import annotations

from ..model import Event, Message, ReasoningPart, TextPart, ToolPart, now
from ..store.base import Op, PutEvent, PutMessage, PutPart, Store

INTERRUPTED = "interrupted: the process running this call stopped before it finished"


def close_open_parts(message: Message, *, tool_error: str, at: float) -> list:
    """The message's unfinished parts, closed: what a finished message may not keep open."""
    closed = []
    for part in message.parts:
        if part.is_terminal:
            continue
        if isinstance(part, TextPart | ReasoningPart):
            closed.append(part.model_copy(update={"text": part.text.rstrip(), "time_end": at}))
        elif isinstance(part, ToolPart):
            closed.append(
                part.model_copy(update={"state": "error", "error": tool_error, "time_end": at})
            )
    return closed


def recover(store: Store, session_id: str, *, actor: str = "forge") -> list[Message]:
    """Close every unfinished message of the session; returns the messages as closed."""
    unfinished = store.unfinished_messages(session_id)
    if not unfinished:
        return []
    at = now()
    ops: list[Op] = []
    closed_messages: list[Message] = []
    report = []
    for message in unfinished:
        parts = close_open_parts(message, tool_error=INTERRUPTED, at=at)
        ops.extend(PutPart(p) for p in parts)
        done = message.model_copy(update={"status": "interrupted", "completed_at": at, "parts": []})
        ops.append(PutMessage(done))
        by_id = {p.id: p for p in parts}
        closed_messages.append(
            done.model_copy(update={"parts": [by_id.get(p.id, p) for p in message.parts]})
        )
        report.append({"message_id": message.id, "closed_parts": [p.id for p in parts]})
    ops.append(
        PutEvent(Event(session_id=session_id, type="recovery", actor=actor, data={"closed": report}))
    )
    store.write(ops)
    return closed_messages
