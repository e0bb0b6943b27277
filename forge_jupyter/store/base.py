"""The store contract: one interface, one set of invariants, every backend (DESIGN §3).

Backends (memory, DuckDB, later PostgreSQL) implement a few primitives; the invariants live
here once, in ``Store.write``, so that every backend enforces exactly the same rules:

1. A finished message and its parts are immutable; a second terminal transition loses.
2. Nothing is appended after (nor forked from) a message that is still running.
3. Every read and write is scoped to the store's tenant.
4. Writes to a deleted or missing session/message are rejected.
5. Duplicate ids conflict; they never overwrite another session's or tenant's row.
6. Nothing destroys a body except deleting its session (and not while a fork points at it).

Writes arrive as batches of operations (``write(ops)``) — one transaction each, all or
nothing — because the projection commits in groups (one per model step, not one per part).
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ..errors import DuplicateId, Immutable, MessageRunning, NotFound, SessionDeleted
from ..model import Event, Message, Part, SessionInfo

if TYPE_CHECKING:
    from pathlib import Path

    import duckdb
    import pandas as pd

T = TypeVar("T")
DEFAULT_TENANT = "default"
PAGE_SIZE = 100


# ------------------------------------------------------------------------- write operations


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
class Page(Generic[T]):
    """One page of a read; ``next_cursor`` is None once the end has been reached."""

    items: list[T]
    next_cursor: str | None


# --------------------------------------------------------- what a backend reports before a write


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


def plan_write(tenant_id: str, ops: Sequence[Op], state: WriteState) -> WritePlan:
    """Validate ``ops`` against ``state`` (and against each other, in order).

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


def batch_ids(ops: Sequence[Op]) -> tuple[set[str], set[str], set[str], set[str]]:
    """(message ids, part ids, session ids, event ids) a batch touches."""
    message_ids: set[str] = set()
    part_ids: set[str] = set()
    session_ids: set[str] = set()
    event_ids: set[str] = set()
    for op in ops:
        if isinstance(op, PutMessage):
            message_ids.add(op.message.id)
            session_ids.add(op.message.session_id)
        elif isinstance(op, PutPart):
            part_ids.add(op.part.id)
            message_ids.add(op.part.message_id)
            session_ids.add(op.part.session_id)
        elif isinstance(op, AppendMessage):
            message_ids.add(op.message_id)
            session_ids.add(op.session_id)
        elif isinstance(op, PutEvent):
            event_ids.add(op.event.id)
            if op.event.session_id:
                session_ids.add(op.event.session_id)
    return message_ids, part_ids, session_ids, event_ids


def encode_cursor(pos: int) -> str:
    return str(pos)


def decode_cursor(cursor: str | None) -> int:
    """The first position a page starts at; a cursor is the next position to read."""
    if cursor is None:
        return 0
    try:
        return int(cursor)
    except ValueError:
        raise ValueError(f"not a cursor from this store: {cursor!r}") from None


# ------------------------------------------------------------------------------- the contract


