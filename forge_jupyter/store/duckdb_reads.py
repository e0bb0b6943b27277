"""How the DuckDB store reads (inside a transaction ``duckdb.py`` opened): sessions, a
timeline's messages with their parts, events. Every query filters on the tenant.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import NotFound, SessionDeleted
from ..model import TERMINAL_STATUSES, Event, Message, Part, SessionInfo, part_from_json
from .rows import (
    MESSAGE_SELECT,
    SESSION_SELECT,
    event_from_row,
    message_from_row,
    seconds,
    session_from_row,
)

if TYPE_CHECKING:
    import duckdb

_TERMINAL = sorted(TERMINAL_STATUSES)


@dataclass(slots=True)
class SessionFlags:
    """What a call checks of a session before it acts: alive, its timeline's tail, its lease."""

    deleted: bool
    timeline_length: int
    last_message_id: str | None
    lease_owner: str | None
    lease_expires: float | None


def session_flags(con: duckdb.DuckDBPyConnection, tenant_id: str, session_id: str, *,
                  allow_deleted: bool = False) -> SessionFlags:
    """NotFound for a session of no one or another tenant; SessionDeleted for a tombstone."""
    row = con.execute(
        "SELECT deleted_at IS NOT NULL, timeline_length, last_message_id, lease_owner, "
        "epoch_us(lease_expires) FROM session WHERE tenant_id = ? AND id = ?",
        [tenant_id, session_id],
    ).fetchone()
    if row is None:
        raise NotFound(f"no session {session_id!r} for tenant {tenant_id!r}")
    flags = SessionFlags(row[0], row[1], row[2], row[3], seconds(row[4]))
    if flags.deleted and not allow_deleted:
        raise SessionDeleted(f"session {session_id} was deleted")
    return flags


def get_session(con: duckdb.DuckDBPyConnection, tenant_id: str, session_id: str) -> SessionInfo:
    row = con.execute(
        f"SELECT {SESSION_SELECT}, deleted_at IS NOT NULL FROM session "
        "WHERE tenant_id = ? AND id = ?",
        [tenant_id, session_id],
    ).fetchone()
    if row is None:
        raise NotFound(f"no session {session_id!r} for tenant {tenant_id!r}")
    if row[-1]:
        raise SessionDeleted(f"session {session_id} was deleted")
    return session_from_row(row[:-1])


def list_sessions(con: duckdb.DuckDBPyConnection, tenant_id: str, after: str,
                  limit: int) -> list[SessionInfo]:
    """Up to ``limit`` live sessions with an id after ``after``, by id."""
    rows = con.execute(
        f"SELECT {SESSION_SELECT} FROM session WHERE tenant_id = ? "
        "AND deleted_at IS NULL AND id > ? ORDER BY id LIMIT ?",
        [tenant_id, after, limit],
    ).fetchall()
    return [session_from_row(r) for r in rows]


# ---------------------------------------------------------------------------------- messages


