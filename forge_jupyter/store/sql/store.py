"""The methods every SQL backend shares (DuckDB, PostgreSQL): each opens one transaction
(``_tx``) and runs in it what ``sql/reads`` and ``sql/writes`` say — the queries are
written once, in the dialect both engines read (``postgres/connection`` translates the placeholders).
A backend supplies ``_tx`` and, where its engine does better, overrides a method (PostgreSQL
takes the runner lease with one compare-and-swap UPDATE on the database's clock).

Every query filters on ``tenant_id`` — except the probes for an id that is about to be
written, which must see every tenant's rows: ids are global, and a collision with another
tenant's row has to be refused (``DuplicateId``), never resolved by overwriting it.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

from ...errors import DuplicateId, MessageRunning, NotFound, SessionDeleted
from ...message import TERMINAL_STATUSES, Event, Message, Part, SessionInfo
from ..base import PAGE_SIZE, Page, Store, decode_cursor, encode_cursor
from ..ops import Op, PutEvent, batch_ids
from ..rows import json_text, timestamp
from . import reads, writes


class SQLStore(Store):
    """The contract over the SQL schema of ``schema.py``; subclasses open the transactions."""

    @abstractmethod
    def _tx(self) -> AbstractContextManager[Any]:
        """One transaction (nested calls join the outer one), yielding a connection whose
        ``execute(sql, params)`` takes ``?`` placeholders."""

    def memory_index(self) -> AbstractContextManager[Any]:
        """A transaction on the memory index's tables: the store's own (store/sql/memory_index.py)."""
        return self._tx()

    def _lock_sessions(self, con: Any, session_ids: set[str]) -> None:  # noqa: B027
        """Serialize the writers of these sessions until the transaction ends (a no-op where
        the transaction already holds the whole database, as DuckDB's does)."""

    # -- sessions -------------------------------------------------------------------------

    def create_session(self, info: SessionInfo) -> SessionInfo:
        with self._tx() as con:
            writes.insert_session(con, self.tenant_id, info)
            return info

    def create_session_with(self, info: SessionInfo, ops: Sequence[Op]) -> SessionInfo:
        with self._tx() as con:
            writes.insert_session(con, self.tenant_id, info)
            if ops:
                self._lock_sessions(con, batch_ids(ops).sessions)
                writes.write_batch(con, self.tenant_id, list(ops), time.time())
            return info

    def get_session(self, session_id: str) -> SessionInfo:
        with self._tx() as con:
            return reads.get_session(con, self.tenant_id, session_id)

    def find_session(self, name_or_id: str) -> SessionInfo:
        with self._tx() as con:
            try:
                return reads.get_session(con, self.tenant_id, name_or_id)
            except SessionDeleted:
                raise
            except NotFound:
                pass
            session_id = writes.session_by_name(con, self.tenant_id, name_or_id)
            if session_id is None:
                raise NotFound(f"no session named or numbered {name_or_id!r}")
            return reads.get_session(con, self.tenant_id, session_id)

    def list_sessions(self, *, cursor: str | None = None, limit: int = PAGE_SIZE) -> Page[SessionInfo]:
        with self._tx() as con:
            rows = reads.list_sessions(con, self.tenant_id, cursor or "", limit + 1)
        items = rows[:limit]
        return Page(items, items[-1].id if len(rows) > limit else None)

    def update_session(self, info: SessionInfo) -> SessionInfo:
        with self._tx() as con:
            reads.session_flags(con, self.tenant_id, info.id)
            if info.name is not None:
                holder = writes.session_by_name(con, self.tenant_id, info.name)
                if holder is not None and holder != info.id:
                    raise DuplicateId(f"a session named {info.name!r} already exists")
            con.execute(
                "UPDATE session SET name = ?, title = ?, agent = ?, model = ?, directory = ?, "
                "metadata = ?, updated_at = ? WHERE tenant_id = ? AND id = ?",
                [info.name, info.title, info.agent, info.model, info.directory,
                 json_text(info.metadata), timestamp(time.time()), self.tenant_id, info.id],
            )
            return reads.get_session(con, self.tenant_id, info.id)

    def delete_session(self, session_id: str) -> None:
        with self._tx() as con:
            self._lock_sessions(con, {session_id})
            reads.session_flags(con, self.tenant_id, session_id)
            writes.delete_session_rows(con, self.tenant_id, session_id, time.time())

    def fork(self, session_id: str, at_message_id: str, new: SessionInfo) -> SessionInfo:
        t = self.tenant_id
        with self._tx() as con:
            reads.session_flags(con, t, session_id)
            pos = reads.position(con, t, session_id, at_message_id)
            if reads.message_status(con, t, at_message_id) not in TERMINAL_STATUSES:
                raise MessageRunning(
                    f"message {at_message_id} is still running; fork from a finished message"
                )
            forked = new.model_copy(
                update={"forked_from_session": session_id, "forked_from_message": at_message_id}
            )
            writes.insert_session(con, t, forked)
            writes.copy_timeline(con, t, session_id, forked.id, pos, at_message_id)
            writes.write_batch(con, t, [PutEvent(Event(
                session_id=forked.id, type="fork",
                data={"from_session": session_id, "from_message": at_message_id, "position": pos},
            ))], time.time())
            return forked

    # -- writes ---------------------------------------------------------------------------

    def write(self, ops: Sequence[Op], *, lease_owners: Mapping[str, str] | None = None) -> None:
        ops = list(ops)
        if not ops:
            return
        with self._tx() as con:
            # The lease is read under the session's row lock (PostgreSQL) or inside the
            # transaction that holds the file (DuckDB): a takeover waits for this commit, or
            # this batch sees the new owner — a true fence either way.
            self._lock_sessions(con, batch_ids(ops).sessions | set(lease_owners or ()))
            writes.write_batch(con, self.tenant_id, ops, time.time(), lease_owners)

    # -- reads ----------------------------------------------------------------------------

    def get_message(self, message_id: str, *, with_parts: bool = True) -> Message:
        with self._tx() as con:
            return reads.get_message(con, self.tenant_id, message_id, parts=with_parts)

    def get_part(self, part_id: str) -> Part:
        with self._tx() as con:
            return reads.get_part(con, self.tenant_id, part_id)

    def timeline(
        self,
        session_id: str,
        *,
        cursor: str | None = None,
        limit: int = PAGE_SIZE,
        with_parts: bool = True,
    ) -> Page[Message]:
        start = decode_cursor(cursor)
        with self._tx() as con:
            length = reads.session_flags(con, self.tenant_id, session_id).timeline_length
            items = reads.timeline_slice(con, self.tenant_id, session_id, start, start + limit,
                                         parts=with_parts)
        nxt = start + len(items)
        return Page(items, encode_cursor(nxt) if nxt < length else None)

    def timeline_length(self, session_id: str) -> int:
        with self._tx() as con:
            return reads.session_flags(con, self.tenant_id, session_id).timeline_length

    def position(self, session_id: str, message_id: str) -> int:
        with self._tx() as con:
            reads.session_flags(con, self.tenant_id, session_id)
            return reads.position(con, self.tenant_id, session_id, message_id)

    def unfinished_messages(self, session_id: str) -> list[Message]:
        with self._tx() as con:
            reads.session_flags(con, self.tenant_id, session_id)
            return reads.unfinished_messages(con, self.tenant_id, session_id)

    def events(
        self,
        session_id: str | None = None,
        *,
        type: str | None = None,
        cursor: str | None = None,
        limit: int = PAGE_SIZE,
    ) -> Page[Event]:
        with self._tx() as con:
            rows = reads.events(con, self.tenant_id, session_id, type, cursor or "", limit + 1)
        items = rows[:limit]
        return Page(items, items[-1].id if len(rows) > limit else None)

    # -- runner lease ---------------------------------------------------------------------

    def acquire_lease(
        self, session_id: str, owner: str, ttl: float, *, replacing: str | None = None
    ) -> bool:
        with self._tx() as con:
            flags = reads.session_flags(con, self.tenant_id, session_id)
            now = time.time()
            held_by_other = flags.lease_owner not in (None, owner, replacing)
            if held_by_other and flags.lease_expires is not None and flags.lease_expires > now:
                return False
            con.execute(
                "UPDATE session SET lease_owner = ?, lease_expires = ? "
                "WHERE tenant_id = ? AND id = ?",
                [owner, timestamp(now + ttl), self.tenant_id, session_id],
            )
            return True

    def release_lease(self, session_id: str, owner: str) -> None:
        with self._tx() as con:
            reads.session_flags(con, self.tenant_id, session_id, allow_deleted=True)
            con.execute(
                "UPDATE session SET lease_owner = NULL, lease_expires = NULL "
                "WHERE tenant_id = ? AND id = ? AND lease_owner = ?",
                [self.tenant_id, session_id, owner],
            )

    def lease(self, session_id: str) -> tuple[str, float] | None:
        with self._tx() as con:
            flags = reads.session_flags(con, self.tenant_id, session_id)
        if flags.lease_owner is None or flags.lease_expires is None:
            return None
        if flags.lease_expires <= time.time():
            return None
        return flags.lease_owner, flags.lease_expires
