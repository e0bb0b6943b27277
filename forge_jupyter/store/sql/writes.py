"""How the DuckDB store writes (inside a transaction ``duckdb.py`` opened): a batch, a new
session, a fork's timeline, a session's deletion.

A batch is loaded, checked and applied in three steps: ``load_write_state`` reads every row
the batch touches in one round trip (ids are global: these probes see every tenant's rows, so
that a collision with another tenant's row is refused, never resolved by overwriting it);
``plan.plan_write`` checks the invariants; ``apply_plan`` lands the rows with DuckDB's
appender.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ...errors import DuplicateId
from ...message import TERMINAL_STATUSES, SessionInfo
from ..ops import AppendMessage, Op, batch_ids
from ..plan import MessageState, PartState, SessionState, WritePlan, WriteState, plan_write
from ..rows import (
    PART_TERMINAL_SQL,
    append_rows,
    event_row,
    message_row,
    part_row,
    session_row,
    timestamp,
)
from .tables import EVENT_COLUMNS, MESSAGE_COLUMNS, PART_COLUMNS, SESSION_COLUMNS, TIMELINE_COLUMNS

if TYPE_CHECKING:
    import duckdb


def write_batch(con: duckdb.DuckDBPyConnection, tenant_id: str, ops: Sequence[Op],
                now: float, lease_owners: Mapping[str, str] | None = None) -> None:
    """Check ``ops`` (and the leases they are fenced by, ``plan_write``) against what is
    stored and apply them (``now``: the sessions' new ``updated_at``)."""
    state = load_write_state(con, tenant_id, ops, lease_owners or ())
    apply_plan(con, tenant_id, plan_write(tenant_id, ops, state, lease_owners), state, now)


# ---------------------------------------------------------------------- what a batch touches


class _Stored(NamedTuple):
    """One existing row a batch touches, as ``load_write_state`` reads it (a column a kind
    has not is NULL)."""

    kind: str  # message | part | session | event
    id: str
    tenant_id: str
    session_id: str | None  # message, part
    message_id: str | None  # part
    role: str | None  # message
    status: str | None  # message
    terminal: bool | None  # part: final, from its columns
    last_message_id: str | None  # session: the timeline's tail
    timeline_length: int | None  # session
    deleted: bool | None  # session
    lease_owner: str | None  # session


# Each kind's SELECT list in ``_Stored``'s order: one UNION ALL reads them all.
_STORED_TYPES = {"session_id": "VARCHAR", "message_id": "VARCHAR", "role": "VARCHAR",
                 "status": "VARCHAR", "terminal": "BOOLEAN", "last_message_id": "VARCHAR",
                 "timeline_length": "INTEGER", "deleted": "BOOLEAN", "lease_owner": "VARCHAR"}


def _stored_select(kind: str, table: str, where: str, **columns: str) -> str:
    exprs = [columns.get(name, f"NULL::{sql_type}") for name, sql_type in _STORED_TYPES.items()]
    return f"SELECT '{kind}', id, tenant_id, {', '.join(exprs)} FROM {table} WHERE {where}"


_MESSAGE_STATE = _stored_select("message", "message", "id IN ({ids})",
                                session_id="session_id", role="role", status="status")
_PART_STATE = _stored_select("part", "part", "id IN ({ids})", session_id="session_id",
                             message_id="message_id", terminal=PART_TERMINAL_SQL)
_SESSION_STATE = _stored_select("session", "session", "tenant_id = ? AND id IN ({ids})",
                                last_message_id="last_message_id",
                                timeline_length="timeline_length",
                                deleted="deleted_at IS NOT NULL", lease_owner="lease_owner")
_EVENT_STATE = _stored_select("event", "event", "id IN ({ids})")


def _id_list(ids: set[str]) -> tuple[str, list[Any]]:
    """The inside of ``IN (…)`` for ``ids``, and its parameters.

    A short list of parameters is served by the primary-key index (measured: 20 ids ≈ 1 ms);
    a long one is cheaper as one list parameter, hashed against a scan (3,000 ids: 14 ms
    instead of 55).
    """
    if len(ids) <= 200:
        return ", ".join("?" * len(ids)), sorted(ids)
    return "SELECT unnest(?::VARCHAR[])", [sorted(ids)]


def load_write_state(con: duckdb.DuckDBPyConnection, tenant_id: str,
                     ops: Sequence[Op], fenced: Iterable[str] = ()) -> WriteState:
    """Every existing row the batch touches (and the ``fenced`` sessions, whose leases it
    checks): one query of primary-key lookups, and a second one for the timeline's last
    message when the batch appends to a timeline."""
    ids = batch_ids(ops)
    branches: list[str] = []
    params: list[Any] = []

    def branch(select: str, wanted: set[str], *extra: Any) -> None:
        if wanted:
            in_list, values = _id_list(wanted)
            branches.append(select.format(ids=in_list))
            params.extend(extra)
            params.extend(values)

    branch(_MESSAGE_STATE, ids.messages)
    branch(_PART_STATE, ids.parts)
    branch(_SESSION_STATE, ids.sessions | set(fenced), tenant_id)
    branch(_EVENT_STATE, ids.events)
    state = WriteState()
    _collect(con.execute(" UNION ALL ".join(branches), params).fetchall(), state)
    appended = {op.session_id for op in ops if isinstance(op, AppendMessage)}
    tails = {
        tail.last_message_id for sid, tail in state.sessions.items()
        if sid in appended and tail.last_message_id is not None
    } - state.messages.keys()
    if tails:
        in_list, values = _id_list(tails)
        _collect(con.execute(_MESSAGE_STATE.format(ids=in_list), values).fetchall(), state)
    return state


def _collect(rows: list[tuple], state: WriteState) -> None:
    for row in rows:
        r = _Stored(*row)
        if r.kind == "message":
            assert r.session_id is not None and r.role is not None and r.status is not None
            state.messages[r.id] = MessageState(r.tenant_id, r.session_id, r.role, r.status,
                                                r.status in TERMINAL_STATUSES)
        elif r.kind == "part":
            assert r.session_id is not None and r.message_id is not None
            state.parts[r.id] = PartState(r.tenant_id, r.session_id, r.message_id,
                                          bool(r.terminal))
        elif r.kind == "session":
            state.sessions[r.id] = SessionState(deleted=bool(r.deleted),
                                                last_message_id=r.last_message_id,
                                                last_pos=(r.timeline_length or 0) - 1,
                                                lease_owner=r.lease_owner)
        else:
            state.event_ids.add(r.id)


# --------------------------------------------------------------------------------- applying


def apply_plan(con: duckdb.DuckDBPyConnection, tenant_id: str, plan: WritePlan,
               state: WriteState, now: float) -> None:
    """Land a checked batch: upserts as delete + one appender flush per table."""
    t = tenant_id
    # parts before their messages: PostgreSQL refuses a part written into a message already
    # finished (postgres/history_guard.py), and a batch that finishes a message also writes
    # its last parts — they land while the stored message still runs
    replaced = [p for p in plan.parts if p in state.parts]
    if replaced:
        con.execute("DELETE FROM part WHERE tenant_id = ? AND id = ANY(?)", [t, replaced])
    if plan.parts:
        append_rows(con, "part", PART_COLUMNS, [part_row(t, p) for p in plan.parts.values()])
    replaced = [m for m in plan.messages if m in state.messages]
    if replaced:
        con.execute("DELETE FROM message WHERE tenant_id = ? AND id = ANY(?)", [t, replaced])
    if plan.messages:
        append_rows(con, "message", MESSAGE_COLUMNS,
                    [message_row(t, m) for m in plan.messages.values()])
    if plan.timeline:
        append_rows(con, "session_message", TIMELINE_COLUMNS,
                    [(t, sid, pos, mid) for sid, pos, mid in plan.timeline])
    if plan.events:
        append_rows(con, "event", EVENT_COLUMNS, [event_row(t, e) for e in plan.events])
    updated = timestamp(now)
    extended = {sid for sid, _pos, _mid in plan.timeline}
    for sid in extended:
        tail = state.sessions[sid]  # plan_write advanced it past the appended pointers
        con.execute(
            "UPDATE session SET timeline_length = ?, last_message_id = ?, updated_at = ? "
            "WHERE tenant_id = ? AND id = ?",
            [tail.last_pos + 1, tail.last_message_id, updated, t, sid],
        )
    others = sorted(plan.touched_sessions - extended)
    if others:
        con.execute(
            "UPDATE session SET updated_at = ? WHERE tenant_id = ? AND id = ANY(?)",
            [updated, t, others],
        )


# ---------------------------------------------------------------------------------- sessions


def session_by_name(con: duckdb.DuckDBPyConnection, tenant_id: str, name: str) -> str | None:
    """The id of the live session named ``name``, if any."""
    row = con.execute(
        "SELECT id FROM session WHERE tenant_id = ? AND name = ? AND deleted_at IS NULL",
        [tenant_id, name],
    ).fetchone()
    return None if row is None else row[0]


def insert_session(con: duckdb.DuckDBPyConnection, tenant_id: str, info: SessionInfo) -> None:
    if con.execute("SELECT 1 FROM session WHERE id = ?", [info.id]).fetchone():
        raise DuplicateId(f"session id {info.id} already exists")
    if info.name is not None and session_by_name(con, tenant_id, info.name) is not None:
        raise DuplicateId(f"a session named {info.name!r} already exists; pick another name")
    append_rows(con, "session", SESSION_COLUMNS, [session_row(tenant_id, info)])


def copy_timeline(con: duckdb.DuckDBPyConnection, tenant_id: str, session_id: str,
                  fork_id: str, through_pos: int, last_message_id: str) -> None:
    """A fork's timeline: a copy of the pointer rows up to ``through_pos``, no body copied."""
    con.execute(
        "INSERT INTO session_message (tenant_id, session_id, pos, message_id) "
        "SELECT tenant_id, ?, pos, message_id FROM session_message "
        "WHERE tenant_id = ? AND session_id = ? AND pos <= ?",
        [fork_id, tenant_id, session_id, through_pos],
    )
    con.execute(
        "UPDATE session SET timeline_length = ?, last_message_id = ? "
        "WHERE tenant_id = ? AND id = ?",
        [through_pos + 1, last_message_id, tenant_id, fork_id],
    )


# The bodies a deleted session takes with it: those it wrote, and those of already deleted
# sessions that its timeline kept alive — unless another timeline (a fork) still points at
# them. One text for both engines; PostgreSQL runs it inside ``forge_delete_session()``
# (postgres/history_guard.py), the one path that may remove finished rows there.
DOOMED_MESSAGES = """
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
    """


def delete_session_rows(con: duckdb.DuckDBPyConnection, tenant_id: str, session_id: str,
                        now: float) -> None:
    """Leave a tombstone of the session; its bodies go unless a fork still points at them."""
    t = tenant_id
    doomed = [r[0] for r in con.execute(DOOMED_MESSAGES, {"t": t, "s": session_id}).fetchall()]
    if doomed:
        con.execute("DELETE FROM part WHERE tenant_id = ? AND message_id = ANY(?)", [t, doomed])
        con.execute("DELETE FROM message WHERE tenant_id = ? AND id = ANY(?)", [t, doomed])
    con.execute("DELETE FROM session_message WHERE tenant_id = ? AND session_id = ?", [t, session_id])
    con.execute(
        "UPDATE session SET deleted_at = ?, lease_owner = NULL, lease_expires = NULL, "
        "timeline_length = 0, last_message_id = NULL WHERE tenant_id = ? AND id = ?",
        [timestamp(now), t, session_id],
    )
