"""The store's invariants, checked once for every backend (DESIGN §3): ``plan_write``.

A backend loads the existing rows a batch touches (``WriteState``, one round trip) and asks
``plan_write`` whether the batch may go in; what comes back (``WritePlan``) is what it then
applies, in one transaction. So memory, DuckDB and any later backend refuse exactly the same
writes:

1. A finished message and its parts are immutable; a second terminal transition loses.
2. Nothing is appended after a message that is still running.
3. Every write is scoped to the store's tenant.
4. Writes to a deleted or missing session/message are rejected.
5. Duplicate ids conflict; they never overwrite another session's or tenant's row.

and, for a batch fenced by runner leases (``lease_owners``), that each owner still holds its
session's lease — read in the batch's own transaction, so a runner that lost its session to
another writes nothing (``LeaseLost``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import DuplicateId, Immutable, LeaseLost, MessageRunning, NotFound, SessionDeleted
from ..message import Event, Message, Part
from .ops import AppendMessage, Op, PutEvent, PutMessage, PutPart


@dataclass(slots=True)
class MessageState:
    tenant_id: str
    session_id: str
    role: str
    status: str
    terminal: bool


@dataclass(slots=True)
class PartState:
    tenant_id: str
    session_id: str
    message_id: str
    terminal: bool


@dataclass(slots=True)
class SessionState:
    deleted: bool
    last_message_id: str | None = None
    last_pos: int = -1
    lease_owner: str | None = None  # who holds the runner lease (live or expired), if anyone


@dataclass(slots=True)
class WriteState:
    """Existing rows touched by a batch, loaded in one round trip before it is validated.

    ``messages`` holds every message the batch names AND the last message of each touched
    session's timeline (an append is checked against it); ``plan_write`` refuses to guess.
    """

    messages: dict[str, MessageState] = field(default_factory=dict)  # any tenant
    parts: dict[str, PartState] = field(default_factory=dict)  # any tenant
    sessions: dict[str, SessionState] = field(default_factory=dict)  # this tenant only
    event_ids: set[str] = field(default_factory=set)  # any tenant


@dataclass(slots=True)
class WritePlan:
    """A validated batch: the rows to upsert, pointers to append, events to insert."""

    messages: dict[str, Message] = field(default_factory=dict)
    parts: dict[str, Part] = field(default_factory=dict)
    timeline: list[tuple[str, int, str]] = field(default_factory=list)  # session, pos, message
    events: list[Event] = field(default_factory=list)
    touched_sessions: set[str] = field(default_factory=set)


def plan_write(tenant_id: str, ops: Sequence[Op], state: WriteState,
               lease_owners: Mapping[str, str] | None = None) -> WritePlan:
    """Validate ``ops`` against ``state`` (and against each other, in order).

    ``lease_owners`` ({session id: owner}, each session loaded in ``state``): the batch goes
    in only if every owner still holds its session's lease, else ``LeaseLost`` names every
    session lost. Holding is being the lease's owner: a lease that expired stays its owner's
    until another runner takes it (a late heartbeat is not a loss), and a takeover or a
    release changes the owner at once.

    A part write compares with what was committed before the batch: a message created and
    finished inside one batch may still receive its parts in that batch. Everything else
    compares with the batch so far, so that a batch means what its ops would mean one by
    one: a second terminal transition of a message (or part) loses even inside one batch,
    and an id cannot name two sessions or messages in one batch.
    """
    plan = WritePlan()
    sessions = state.sessions
    live_messages: dict[str, MessageState] = dict(state.messages)
    live_parts: dict[str, PartState] = dict(state.parts)

    def session_ok(session_id: str) -> SessionState:
        s = sessions.get(session_id)
        if s is None:
            raise NotFound(f"session {session_id} does not exist for tenant {tenant_id!r}")
        if s.deleted:
            raise SessionDeleted(f"session {session_id} was deleted; it accepts no more writes")
        return s

    if lease_owners:
        held = {sid: session_ok(sid).lease_owner for sid in lease_owners}
        lost = {sid: (owner, held[sid]) for sid, owner in sorted(lease_owners.items())
                if held[sid] != owner}
        if lost:
            raise LeaseLost("; ".join(
                f"session {sid}'s runner lease is held by {holder}, not by {owner}"
                if holder is not None else
                f"session {sid}'s runner lease is no longer held by {owner} (given back, or "
                "taken over and given back since)"
                for sid, (owner, holder) in lost.items()
            ) + ": the runner lost the session, so nothing of this batch was written.",
                tuple(lost), {sid: holder for sid, (_owner, holder) in lost.items()})

    for op in ops:
        if isinstance(op, PutMessage):
            m = op.message
            session_ok(m.session_id)
            old = live_messages.get(m.id)
            if old is not None:
                if old.tenant_id != tenant_id or old.session_id != m.session_id:
                    raise DuplicateId(
                        f"message id {m.id} already belongs to another session or tenant"
                    )
                if old.role != m.role:
                    raise DuplicateId(f"message {m.id} exists with role {old.role}, not {m.role}")
                if old.terminal:
                    raise Immutable(
                        f"message {m.id} already finished ({old.status}); a finished message "
                        "never changes — the first terminal transition wins"
                    )
            live_messages[m.id] = MessageState(
                tenant_id, m.session_id, m.role, m.status, m.is_terminal
            )
            plan.messages[m.id] = m.row() if m.parts else m
            plan.touched_sessions.add(m.session_id)
        elif isinstance(op, PutPart):
            p = op.part
            session_ok(p.session_id)
            msg = live_messages.get(p.message_id)
            if msg is None or msg.tenant_id != tenant_id:
                raise NotFound(f"part {p.id} names message {p.message_id}, which does not exist")
            if msg.session_id != p.session_id:
                raise DuplicateId(
                    f"part {p.id} says session {p.session_id} but its message "
                    f"{p.message_id} belongs to {msg.session_id}"
                )
            committed = state.messages.get(p.message_id)
            if committed is not None and committed.terminal:
                raise Immutable(
                    f"message {p.message_id} already finished ({committed.status}); "
                    f"its parts never change (part {p.id})"
                )
            old_part = live_parts.get(p.id)
            if old_part is not None:
                if (old_part.tenant_id, old_part.message_id) != (tenant_id, p.message_id):
                    raise DuplicateId(f"part id {p.id} already belongs to another message or tenant")
                if old_part.terminal:
                    raise Immutable(f"part {p.id} already finished; finished parts never change")
            live_parts[p.id] = PartState(tenant_id, p.session_id, p.message_id, p.is_terminal)
            plan.parts[p.id] = p
            plan.touched_sessions.add(p.session_id)
        elif isinstance(op, AppendMessage):
            s = session_ok(op.session_id)
            msg = live_messages.get(op.message_id)
            if msg is None or msg.tenant_id != tenant_id:
                raise NotFound(f"message {op.message_id} does not exist; it cannot be appended")
            if msg.session_id != op.session_id:
                raise DuplicateId(
                    f"message {op.message_id} belongs to session {msg.session_id}, "
                    f"not {op.session_id}; use fork to share messages between sessions"
                )
            if s.last_message_id is not None:
                last = live_messages.get(s.last_message_id)
                if last is None:  # a backend bug, not a user error
                    raise RuntimeError(
                        f"the store did not load message {s.last_message_id}, the last of "
                        f"session {op.session_id}'s timeline (see WriteState)"
                    )
                if not last.terminal:
                    raise MessageRunning(
                        f"session {op.session_id}: message {s.last_message_id} is still "
                        "running; nothing can be appended after it until it finishes"
                    )
            s.last_pos += 1
            s.last_message_id = op.message_id
            plan.timeline.append((op.session_id, s.last_pos, op.message_id))
            plan.touched_sessions.add(op.session_id)
        elif isinstance(op, PutEvent):
            e = op.event
            if e.session_id is not None:
                if e.session_id not in sessions:
                    raise NotFound(f"event {e.id} names session {e.session_id}, which does not exist")
            if e.id in state.event_ids or any(x.id == e.id for x in plan.events):
                raise DuplicateId(f"event id {e.id} already exists")
            plan.events.append(e)
        else:  # pragma: no cover - a programming error
            raise TypeError(f"unknown store operation {op!r}")
    return plan


