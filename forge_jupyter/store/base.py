"""The store contract: one interface, one set of invariants, every backend (DESIGN §3).

Backends (memory, DuckDB, later PostgreSQL) implement the methods of ``Store``; every backend
keeps the same invariants, and the contract suite (tests/contract) runs against each:

1. A finished message and its parts are immutable; a second terminal transition loses.
2. Nothing is appended after (nor forked from) a message that is still running.
3. Every read and write is scoped to the store's tenant.
4. Writes to a deleted or missing session/message are rejected.
5. Duplicate ids conflict; they never overwrite another session's or tenant's row.
6. Nothing destroys a body except deleting its session (and not while a fork points at it).

Writes arrive as batches of operations (``write(ops)``, ops.py) — one transaction each, all
or nothing — because the projection commits in groups (one per model step, not one per part).
The write invariants are checked once for every backend, by ``plan.plan_write``.
"""

from __future__ import annotations

import contextlib
import gc
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from ..message import Event, Message, Part, SessionInfo
from .ops import AppendMessage, Op, PutEvent, PutMessage, PutPart
from .sql.dialect import Dialect

if TYPE_CHECKING:
    from pathlib import Path

    import pandas as pd

T = TypeVar("T")

DEFAULT_TENANT = "default"
PAGE_SIZE = 100


@dataclass(slots=True)
class Page(Generic[T]):
    """One page of a read; ``next_cursor`` is None once the end has been reached."""

    items: list[T]
    next_cursor: str | None


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector off while many rows become objects.

    Otherwise, as a long read's objects pile up, the collector walks all of them again and
    again (a full pass each time they grew by a quarter), though none can be part of a cycle:
    they are trees of models, dicts and lists. Measured: half the time of reading a
    50,000-message timeline. Paused only where this process builds objects, never while it
    waits for another; the collector catches up once, afterwards.
    """
    if not gc.isenabled():  # another thread's read, or the program's own choice: leave it
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


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
    # What the code above the seam asks of a backend, declared here rather than probed for
    # with isinstance or getattr: the dialect of ``reading()``; the file, if there is one (a
    # cache of its copies is keyed by it); how long a statement may run (None: no limit of the
    # backend's own); and what an error message calls it.
    dialect: ClassVar[Dialect] = "duckdb"
    path: Path | None = None
    statement_timeout: float | None = None
    where: str = "the store"

    @property
    def duckdb_sql(self) -> bool:
        """``reading()`` speaks DuckDB's SQL (the older spelling of ``dialect == "duckdb"``)."""
        return self.dialect == "duckdb"

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
    def write(self, ops: Sequence[Op], *, lease_owners: Mapping[str, str] | None = None) -> None:
        """Apply a batch in one transaction, all or nothing (see ``plan_write``).

        ``lease_owners`` ({session id: runner lease owner}) fences the batch: it goes in only
        if each owner still holds its session's lease, checked in the same transaction as the
        writes (on PostgreSQL under the session row's lock, so a takeover on another host
        either waits for this commit or is seen by it); otherwise ``LeaseLost`` (naming the
        sessions lost) and nothing is written. A lease that expired is still its owner's
        until another runner takes it."""

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

    # -- SQL over the documented views (store/sql/views.py) -----------------------------------

    def reading(self) -> contextlib.AbstractContextManager[Any]:
        """A read-only connection holding the schema's tables and views (every tenant's rows,
        or only this one's): a DuckDB one where ``dialect`` is "duckdb" (DuckDB, memory; scope
        queries with ``query.select``), else the backend's own (PostgreSQL: its views, scoped
        by row-level security; postgres/select.py)."""
        raise NotImplementedError(f"{type(self).__name__} offers no SQL over its rows")

    def sql(self, query: str, params: Sequence[Any] | dict[str, Any] | None = None) -> pd.DataFrame:
        """Run one read-only SELECT (or WITH … SELECT) over this tenant's rows.

        Each table name (session, message, part, session_message, event) and view name
        (views.VIEW_NAMES) stands for this tenant's rows only: the query runs in a DuckDB of
        its own holding nothing else, which cannot write (sandbox.py).
        """
        from .query.sandbox import tenant_sql

        return tenant_sql(self, query, params)

    # -- the long-term memory index (store/sql/memory_index.py holds its SQL) ------------------

    def memory_index(self) -> contextlib.AbstractContextManager[Any]:
        """One transaction on the memory index's tables (schema step 5), yielding a connection
        whose ``execute(sql, params)`` takes ``?`` and ``$name`` placeholders."""
        raise NotImplementedError(f"{type(self).__name__} keeps no long-term memory index")

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

    def iter_events(self, session_id: str | None = None, *, type: str | None = None,
                    page_size: int = 500) -> Iterator[Event]:
        """Every event (of the session, of the type), page by page, oldest first."""
        cursor: str | None = None
        while True:
            page = self.events(session_id, type=type, cursor=cursor, limit=page_size)
            yield from page.items
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def read_timeline(self, session_id: str) -> list[Message]:
        """Every message of the session with its parts, oldest first, read at once: one page
        as long as the timeline (a backend reads each table once for it, not once per page),
        with the store held and the cycle collector paused."""
        with self.hold(), collector_paused():
            length = self.timeline_length(session_id)
            return list(self.iter_timeline(session_id, page_size=max(length, 1)))

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
