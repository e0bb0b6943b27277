"""How the DuckDB store reads (inside a transaction ``duckdb.py`` opened): sessions, a
timeline's messages with their parts, events. Every query filters on the tenant.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...errors import NotFound, SessionDeleted
from ...message import TERMINAL_STATUSES, Event, Message, Part, SessionInfo, part_from_json
from ..base import collector_paused
from ..rows import (
    SESSION_SELECT,
    event_from_row,
    message_json,
    messages_from_json,
    seconds,
    session_from_row,
)
from ..rows_to_models import (
    MESSAGE_SELECT,
    Untrusted,
    check_description,
    messages_from_rows,
    parts_by_message,
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


def _where_in(table: str, column: str, ids: list[str], tenant_id: str) -> tuple[str, list[Any]]:
    """A WHERE clause on ``table t``: ``column`` is one of ``ids`` (this tenant).

    A few ids: lookups in the column's index. More: scan only the narrow ``column`` to find
    the rows, then fetch the wide ones by row id — a join that carried the JSON columns along
    would read all of them (measured, the parts of 500 messages among 150,000: 13 ms instead
    of 48). Ids share their first bytes (``msg_01…``) and DuckDB's string statistics keep
    only 8, so no range of ids can skip a block of rows.
    """
    if len(ids) <= 20:
        return f"t.tenant_id = ? AND t.{column} IN ({', '.join('?' * len(ids))})", [tenant_id, *ids]
    return (f"t.rowid IN (SELECT rowid FROM {table} WHERE tenant_id = ? "
            f"AND {column} IN (SELECT unnest(?::VARCHAR[])))", [tenant_id, ids])


def messages_by_id(con: duckdb.DuckDBPyConnection, tenant_id: str, ids: list[str], *,
                   parts: bool) -> list[Message]:
    """The messages of this tenant ``ids`` names, in that order (an id named twice, twice),
    with their parts if ``parts``: the message rows' typed columns become models without a
    second validation, the parts' JSON is validated a page per call (rows_to_models.py); a row those
    checks refuse is read again the way it was before, whose validation says what is wrong."""
    if not ids:
        return []
    wanted = sorted(set(ids))
    message_where, params = _where_in("message", "id", wanted, tenant_id)
    # the collector paused from the first row fetched to the last object built (base.py)
    with collector_paused():
        try:
            result = con.execute(
                f"SELECT {MESSAGE_SELECT} FROM message t WHERE {message_where}", params)
            check_description(result.description)
            rows = result.fetchall()
            found_parts = None
            if parts:
                part_where, part_params = _where_in("part", "message_id", wanted, tenant_id)
                found_parts = parts_by_message(con.execute(
                    f"SELECT t.message_id, t.data FROM part t WHERE {part_where} "
                    "ORDER BY t.message_id, t.id", part_params).fetchall())
            found = messages_from_rows(rows, found_parts)
        except Untrusted:
            return _validated_messages(con, tenant_id, ids, wanted, parts=parts)
    if len(wanted) == len(ids):
        return [found[i] for i in ids if i in found]
    # an id named again gets an object of its own, as it did when each was validated
    seen: set[str] = set()
    out = []
    for i in ids:
        if i in found:
            out.append(found[i].model_copy(deep=True) if i in seen else found[i])
            seen.add(i)
    return out


def _validated_messages(con: duckdb.DuckDBPyConnection, tenant_id: str, ids: list[str],
                        wanted: list[str], *, parts: bool) -> list[Message]:
    """``messages_by_id`` for rows it will not trust: DuckDB writes each message as the JSON
    ``Message`` validates from, its parts' stored JSON spliced in, and pydantic validates them
    (raising what it finds wrong)."""
    message_where, params = _where_in("message", "id", wanted, tenant_id)
    bodies = f"(SELECT * FROM message t WHERE {message_where}) m"
    if parts:
        part_where, part_params = _where_in("part", "message_id", wanted, tenant_id)
        query = (f"SELECT m.id, {message_json('p.parts')} FROM {bodies} LEFT JOIN ("
                 "SELECT message_id, string_agg(data, ',' ORDER BY id) AS parts "
                 f"FROM part t WHERE {part_where} GROUP BY message_id"
                 ") p ON p.message_id = m.id")
        params = [*params, *part_params]
    else:
        query = f"SELECT m.id, {message_json(None)} FROM {bodies}"
    found = dict(con.execute(query, params).fetchall())
    return messages_from_json([found[i] for i in ids if i in found])


def get_message(con: duckdb.DuckDBPyConnection, tenant_id: str, message_id: str, *,
                parts: bool) -> Message:
    found = messages_by_id(con, tenant_id, [message_id], parts=parts)
    if not found:
        raise NotFound(f"no message {message_id!r}")
    return found[0]


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
    ids = [r[0] for r in con.execute(
        "SELECT message_id FROM session_message "
        "WHERE tenant_id = ? AND session_id = ? AND pos >= ? AND pos < ? ORDER BY pos",
        [tenant_id, session_id, start, stop],
    ).fetchall()]
    return messages_by_id(con, tenant_id, ids, parts=parts)


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
    ids = [r[0] for r in con.execute(
        "SELECT sm.message_id FROM session_message sm "
        "JOIN message t ON t.tenant_id = sm.tenant_id AND t.id = sm.message_id "
        "WHERE sm.tenant_id = ? AND sm.session_id = ? AND t.status <> ALL(?) "
        "ORDER BY sm.pos",
        [tenant_id, session_id, _TERMINAL],
    ).fetchall()]
    return messages_by_id(con, tenant_id, ids, parts=True)


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
