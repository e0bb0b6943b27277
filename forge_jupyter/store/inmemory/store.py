"""The in-memory backend: the contract's reference implementation, for tests and scratch work.

Several ``MemoryStore`` objects (one per tenant) may share one ``MemoryDatabase``, the way
several tenants share one DuckDB file or one PostgreSQL database.
"""

from __future__ import annotations

import bisect
import contextlib
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import DuplicateId, MessageRunning, NotFound, SessionDeleted
from ...message import Event, Message, Part, SessionInfo
from ..base import (
    DEFAULT_TENANT,
    PAGE_SIZE,
    Page,
    Store,
    collector_paused,
    decode_cursor,
    encode_cursor,
)
from ..ops import Op, PutEvent, batch_ids
from ..plan import MessageState, PartState, SessionState, WriteState, plan_write
from ..rows_to_models import with_parts


@dataclass
class _SessionRow:
    tenant_id: str
    info: SessionInfo
    deleted_at: float | None = None
    lease_owner: str | None = None
    lease_expires: float = 0.0


class MemoryDatabase:
    """The shared tables; every access holds ``lock``."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.sessions: dict[str, _SessionRow] = {}
        self.messages: dict[str, tuple[str, Message]] = {}
        self.parts: dict[str, tuple[str, Part]] = {}
        self.parts_by_message: dict[str, list[str]] = {}
        self.timeline: dict[str, list[str]] = {}
        self.events: list[tuple[str, Event]] = []
        self.event_ids: set[str] = set()
        self.memory_index: Any = None  # an in-memory DuckDB with the memory index's tables


class MemoryStore(Store):
    def __init__(self, db: MemoryDatabase | None = None, *, tenant_id: str = DEFAULT_TENANT):
        self.db = db or MemoryDatabase()
        self.tenant_id = tenant_id

    def __repr__(self) -> str:
        return f"MemoryStore(tenant_id={self.tenant_id!r})"

    # -- helpers ---------------------------------------------------------------------------

    def _session_row(self, session_id: str, *, allow_deleted: bool = False) -> _SessionRow:
        row = self.db.sessions.get(session_id)
        if row is None or row.tenant_id != self.tenant_id:
            raise NotFound(f"no session {session_id!r} for tenant {self.tenant_id!r}")
        if row.deleted_at is not None and not allow_deleted:
            raise SessionDeleted(f"session {session_id} was deleted")
        return row

    def _with_parts(self, message: Message) -> Message:
        ids = self.db.parts_by_message.get(message.id, [])
        return with_parts(message, [self.db.parts[i][1] for i in ids])

    # -- sessions --------------------------------------------------------------------------

    def create_session(self, info: SessionInfo) -> SessionInfo:
        with self.db.lock:
            if info.id in self.db.sessions:
                raise DuplicateId(f"session id {info.id} already exists")
            if info.name is not None and self._by_name(info.name) is not None:
                raise DuplicateId(f"a session named {info.name!r} already exists; pick another name")
            self.db.sessions[info.id] = _SessionRow(self.tenant_id, info)
            self.db.timeline[info.id] = []
            return info

    def create_session_with(self, info: SessionInfo, ops: Sequence[Op]) -> SessionInfo:
        with self.db.lock:
            self.create_session(info)
            try:
                self.write(ops)
            except BaseException:  # write validates before it applies: only the session to undo
                del self.db.sessions[info.id]
                del self.db.timeline[info.id]
                raise
            return info

    def _by_name(self, name: str) -> _SessionRow | None:
        for row in self.db.sessions.values():
            if row.tenant_id == self.tenant_id and row.deleted_at is None and row.info.name == name:
                return row
        return None

    def get_session(self, session_id: str) -> SessionInfo:
        with self.db.lock:
            return self._session_row(session_id).info

    def find_session(self, name_or_id: str) -> SessionInfo:
        with self.db.lock:
            row = self.db.sessions.get(name_or_id)
            if row is not None and row.tenant_id == self.tenant_id:
                if row.deleted_at is not None:
                    raise SessionDeleted(f"session {name_or_id} was deleted")
                return row.info
            row = self._by_name(name_or_id)
            if row is None:
                raise NotFound(f"no session named or numbered {name_or_id!r}")
            return row.info

    def list_sessions(self, *, cursor: str | None = None, limit: int = PAGE_SIZE) -> Page[SessionInfo]:
        with self.db.lock:
            rows = sorted(
                (r.info for r in self.db.sessions.values()
                 if r.tenant_id == self.tenant_id and r.deleted_at is None),
                key=lambda i: i.id,
            )
        start = decode_cursor(cursor)
        items = rows[start : start + limit]
        nxt = start + limit
        return Page(items, encode_cursor(nxt) if nxt < len(rows) else None)

    def update_session(self, info: SessionInfo) -> SessionInfo:
        with self.db.lock:
            row = self._session_row(info.id)
            if info.name is not None and info.name != row.info.name:
                other = self._by_name(info.name)
                if other is not None and other.info.id != info.id:
                    raise DuplicateId(f"a session named {info.name!r} already exists")
            # only the documented fields change: never the id, the lineage or created_at
            row.info = row.info.model_copy(update={
                "name": info.name, "title": info.title, "agent": info.agent,
                "model": info.model, "directory": info.directory, "metadata": info.metadata,
                "updated_at": time.time(),
            })
            return row.info

    def delete_session(self, session_id: str) -> None:
        with self.db.lock:
            row = self._session_row(session_id)
            # the bodies this session wrote, and those of already deleted sessions that only
            # its timeline still kept alive; a body another timeline points at stays
            pointed = self.db.timeline.pop(session_id, [])
            candidates = {
                mid for mid, (tenant, msg) in self.db.messages.items()
                if tenant == self.tenant_id and msg.session_id == session_id
            }
            candidates.update(
                mid for mid in pointed
                if self.db.sessions[self.db.messages[mid][1].session_id].deleted_at is not None
            )
            referenced = {m for ids in self.db.timeline.values() for m in ids}
            for mid in candidates - referenced:
                del self.db.messages[mid]
                for pid in self.db.parts_by_message.pop(mid, []):
                    self.db.parts.pop(pid, None)
            row.deleted_at = time.time()
            row.lease_owner = None

    def fork(self, session_id: str, at_message_id: str, new: SessionInfo) -> SessionInfo:
        with self.db.lock:
            self._session_row(session_id)
            pointers = self.db.timeline[session_id]
            if at_message_id not in pointers:
                raise NotFound(f"message {at_message_id} is not in session {session_id}")
            msg = self.db.messages[at_message_id][1]
            if not msg.is_terminal:
                raise MessageRunning(
                    f"message {at_message_id} is still running; fork from a finished message"
                )
            forked = new.model_copy(
                update={"forked_from_session": session_id, "forked_from_message": at_message_id}
            )
            self.create_session(forked)
            position = pointers.index(at_message_id)
            self.db.timeline[forked.id] = pointers[: position + 1]
            self.write([PutEvent(Event(
                session_id=forked.id, type="fork",
                data={"from_session": session_id, "from_message": at_message_id,
                      "position": position},
            ))])
            return forked

    # -- writes ----------------------------------------------------------------------------

    def write(self, ops: Sequence[Op], *, lease_owners: Mapping[str, str] | None = None) -> None:
        with self.db.lock:
            ids = batch_ids(ops)
            ids.sessions |= set(lease_owners or ())
            message_ids = set(ids.messages)
            state = WriteState()
            for sid in ids.sessions:  # an append is checked against the timeline's last message
                pointers = self.db.timeline.get(sid)
                if pointers and self.db.sessions[sid].tenant_id == self.tenant_id:
                    message_ids.add(pointers[-1])
            for mid in message_ids:
                found = self.db.messages.get(mid)
                if found:
                    tenant, m = found
                    state.messages[mid] = MessageState(tenant, m.session_id, m.role, m.status, m.is_terminal)
            for pid in ids.parts:
                found_part = self.db.parts.get(pid)
                if found_part:
                    tenant, p = found_part
                    state.parts[pid] = PartState(tenant, p.session_id, p.message_id, p.is_terminal)
            for sid in ids.sessions:
                row = self.db.sessions.get(sid)
                if row is not None and row.tenant_id == self.tenant_id:
                    pointers = self.db.timeline.get(sid, [])
                    state.sessions[sid] = SessionState(
                        deleted=row.deleted_at is not None,
                        last_message_id=pointers[-1] if pointers else None,
                        last_pos=len(pointers) - 1,
                        lease_owner=row.lease_owner,
                    )
            state.event_ids = ids.events & self.db.event_ids
            plan = plan_write(self.tenant_id, ops, state, lease_owners)
            # validated: apply (nothing below can fail)
            for mid, m in plan.messages.items():
                self.db.messages[mid] = (self.tenant_id, m)
            for pid, p in plan.parts.items():
                if pid not in self.db.parts:
                    bisect.insort(self.db.parts_by_message.setdefault(p.message_id, []), pid)
                self.db.parts[pid] = (self.tenant_id, p)
            for sid, _pos, mid in plan.timeline:
                self.db.timeline[sid].append(mid)
            for e in plan.events:
                self.db.events.append((self.tenant_id, e))
                self.db.event_ids.add(e.id)
            now = time.time()
            for sid in plan.touched_sessions:
                row = self.db.sessions[sid]
                row.info = row.info.model_copy(update={"updated_at": now})

    # -- reads -----------------------------------------------------------------------------

    def get_message(self, message_id: str, *, with_parts: bool = True) -> Message:
        with self.db.lock:
            found = self.db.messages.get(message_id)
            if found is None or found[0] != self.tenant_id:
                raise NotFound(f"no message {message_id!r}")
            return self._with_parts(found[1]) if with_parts else found[1]

    def get_part(self, part_id: str) -> Part:
        with self.db.lock:
            found = self.db.parts.get(part_id)
            if found is None or found[0] != self.tenant_id:
                raise NotFound(f"no part {part_id!r}")
            return found[1]

    def timeline(
        self,
        session_id: str,
        *,
        cursor: str | None = None,
        limit: int = PAGE_SIZE,
        with_parts: bool = True,
    ) -> Page[Message]:
        with self.db.lock:
            self._session_row(session_id)
            pointers = self.db.timeline[session_id]
            start = decode_cursor(cursor)
            ids = pointers[start : start + limit]
            items = [self.db.messages[m][1] for m in ids]
            if with_parts:
                with collector_paused():  # a page of new objects, none in a cycle (base.py)
                    items = [self._with_parts(m) for m in items]
            nxt = start + len(ids)
            return Page(items, encode_cursor(nxt) if nxt < len(pointers) else None)

    def timeline_length(self, session_id: str) -> int:
        with self.db.lock:
            self._session_row(session_id)
            return len(self.db.timeline[session_id])

    def position(self, session_id: str, message_id: str) -> int:
        with self.db.lock:
            self._session_row(session_id)
            try:
                return self.db.timeline[session_id].index(message_id)
            except ValueError:
                raise NotFound(f"message {message_id} is not in session {session_id}") from None

    def unfinished_messages(self, session_id: str) -> list[Message]:
        with self.db.lock:
            self._session_row(session_id)
            return [
                self._with_parts(self.db.messages[m][1])
                for m in self.db.timeline[session_id]
                if not self.db.messages[m][1].is_terminal
            ]

    def events(
        self,
        session_id: str | None = None,
        *,
        type: str | None = None,
        cursor: str | None = None,
        limit: int = PAGE_SIZE,
    ) -> Page[Event]:
        with self.db.lock:
            rows = [
                e for t, e in self.db.events
                if t == self.tenant_id
                and (session_id is None or e.session_id == session_id)
                and (type is None or e.type == type)
            ]
        start = decode_cursor(cursor)
        items = rows[start : start + limit]
        nxt = start + limit
        return Page(items, encode_cursor(nxt) if nxt < len(rows) else None)

    # -- SQL -------------------------------------------------------------------------------

    def memory_index(self) -> contextlib.AbstractContextManager[Any]:
        """A transaction on the memory index: its tables in an in-memory DuckDB (inmemory/sql.py)."""
        from .sql import memory_index_tx

        return memory_index_tx(self.db)

    def reading(self) -> contextlib.AbstractContextManager[Any]:
        """A throwaway in-memory DuckDB holding this tenant's rows, with the file's schema
        and views: the DuckDB backend's SQL, run on the same tables (inmemory/sql.py)."""
        from .sql import memory_snapshot

        return memory_snapshot(self)

    # -- leases ----------------------------------------------------------------------------

    def acquire_lease(
        self, session_id: str, owner: str, ttl: float, *, replacing: str | None = None
    ) -> bool:
        with self.db.lock:
            row = self._session_row(session_id)
            now = time.time()
            if row.lease_owner not in (None, owner, replacing) and row.lease_expires > now:
                return False
            row.lease_owner, row.lease_expires = owner, now + ttl
            return True

    def release_lease(self, session_id: str, owner: str) -> None:
        with self.db.lock:
            row = self._session_row(session_id, allow_deleted=True)
            if row.lease_owner == owner:
                row.lease_owner, row.lease_expires = None, 0.0

    def lease(self, session_id: str) -> tuple[str, float] | None:
        with self.db.lock:
            row = self._session_row(session_id)
            if row.lease_owner is None or row.lease_expires <= time.time():
                return None
            return row.lease_owner, row.lease_expires
