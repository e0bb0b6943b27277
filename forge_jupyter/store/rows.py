"""DuckDB rows <-> model objects: the one codec of every table (schema.py's column order).

The DuckDB store writes and reads through it, and so does the memory store's SQL, which loads
its rows into a scratch DuckDB of the same schema (memory_sql.py). Timestamps cross as
``TIMESTAMPTZ`` one way and as epoch microseconds the other (``epoch_us`` in the SELECTs):
a float of seconds round-trips exactly through both.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..model import (
    TERMINAL_TOOL_STATES,
    ErrorInfo,
    Event,
    Message,
    Part,
    ReasoningPart,
    SessionInfo,
    StepFinishPart,
    TextPart,
    Tokens,
    ToolPart,
)

if TYPE_CHECKING:
    import duckdb


def timestamp(epoch: float | None) -> datetime | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, UTC)


def seconds(micros: int | None) -> float | None:
    return None if micros is None else micros / 1_000_000


def json_text(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


MESSAGE_SELECT = (
    "t.id, t.session_id, t.role, t.parent_id, t.agent, t.model, t.provider, t.status, t.finish, "
    "t.summary, t.error_type, t.error_message, t.tokens_input, t.tokens_output, "
    "t.tokens_reasoning, t.tokens_cache_read, t.tokens_cache_write, t.tokens_estimated, t.cost, "
    "epoch_us(t.created_at), epoch_us(t.completed_at), t.origin, t.metadata"
)
SESSION_SELECT = (
    "id, name, title, agent, model, directory, parent_id, forked_from_session, "
    "forked_from_message, epoch_us(created_at), epoch_us(updated_at), metadata"
)


def message_row(tenant_id: str, m: Message) -> tuple:
    t = m.tokens
    return (
        tenant_id, m.id, m.session_id, m.role, m.parent_id, m.agent, m.model, m.provider,
        m.status, m.finish, m.summary,
        m.error.type if m.error else None, m.error.message if m.error else None,
        t.input, t.output, t.reasoning, t.cache_read, t.cache_write, t.estimated, m.cost,
        timestamp(m.created_at), timestamp(m.completed_at), json_text(m.origin), json_text(m.metadata),
    )


def message_from_row(row: tuple) -> Message:
    (id_, session_id, role, parent_id, agent, model, provider, status, finish, summary,
     error_type, error_message, t_in, t_out, t_reason, t_cr, t_cw, t_est, cost,
     created_us, completed_us, origin, metadata) = row
    return Message(
        id=id_, session_id=session_id, role=role, parent_id=parent_id, agent=agent,
        model=model, provider=provider, status=status, finish=finish, summary=summary,
        error=None if error_type is None else ErrorInfo(type=error_type, message=error_message),
        tokens=Tokens(input=t_in, output=t_out, reasoning=t_reason, cache_read=t_cr,
                      cache_write=t_cw, estimated=t_est),
        cost=cost, created_at=seconds(created_us), completed_at=seconds(completed_us),
        origin=None if origin is None else json.loads(origin),
        metadata=json.loads(metadata) if metadata else {},
    )


def part_row(tenant_id: str, p: Part) -> tuple:
    tool = tool_state = call_id = None
    if isinstance(p, ToolPart):
        tool, tool_state, call_id = p.tool, p.state, p.call_id
    tokens: tuple = (None,) * 6
    cost = None
    if isinstance(p, StepFinishPart):
        t = p.tokens
        tokens = (t.input, t.output, t.reasoning, t.cache_read, t.cache_write, t.estimated)
        cost = p.cost
    start = end = None
    if isinstance(p, TextPart | ReasoningPart | ToolPart):
        start, end = p.time_start, p.time_end
    return (
        tenant_id, p.id, p.session_id, p.message_id, p.type, tool, tool_state, call_id,
        *tokens, cost, timestamp(start), timestamp(end), timestamp(p.created_at), p.model_dump_json(),
    )


def session_row(tenant_id: str, s: SessionInfo) -> tuple:
    return (
        tenant_id, s.id, s.name, s.title, s.agent, s.model, s.directory, s.parent_id,
        s.forked_from_session, s.forked_from_message, timestamp(s.created_at), timestamp(s.updated_at),
        0, None, json_text(s.metadata),
    )


def session_from_row(row: tuple) -> SessionInfo:
    (id_, name, title, agent, model, directory, parent_id, fork_session, fork_message,
     created_us, updated_us, metadata) = row
    return SessionInfo(
        id=id_, name=name, title=title, agent=agent, model=model, directory=directory,
        parent_id=parent_id, forked_from_session=fork_session,
        forked_from_message=fork_message, created_at=seconds(created_us),
        updated_at=seconds(updated_us), metadata=json.loads(metadata) if metadata else {},
    )


def event_from_row(row: tuple) -> Event:
    id_, session_id, type_, actor, created_us, data = row
    return Event(id=id_, session_id=session_id, type=type_, actor=actor,
                 created_at=seconds(created_us), data=json.loads(data) if data else {})


def event_row(tenant_id: str, e: Event) -> tuple:
    return (tenant_id, e.id, e.session_id, e.type, e.actor, timestamp(e.created_at),
            json_text(e.data))


def append_rows(con: duckdb.DuckDBPyConnection, table: str, columns: Sequence[str], rows: list) -> None:
    with con.appender(table, columns=list(columns)) as appender:
        appender.append_rows(rows)


# When a stored part is final, from its columns alone — what ``Part.is_terminal`` says of it:
# text and reasoning once they have an end (``part_row`` fills ``time_end`` for them), a tool
# call once completed or failed, every other type as soon as it is written. A write checks
# this of the parts it replaces without parsing their JSON (tests/store pins the two equal).
PART_TERMINAL_SQL = (
    "CASE WHEN type = 'tool' THEN coalesce(tool_state IN ({tool}), false) "
    "WHEN type IN ('text', 'reasoning') THEN time_end IS NOT NULL ELSE true END"
).format(tool=", ".join(f"'{s}'" for s in sorted(TERMINAL_TOOL_STATES)))
