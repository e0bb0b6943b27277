"""The operations a store write is made of (``Store.write(ops)``: one batch, one transaction).

Every writer speaks these: the projection buffers them and commits them in groups (one batch
per model step, not per part), an import hands a whole session's worth over at once, and
recovery closes what a dead runner left open with them. ``plan.py`` checks a batch against
the store's invariants before any backend applies it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..message import Event, Message, Part


@dataclass(frozen=True, slots=True)
class PutMessage:
    message: Message  # the row; parts are written with PutPart


@dataclass(frozen=True, slots=True)
class PutPart:
    part: Part


@dataclass(frozen=True, slots=True)
class AppendMessage:
    """Append a pointer to the session's timeline (``session_message``)."""

    session_id: str
    message_id: str


@dataclass(frozen=True, slots=True)
class PutEvent:
    event: Event


Op = PutMessage | PutPart | AppendMessage | PutEvent


@dataclass(slots=True)
class BatchIds:
    """The ids a batch touches, by kind: what a backend loads before validating it."""

    messages: set[str]
    parts: set[str]
    sessions: set[str]
    events: set[str]


def batch_ids(ops: Sequence[Op]) -> BatchIds:
    """Every message, part, session and event id ``ops`` names."""
    ids = BatchIds(set(), set(), set(), set())
    for op in ops:
        if isinstance(op, PutMessage):
            ids.messages.add(op.message.id)
            ids.sessions.add(op.message.session_id)
        elif isinstance(op, PutPart):
            ids.parts.add(op.part.id)
            ids.messages.add(op.part.message_id)
            ids.sessions.add(op.part.session_id)
        elif isinstance(op, AppendMessage):
            ids.messages.add(op.message_id)
            ids.sessions.add(op.session_id)
        elif isinstance(op, PutEvent):
            ids.events.add(op.event.id)
            if op.event.session_id:
                ids.sessions.add(op.event.session_id)
    return ids