def _rows_where_in(
    con: duckdb.DuckDBPyConnection, tenant_id: str, select: str, table: str, column: str,
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
        params: list[Any] = [tenant_id, *ids]
    else:
        where = (
            f"t.rowid IN (SELECT rowid FROM {table} WHERE tenant_id = ? "
            f"AND {column} IN (SELECT unnest(?::VARCHAR[])))"
        )
        params = [tenant_id, ids]
    return con.execute(f"SELECT {select} FROM {table} t WHERE {where} {order}", params).fetchall()


def _parts_of(con: duckdb.DuckDBPyConnection, tenant_id: str,
              message_ids: list[str]) -> dict[str, list[Part]]:
    by_message: dict[str, list[Part]] = {m: [] for m in message_ids}
    if message_ids:
        rows = _rows_where_in(con, tenant_id, "t.message_id, t.data", "part", "message_id",
                              message_ids, "ORDER BY t.message_id, t.id")
        for message_id, data in rows:
            by_message[message_id].append(part_from_json(data))
    return by_message


def with_parts(con: duckdb.DuckDBPyConnection, tenant_id: str,
               messages: list[Message]) -> list[Message]:
    parts = _parts_of(con, tenant_id, [m.id for m in messages])
    for m in messages:
        m.parts = parts[m.id]
    return messages


def messages_by_id(con: duckdb.DuckDBPyConnection, tenant_id: str,
                   ids: list[str]) -> list[Message]:
    """The messages ``ids`` names, in that order."""
    if not ids:
        return []
    rows = _rows_where_in(con, tenant_id, MESSAGE_SELECT, "message", "id", ids)
    found = {r[0]: r for r in rows}
    return [message_from_row(found[i]) for i in ids]


def get_message(con: duckdb.DuckDBPyConnection, tenant_id: str, message_id: str, *,
                parts: bool) -> Message:
    row = con.execute(
        f"SELECT {MESSAGE_SELECT} FROM message t WHERE t.tenant_id = ? AND t.id = ?",
        [tenant_id, message_id],
    ).fetchone()
    if row is None:
        raise NotFound(f"no message {message_id!r}")
    message = message_from_row(row)
    return with_parts(con, tenant_id, [message])[0] if parts else message


def get_part(con: duckdb.DuckDBPyConnection, tenant_id: str, part_id: str) -> Part:
    row = con.execute(
        "SELECT data FROM part WHERE tenant_id = ? AND id = ?", [tenant_id, part_id]
    ).fetchone()
    if row is None:
        raise NotFound(f"no part {part_id!r}")
    return part_from_json(row[0])


def timeline_slice(con: duckdb.DuckDBPyConnection, tenant_id: str, session_id: str,
                   start: int, stop: int, *, parts: bool) -> list[Message]:
    """The messages at positions ``start`` to ``stop`` (excluded) of a timeline."""
    # pointers, then bodies by id: lookups in the indexes for a short page, one hashed
    # scan for a long one (string ids give DuckDB's zone maps nothing to prune with)
    ids = [r[0] for r in con.execute(
        "SELECT message_id FROM session_message "
        "WHERE tenant_id = ? AND session_id = ? AND pos >= ? AND pos < ? ORDER BY pos",
        [tenant_id, session_id, start, stop],
    ).fetchall()]
    items = messages_by_id(con, tenant_id, ids)
    return with_parts(con, tenant_id, items) if parts else items


def position(con: duckdb.DuckDBPyConnection, tenant_id: str, session_id: str,
             message_id: str) -> int:
    row = con.execute(
        "SELECT min(pos) FROM session_message "
        "WHERE tenant_id = ? AND session_id = ? AND message_id = ?",
        [tenant_id, session_id, message_id],
    ).fetchone()
    if row is None or row[0] is None:
        raise NotFound(f"message {message_id} is not in session {session_id}")
    return row[0]


def message_status(con: duckdb.DuckDBPyConnection, tenant_id: str, message_id: str) -> str | None:
    row = con.execute(
        "SELECT status FROM message WHERE tenant_id = ? AND id = ?", [tenant_id, message_id]
    ).fetchone()
    return None if row is None else row[0]


def unfinished_messages(con: duckdb.DuckDBPyConnection, tenant_id: str,
                        session_id: str) -> list[Message]:
    rows = con.execute(
        f"SELECT {MESSAGE_SELECT} FROM session_message sm "
        "JOIN message t ON t.tenant_id = sm.tenant_id AND t.id = sm.message_id "
        "WHERE sm.tenant_id = ? AND sm.session_id = ? AND t.status <> ALL(?) "
        "ORDER BY sm.pos",
        [tenant_id, session_id, _TERMINAL],
    ).fetchall()
    return with_parts(con, tenant_id, [message_from_row(r) for r in rows])


# ------------------------------------------------------------------------------------ events


def events(con: duckdb.DuckDBPyConnection, tenant_id: str, session_id: str | None,
           type: str | None, after: str, limit: int) -> list[Event]:
    """Up to ``limit`` events with an id after ``after``, by id."""
    where = ["tenant_id = ?", "id > ?"]
    params: list[Any] = [tenant_id, after]
    if session_id is not None:
        where.append("session_id = ?")
        params.append(session_id)
    if type is not None:
        where.append("type = ?")
        params.append(type)
    rows = con.execute(
        "SELECT id, session_id, type, actor, epoch_us(created_at), data FROM event "
        f"WHERE {' AND '.join(where)} ORDER BY id LIMIT ?",
        [*params, limit],
    ).fetchall()
    return [event_from_row(r) for r in rows]