class Store(ABC):
    """Sessions, messages, parts, the timeline, events and runner leases, for one tenant."""

    tenant_id: str

    # -- sessions -------------------------------------------------------------------------

    @abstractmethod
    def create_session(self, info: SessionInfo) -> SessionInfo:
        """Insert a session; DuplicateId if its id (any tenant) or name (this tenant) is taken."""

    @abstractmethod
    def create_session_with(self, info: SessionInfo, ops: Sequence[Op]) -> SessionInfo:
        """Insert a session and write a batch into it, in one transaction (an import)."""

    @abstractmethod
    def get_session(self, session_id: str) -> SessionInfo:
        """NotFound if missing or of another tenant; SessionDeleted if deleted."""

    @abstractmethod
    def find_session(self, name_or_id: str) -> SessionInfo:
        """A live session by id or by name."""

    @abstractmethod
    def list_sessions(self, *, cursor: str | None = None, limit: int = PAGE_SIZE) -> Page[SessionInfo]:
        """Live sessions, oldest first."""

    @abstractmethod
    def update_session(self, info: SessionInfo) -> SessionInfo:
        """Rewrite name, title, agent, model, directory, metadata; bumps ``updated_at``."""

    @abstractmethod
    def delete_session(self, session_id: str) -> None:
        """Remove the session and the bodies no fork still points at; keep a tombstone."""

    @abstractmethod
    def fork(self, session_id: str, at_message_id: str, new: SessionInfo) -> SessionInfo:
        """Create ``new`` whose timeline is a copy of the pointers up to ``at_message_id``."""

    # -- writes ---------------------------------------------------------------------------

    @abstractmethod
    def write(self, ops: Sequence[Op]) -> None:
        """Apply a batch in one transaction, all or nothing (see ``plan_write``)."""

    def put_message(self, message: Message) -> None:
        self.write([PutMessage(message), *(PutPart(p) for p in message.parts)])

    def put_part(self, part: Part) -> None:
        self.write([PutPart(part)])

    def append_message(self, session_id: str, message_id: str) -> None:
        self.write([AppendMessage(session_id, message_id)])

    def put_event(self, event: Event) -> None:
        self.write([PutEvent(event)])

    # -- reads ----------------------------------------------------------------------------

    @abstractmethod
    def get_message(self, message_id: str, *, with_parts: bool = True) -> Message:
        """A message of this tenant (NotFound otherwise)."""

    @abstractmethod
    def get_part(self, part_id: str) -> Part:
        """A part of this tenant (NotFound otherwise)."""

    def list_parts(self, message_id: str) -> list[Part]:
        """A message's parts in id order."""
        return self.get_message(message_id).parts

    @abstractmethod
    def timeline(
        self,
        session_id: str,
        *,
        cursor: str | None = None,
        limit: int = PAGE_SIZE,
        with_parts: bool = True,
    ) -> Page[Message]:
        """One page of the session's messages in timeline order, from ``cursor`` on."""

    @abstractmethod
    def timeline_length(self, session_id: str) -> int:
        """How many pointers the session's timeline holds."""

    @abstractmethod
    def position(self, session_id: str, message_id: str) -> int:
        """Where a message stands in the session's timeline (NotFound if it is not in it)."""

    @abstractmethod
    def unfinished_messages(self, session_id: str) -> list[Message]:
        """Messages in the timeline that are not terminal, with their parts (for recovery)."""

    @abstractmethod
    def events(
        self,
        session_id: str | None = None,
        *,
        type: str | None = None,
        cursor: str | None = None,
        limit: int = PAGE_SIZE,
    ) -> Page[Event]:
        """Events, oldest first, optionally of one session and one type."""

    # -- SQL over the documented views (store/views.py) -----------------------------------

    def reading(self) -> contextlib.AbstractContextManager[duckdb.DuckDBPyConnection]:
        """A DuckDB connection holding the schema's tables and views (every tenant's rows,
        or only this one's), for read-only SQL; scope queries with ``views.select``."""
        raise NotImplementedError(f"{type(self).__name__} offers no SQL over its rows")

    def sql(self, query: str, params: Sequence[Any] | dict[str, Any] | None = None) -> pd.DataFrame:
        """Run one read-only SELECT (or WITH … SELECT) over this tenant's rows.

        Each table name (session, message, part, session_message, event) and view name
        (views.VIEW_NAMES) stands for this tenant's rows only: the query runs in a DuckDB of
        its own holding nothing else, which cannot write (sandbox.py).
        """
        from .sandbox import tenant_sql

        return tenant_sql(self, query, params)

    # -- runner lease ---------------------------------------------------------------------

    @abstractmethod
    def acquire_lease(
        self, session_id: str, owner: str, ttl: float, *, replacing: str | None = None
    ) -> bool:
        """Take (or renew) the session's runner lease unless another owner holds a live one.

        ``replacing``: the owner of a live lease the caller has found dead (a process of this
        host that is gone, session/runner.py); that lease is taken over too. It is a
        compare-and-swap on the owner: a lease taken by anyone else meanwhile is never stolen.
        """

    @abstractmethod
    def release_lease(self, session_id: str, owner: str) -> None:
        """Give the lease up if ``owner`` holds it."""

    @abstractmethod
    def lease(self, session_id: str) -> tuple[str, float] | None:
        """(owner, expiry as epoch seconds) of a live lease, or None."""

    # -- conveniences shared by every backend --------------------------------------------

    def iter_timeline(self, session_id: str, *, page_size: int = 500) -> Iterator[Message]:
        """Every message of the session, page by page, to the end."""
        cursor: str | None = None
        while True:
            page = self.timeline(session_id, cursor=cursor, limit=page_size)
            yield from page.items
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Keep the backend's connection open across several calls (a no-op where there is none)."""
        yield

    def files(self) -> tuple[Path, ...]:
        """The files this store owns on disk (its database and sidecars, resolved): the file
        tools refuse to write them. Empty for a store that keeps nothing in files."""
        return ()

    def close(self) -> None:  # noqa: B027 - optional for backends without resources
        """Release any resources (files, connections)."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
