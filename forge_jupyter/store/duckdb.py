"""The DuckDB backend: one file, several kernels, the contract of ``store.base`` (DESIGN §3).

``DuckDBStore(path, tenant_id=…, lock_timeout=…)``: every call takes the file for the length
of one transaction and gives it back (see ``duckdb_file``); ``with store.hold():`` keeps it
across calls, for a run of paginated reads. Writes validate through ``plan_write`` — the
invariants live there, once — and land with DuckDB's appender, in one transaction per batch.

Every query filters on ``tenant_id`` — except the probes for an id that is about to be
written, which must see every tenant's rows: ids are global, and a collision with another
tenant's row has to be refused (``DuplicateId``), never resolved by overwriting it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from ..errors import DuplicateId, MessageRunning, NotFound, SessionDeleted
from ..model import TERMINAL_STATUSES, Event, Message, Part, SessionInfo, part_from_json
from .base import DEFAULT_TENANT, PAGE_SIZE, Page, Store, decode_cursor, encode_cursor
from .duckdb_errors import path_error
from .duckdb_file import DuckDBFile, shared_file
from .ops import AppendMessage, Op, PutEvent, batch_ids
from .plan import MessageState, PartState, SessionState, WritePlan, WriteState, plan_write
from .rows import (
    MESSAGE_SELECT,
    SESSION_SELECT,
    append_rows,
    event_from_row,
    event_row,
    json_text,
    message_from_row,
    message_row,
    part_row,
    seconds,
    session_from_row,
    session_row,
    timestamp,
)
from .schema import (
    EVENT_COLUMNS,
    MESSAGE_COLUMNS,
    PART_COLUMNS,
    SESSION_COLUMNS,
    TIMELINE_COLUMNS,
)

DEFAULT_LOCK_TIMEOUT = 30.0


def default_db_path() -> Path:
    """``$FORGE_DB`` if set, else ``~/.forge/forge.duckdb``."""
    configured = os.environ.get("FORGE_DB")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".forge" / "forge.duckdb"


# ------------------------------------------------------------------------ store SQL

_TERMINAL = sorted(TERMINAL_STATUSES)
_MESSAGE_STATE = (
    "SELECT 'm', id, tenant_id, session_id, role, status, NULL FROM message WHERE id IN ({ids})"
)


def _id_list(ids: set[str]) -> tuple[str, list[Any]]:
    """The inside of ``IN (…)`` for ``ids``, and its parameters.

    A short list of parameters is served by the primary-key index (measured: 20 ids ≈ 1 ms);
    a long one is cheaper as one list parameter, hashed against a scan (3,000 ids: 14 ms
    instead of 55).
    """
    if len(ids) <= 200:
        return ", ".join("?" * len(ids)), sorted(ids)
    return "SELECT unnest(?::VARCHAR[])", [sorted(ids)]


@dataclass(slots=True)
class _SessionFlags:
    deleted: bool
    timeline_length: int
    last_message_id: str | None
    lease_owner: str | None
    lease_expires: float | None


# ------------------------------------------------------------------------------------ the store


class DuckDBStore(Store):
    """Sessions, messages, parts, timeline, events and leases of one tenant in a DuckDB file."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        tenant_id: str = DEFAULT_TENANT,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    ):
        self.path = Path(path).expanduser() if path is not None else default_db_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:  # a name too long, a file where a folder should be, …
            raise path_error(self.path, error) from error
        self.tenant_id = tenant_id
        self.lock_timeout = lock_timeout
        # open once now: an unreadable or too new file is reported here, an old one upgraded
        with self.hold():
            pass

    def __repr__(self) -> str:
        return f"DuckDBStore({str(self.path)!r}, tenant_id={self.tenant_id!r})"

    # -- access to the file ---------------------------------------------------------------

    def files(self) -> tuple[Path, ...]:
        """The database, its write-ahead log and the lock sidecar, resolved."""
        file = self._file()
        return (file.path, file.path.with_name(file.path.name + ".wal"), file.lock_path)

    def _file(self) -> DuckDBFile:
        return shared_file(self.path)  # looked up each time: a forked child gets its own

    def _tx(self) -> AbstractContextManager[duckdb.DuckDBPyConnection]:
        return self._file().transaction(self.lock_timeout)

    @contextmanager
    def hold(self) -> Iterator[DuckDBStore]:
        """Keep the file open across the calls inside the block (reentrant; other processes
        wait meanwhile, so keep it short: a run of paginated reads, a burst of writes)."""
        with self._file().opened(self.lock_timeout):
            yield self

    def reading(self) -> AbstractContextManager[duckdb.DuckDBPyConnection]:
        """The file, for read-only SQL over the tables and views (``Store.sql``, frames.py),
        in a transaction that is always rolled back."""
        return self._file().rolled_back(self.lock_timeout)

    # -- helpers --------------------------------------------------------------------------

    def _flags(
        self, con: duckdb.DuckDBPyConnection, session_id: str, *, allow_deleted: bool = False
    ) -> _SessionFlags:
        row = con.execute(
            "SELECT deleted_at IS NOT NULL, timeline_length, last_message_id, lease_owner, "
            "epoch_us(lease_expires) FROM session WHERE tenant_id = ? AND id = ?",
            [self.tenant_id, session_id],
        ).fetchone()
        if row is None:
            raise NotFound(f"no session {session_id!r} for tenant {self.tenant_id!r}")
        flags = _SessionFlags(row[0], row[1], row[2], row[3], seconds(row[4]))
        if flags.deleted and not allow_deleted:
            raise SessionDeleted(f"session {session_id} was deleted")
        return flags

    def _rows_where_in(
        self, con: duckdb.DuckDBPyConnection, select: str, table: str, column: str,
        ids: list[str], order: str = "",
    ) -> list[tuple]:
        """``SELECT {select} FROM {table} t`` where ``column`` is one of ``ids`` (this tenant).

        A few ids: lookups in the column's index. More: scan only the narrow ``column`` to
        find the rows, then fetch the wide ones by row id — a join that carried the JSON
        columns along would read all of them (measured, the parts of 500 messages among
        150,000: 13 ms instead of 48).
        """
        if len(ids) <= 20:
            where = f"t.tenant_id = ? AND t.{column} IN ({', '.join('?' * len(ids))})"
            params: list[Any] = [self.tenant_id, *ids]
        else:
            where = (
                f"t.rowid IN (SELECT rowid FROM {table} WHERE tenant_id = ? "
                f"AND {column} IN (SELECT unnest(?::VARCHAR[])))"
            )
            params = [self.tenant_id, ids]
        return con.execute(f"SELECT {select} FROM {table} t WHERE {where} {order}", params).fetchall()

    def _parts_of(self, con: duckdb.DuckDBPyConnection, message_ids: list[str]) -> dict[str, list[Part]]:
        by_message: dict[str, list[Part]] = {m: [] for m in message_ids}
        if message_ids:
            rows = self._rows_where_in(con, "t.message_id, t.data", "part", "message_id",
                                       message_ids, "ORDER BY t.message_id, t.id")
            for message_id, data in rows:
                by_message[message_id].append(part_from_json(data))
        return by_message

    def _messages(self, con: duckdb.DuckDBPyConnection, ids: list[str]) -> list[Message]:
        """The messages ``ids`` names, in that order."""
        if not ids:
            return []
        rows = self._rows_where_in(con, MESSAGE_SELECT, "message", "id", ids)
        found = {r[0]: r for r in rows}
        return [message_from_row(found[i]) for i in ids]

    def _with_parts(self, con: duckdb.DuckDBPyConnection, messages: list[Message]) -> list[Message]:
        parts = self._parts_of(con, [m.id for m in messages])
        for m in messages:
            m.parts = parts[m.id]
        return messages

    # -- sessions -------------------------------------------------------------------------

    def create_session(self, info: SessionInfo) -> SessionInfo:
        with self._tx() as con:
            self._insert_session(con, info)
            return info

    def create_session_with(self, info: SessionInfo, ops: Sequence[Op]) -> SessionInfo:
        with self._tx() as con:
            self._insert_session(con, info)
            if ops:
                self._write(con, list(ops))
            return info

    def _insert_session(self, con: duckdb.DuckDBPyConnection, info: SessionInfo) -> None:
        if con.execute("SELECT 1 FROM session WHERE id = ?", [info.id]).fetchone():
            raise DuplicateId(f"session id {info.id} already exists")
        if info.name is not None and self._by_name(con, info.name) is not None:
            raise DuplicateId(f"a session named {info.name!r} already exists; pick another name")
        append_rows(con, "session", SESSION_COLUMNS, [session_row(self.tenant_id, info)])

    def _by_name(self, con: duckdb.DuckDBPyConnection, name: str) -> str | None:
        row = con.execute(
            "SELECT id FROM session WHERE tenant_id = ? AND name = ? AND deleted_at IS NULL",
            [self.tenant_id, name],
        ).fetchone()
        return None if row is None else row[0]

    def get_session(self, session_id: str) -> SessionInfo:
        with self._tx() as con:
            return self._get_session(con, session_id)

    def _get_session(self, con: duckdb.DuckDBPyConnection, session_id: str) -> SessionInfo:
        row = con.execute(
            f"SELECT {SESSION_SELECT}, deleted_at IS NOT NULL FROM session "
            "WHERE tenant_id = ? AND id = ?",
            [self.tenant_id, session_id],
        ).fetchone()
        if row is None:
            raise NotFound(f"no session {session_id!r} for tenant {self.tenant_id!r}")
        if row[-1]:
            raise SessionDeleted(f"session {session_id} was deleted")
        return session_from_row(row[:-1])

    def find_session(self, name_or_id: str) -> SessionInfo:
        with self._tx() as con:
            try:
                return self._get_session(con, name_or_id)
            except SessionDeleted:
                raise
            except NotFound:
                pass
            session_id = self._by_name(con, name_or_id)
            if session_id is None:
                raise NotFound(f"no session named or numbered {name_or_id!r}")
            return self._get_session(con, session_id)

    def list_sessions(self, *, cursor: str | None = None, limit: int = PAGE_SIZE) -> Page[SessionInfo]:
        with self._tx() as con:
            rows = con.execute(
                f"SELECT {SESSION_SELECT} FROM session WHERE tenant_id = ? "
                "AND deleted_at IS NULL AND id > ? ORDER BY id LIMIT ?",
                [self.tenant_id, cursor or "", limit + 1],
            ).fetchall()
        items = [session_from_row(r) for r in rows[:limit]]
        return Page(items, items[-1].id if len(rows) > limit else None)

    def update_session(self, info: SessionInfo) -> SessionInfo:
        with self._tx() as con:
            self._flags(con, info.id)
            if info.name is not None:
                holder = self._by_name(con, info.name)
                if holder is not None and holder != info.id:
                    raise DuplicateId(f"a session named {info.name!r} already exists")
            con.execute(
                "UPDATE session SET name = ?, title = ?, agent = ?, model = ?, directory = ?, "
                "metadata = ?, updated_at = ? WHERE tenant_id = ? AND id = ?",
                [info.name, info.title, info.agent, info.model, info.directory,
                 json_text(info.metadata), timestamp(time.time()), self.tenant_id, info.id],
            )
            return self._get_session(con, info.id)

    def delete_session(self, session_id: str) -> None:
        t = self.tenant_id
        with self._tx() as con:
            self._flags(con, session_id)
            # The bodies this session wrote, and those of already deleted sessions that its
            # timeline kept alive, go — unless another timeline (a fork) still points at them.
            doomed = [
                r[0]
                for r in con.execute(
                    """
                    WITH candidate AS (
                        SELECT id FROM message WHERE tenant_id = $t AND session_id = $s
                        UNION
                        SELECT sm.message_id FROM session_message sm
                        JOIN message m ON m.tenant_id = sm.tenant_id AND m.id = sm.message_id
                        JOIN session o ON o.tenant_id = m.tenant_id AND o.id = m.session_id
                        WHERE sm.tenant_id = $t AND sm.session_id = $s
                          AND o.deleted_at IS NOT NULL
                    )
                    SELECT id FROM candidate WHERE id NOT IN (
                        SELECT message_id FROM session_message
                        WHERE tenant_id = $t AND session_id <> $s
                    )
                    """,
                    {"t": t, "s": session_id},
                ).fetchall()
            ]
            if doomed:
                con.execute("DELETE FROM part WHERE tenant_id = ? AND message_id = ANY(?)", [t, doomed])
                con.execute("DELETE FROM message WHERE tenant_id = ? AND id = ANY(?)", [t, doomed])
            con.execute(
                "DELETE FROM session_message WHERE tenant_id = ? AND session_id = ?", [t, session_id]
            )
            con.execute(
                "UPDATE session SET deleted_at = ?, lease_owner = NULL, lease_expires = NULL, "
                "timeline_length = 0, last_message_id = NULL WHERE tenant_id = ? AND id = ?",
                [timestamp(time.time()), t, session_id],
            )

    def fork(self, session_id: str, at_message_id: str, new: SessionInfo) -> SessionInfo:
        t = self.tenant_id
        with self._tx() as con:
            self._flags(con, session_id)
            row = con.execute(
                "SELECT min(pos) FROM session_message "
                "WHERE tenant_id = ? AND session_id = ? AND message_id = ?",
                [t, session_id, at_message_id],
            ).fetchone()
            if row is None or row[0] is None:
                raise NotFound(f"message {at_message_id} is not in session {session_id}")
            pos = row[0]
            status = con.execute(
                "SELECT status FROM message WHERE tenant_id = ? AND id = ?", [t, at_message_id]
            ).fetchone()
            if status is None or status[0] not in TERMINAL_STATUSES:
                raise MessageRunning(
                    f"message {at_message_id} is still running; fork from a finished message"
                )
            forked = new.model_copy(
                update={"forked_from_session": session_id, "forked_from_message": at_message_id}
            )
            self._insert_session(con, forked)
            # the fork's timeline: a copy of the pointer rows, no body copied
            con.execute(
                "INSERT INTO session_message (tenant_id, session_id, pos, message_id) "
                "SELECT tenant_id, ?, pos, message_id FROM session_message "
                "WHERE tenant_id = ? AND session_id = ? AND pos <= ?",
                [forked.id, t, session_id, pos],
            )
            con.execute(
                "UPDATE session SET timeline_length = ?, last_message_id = ? "
                "WHERE tenant_id = ? AND id = ?",
                [pos + 1, at_message_id, t, forked.id],
            )
            self._write(con, [PutEvent(Event(
                session_id=forked.id, type="fork",
                data={"from_session": session_id, "from_message": at_message_id, "position": pos},
            ))])
            return forked

    # -- writes ---------------------------------------------------------------------------

    def write(self, ops: Sequence[Op]) -> None:
        ops = list(ops)
        if not ops:
            return
        with self._tx() as con:
            self._write(con, ops)

    def _write(self, con: duckdb.DuckDBPyConnection, ops: list[Op]) -> None:
        state = self._write_state(con, ops)
        plan = plan_write(self.tenant_id, ops, state)
        self._apply(con, plan, state)

    def _write_state(self, con: duckdb.DuckDBPyConnection, ops: list[Op]) -> WriteState:
        """Every existing row the batch touches: one query of primary-key lookups, and a second
        one for the timeline's last message when the batch appends to a timeline."""
        ids = batch_ids(ops)
        branches: list[str] = []
        params: list[Any] = []

        def branch(select: str, ids: set[str], *extra: Any) -> None:
            if ids:
                in_list, values = _id_list(ids)
                branches.append(select.format(ids=in_list))
                params.extend(extra)
                params.extend(values)

        branch(_MESSAGE_STATE, ids.messages)
        branch("SELECT 'p', id, tenant_id, session_id, message_id, NULL, data FROM part "
               "WHERE id IN ({ids})", ids.parts)
        branch("SELECT 's', id, tenant_id, last_message_id, CAST(timeline_length AS VARCHAR), "
               "CASE WHEN deleted_at IS NULL THEN 'live' ELSE 'deleted' END, NULL FROM session "
               "WHERE tenant_id = ? AND id IN ({ids})", ids.sessions, self.tenant_id)
        branch("SELECT 'e', id, tenant_id, NULL, NULL, NULL, NULL FROM event "
               "WHERE id IN ({ids})", ids.events)
        state = WriteState()
        self._read_state(con.execute(" UNION ALL ".join(branches), params).fetchall(), state)
        appended = {op.session_id for op in ops if isinstance(op, AppendMessage)}
        tails = {
            tail.last_message_id for sid, tail in state.sessions.items()
            if sid in appended and tail.last_message_id is not None
        } - state.messages.keys()
        if tails:
            in_list, values = _id_list(tails)
            self._read_state(
                con.execute(_MESSAGE_STATE.format(ids=in_list), values).fetchall(), state
            )
        return state

    @staticmethod
    def _read_state(rows: list[tuple], state: WriteState) -> None:
        for kind, id_, tenant, a, b, c, data in rows:
            if kind == "m":
                state.messages[id_] = MessageState(tenant, a, b, c, c in TERMINAL_STATUSES)
            elif kind == "p":
                state.parts[id_] = PartState(tenant, a, b, part_from_json(data).is_terminal)
            elif kind == "s":
                state.sessions[id_] = SessionState(
                    deleted=c == "deleted", last_message_id=a, last_pos=int(b) - 1
                )
            else:
                state.event_ids.add(id_)

    def _apply(self, con: duckdb.DuckDBPyConnection, plan: WritePlan, state: WriteState) -> None:
        t = self.tenant_id
        # upserts: delete the stored versions, then insert every row in one appender flush
        replaced = [m for m in plan.messages if m in state.messages]
        if replaced:
            con.execute("DELETE FROM message WHERE tenant_id = ? AND id = ANY(?)", [t, replaced])
        if plan.messages:
            append_rows(con, "message", MESSAGE_COLUMNS,
                    [message_row(t, m) for m in plan.messages.values()])
        replaced = [p for p in plan.parts if p in state.parts]
        if replaced:
            con.execute("DELETE FROM part WHERE tenant_id = ? AND id = ANY(?)", [t, replaced])
        if plan.parts:
            append_rows(con, "part", PART_COLUMNS, [part_row(t, p) for p in plan.parts.values()])
        if plan.timeline:
            append_rows(con, "session_message", TIMELINE_COLUMNS,
                        [(t, sid, pos, mid) for sid, pos, mid in plan.timeline])
        if plan.events:
            append_rows(con, "event", EVENT_COLUMNS, [event_row(t, e) for e in plan.events])
        now = timestamp(time.time())
        extended = {sid for sid, _pos, _mid in plan.timeline}
        for sid in extended:
            tail = state.sessions[sid]  # plan_write advanced it past the appended pointers
            con.execute(
                "UPDATE session SET timeline_length = ?, last_message_id = ?, updated_at = ? "
                "WHERE tenant_id = ? AND id = ?",
                [tail.last_pos + 1, tail.last_message_id, now, t, sid],
            )
        others = sorted(plan.touched_sessions - extended)
        if others:
            con.execute(
                "UPDATE session SET updated_at = ? WHERE tenant_id = ? AND id = ANY(?)",
                [now, t, others],
            )

    # -- reads ----------------------------------------------------------------------------

    def get_message(self, message_id: str, *, with_parts: bool = True) -> Message:
        with self._tx() as con:
            row = con.execute(
                f"SELECT {MESSAGE_SELECT} FROM message t WHERE t.tenant_id = ? AND t.id = ?",
                [self.tenant_id, message_id],
            ).fetchone()
            if row is None:
                raise NotFound(f"no message {message_id!r}")
            message = message_from_row(row)
            return self._with_parts(con, [message])[0] if with_parts else message

    def get_part(self, part_id: str) -> Part:
        with self._tx() as con:
            row = con.execute(
                "SELECT data FROM part WHERE tenant_id = ? AND id = ?", [self.tenant_id, part_id]
            ).fetchone()
        if row is None:
            raise NotFound(f"no part {part_id!r}")
        return part_from_json(row[0])

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
            length = self._flags(con, session_id).timeline_length
            # pointers, then bodies by id: lookups in the indexes for a short page, one hashed
            # scan for a long one (string ids give DuckDB's zone maps nothing to prune with)
            ids = [r[0] for r in con.execute(
                "SELECT message_id FROM session_message "
                "WHERE tenant_id = ? AND session_id = ? AND pos >= ? AND pos < ? ORDER BY pos",
                [self.tenant_id, session_id, start, start + limit],
            ).fetchall()]
            items = self._messages(con, ids)
            if with_parts:
                self._with_parts(con, items)
        nxt = start + len(items)
        return Page(items, encode_cursor(nxt) if nxt < length else None)

    def timeline_length(self, session_id: str) -> int:
        with self._tx() as con:
            return self._flags(con, session_id).timeline_length

    def position(self, session_id: str, message_id: str) -> int:
        with self._tx() as con:
            self._flags(con, session_id)
            row = con.execute(
                "SELECT min(pos) FROM session_message "
                "WHERE tenant_id = ? AND session_id = ? AND message_id = ?",
                [self.tenant_id, session_id, message_id],
            ).fetchone()
        if row is None or row[0] is None:
            raise NotFound(f"message {message_id} is not in session {session_id}")
        return row[0]

    def unfinished_messages(self, session_id: str) -> list[Message]:
        with self._tx() as con:
            self._flags(con, session_id)
            rows = con.execute(
                f"SELECT {MESSAGE_SELECT} FROM session_message sm "
                "JOIN message t ON t.tenant_id = sm.tenant_id AND t.id = sm.message_id "
                "WHERE sm.tenant_id = ? AND sm.session_id = ? AND t.status <> ALL(?) "
                "ORDER BY sm.pos",
                [self.tenant_id, session_id, _TERMINAL],
            ).fetchall()
            return self._with_parts(con, [message_from_row(r) for r in rows])

    def events(
        self,
        session_id: str | None = None,
        *,
        type: str | None = None,
        cursor: str | None = None,
        limit: int = PAGE_SIZE,
    ) -> Page[Event]:
        where = ["tenant_id = ?", "id > ?"]
        params: list[Any] = [self.tenant_id, cursor or ""]
        if session_id is not None:
            where.append("session_id = ?")
            params.append(session_id)
        if type is not None:
            where.append("type = ?")
            params.append(type)
        with self._tx() as con:
            rows = con.execute(
                "SELECT id, session_id, type, actor, epoch_us(created_at), data FROM event "
                f"WHERE {' AND '.join(where)} ORDER BY id LIMIT ?",
                [*params, limit + 1],
            ).fetchall()
        items = [event_from_row(r) for r in rows[:limit]]
        return Page(items, items[-1].id if len(rows) > limit else None)

    # -- runner lease ---------------------------------------------------------------------

    def acquire_lease(
        self, session_id: str, owner: str, ttl: float, *, replacing: str | None = None
    ) -> bool:
        with self._tx() as con:
            flags = self._flags(con, session_id)
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
            self._flags(con, session_id, allow_deleted=True)
            con.execute(
                "UPDATE session SET lease_owner = NULL, lease_expires = NULL "
                "WHERE tenant_id = ? AND id = ? AND lease_owner = ?",
                [self.tenant_id, session_id, owner],
            )

    def lease(self, session_id: str) -> tuple[str, float] | None:
        with self._tx() as con:
            flags = self._flags(con, session_id)
        if flags.lease_owner is None or flags.lease_expires is None:
            return None
        if flags.lease_expires <= time.time():
            return None
        return flags.lease_owner, flags.lease_expires
