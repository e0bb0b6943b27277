"""Crash recovery: take over a dead runner's lease, close what it left open (DESIGN §3).

A lease held by a process of this host that is gone is taken over at once and recorded as a
``recovery.lease_taken_over`` event (runner.stale_reason decides); any other live lease
refuses. Then, in ``recover``:

Text and reasoning keep what was stored and are finalized; tool calls become errors
("interrupted"); the message is marked ``interrupted``; one ``recovery`` event says what was
closed. The whole repair is one batch, so it is applied entirely or not at all. The caller
must hold the session's runner lease (or know no runner is alive) before calling.
"""

from __future__ import annotations

import time

from ..message import Event, Message, Part, ReasoningPart, TextPart, ToolPart, now
from ..store.base import Store
from ..store.ops import Op, PutEvent, PutMessage, PutPart
from . import runner

INTERRUPTED = "interrupted: the process running this call stopped before it finished"


def close_open_parts(message: Message, *, tool_error: str, at: float) -> list[Part]:
    """The message's unfinished parts, closed: what a finished message may not keep open."""
    closed: list[Part] = []
    for part in message.parts:
        if part.is_terminal:
            continue
        if isinstance(part, TextPart | ReasoningPart):
            closed.append(part.model_copy(update={"text": part.text.rstrip(), "time_end": at}))
        elif isinstance(part, ToolPart):
            closed.append(part.model_copy().interrupt(tool_error, at=at))
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


def take_lease(store: Store, session_id: str, owner: str,
               ttl: float = runner.LEASE_TTL) -> tuple[bool, tuple[str, float] | None]:
    """Take the session's runner lease for ``owner``: (taken, the live lease that refused it).

    Call it inside ``store.hold()`` where the backend has one, so the lease read and the
    takeover see the same row (the takeover is a compare-and-swap either way).
    """
    if store.acquire_lease(session_id, owner, ttl):
        return True, None
    held = store.lease(session_id)
    why = runner.stale_reason(held[0]) if held is not None else None
    if held is not None and why is None:
        return False, held  # alive, or not ours to judge: wait for its expiry
    previous = held[0] if held is not None else None
    if not store.acquire_lease(session_id, owner, ttl, replacing=previous):
        return False, store.lease(session_id)
    if held is not None:
        store.write([PutEvent(Event(
            session_id=session_id, type="recovery.lease_taken_over", actor="forge",
            data={"previous_owner": held[0], "reason": why, "owner": owner,
                  "would_have_expired_in": round(max(0.0, held[1] - time.time()), 1)}))])
    return True, None
