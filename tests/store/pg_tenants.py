"""Shared by the PostgreSQL tenancy tests (their database: the ``pg`` fixture, conftest.py)."""

from __future__ import annotations

from forge_jupyter.message import Message, SessionInfo, TextPart, now
from forge_jupyter.store.ops import AppendMessage, PutMessage, PutPart
from forge_jupyter.store.postgres.store import PostgresStore


def turn(store: PostgresStore, session: SessionInfo, body: str) -> Message:
    message = Message(session_id=session.id, role="user", status="completed", completed_at=now())
    part = TextPart(session_id=session.id, message_id=message.id, text=body, time_end=now())
    store.write([PutMessage(message), PutPart(part), AppendMessage(session.id, message.id)])
    return message.model_copy(update={"parts": [part]})
