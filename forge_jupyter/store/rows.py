"""DuckDB rows <-> model objects: the one codec of every table (schema.py's column order).

The DuckDB store writes and reads through it, and so does the memory store's SQL, which loads
its rows into a scratch DuckDB of the same schema (inmemory/sql.py). Timestamps cross as
``TIMESTAMPTZ`` one way and as epoch microseconds the other (``epoch_us`` in the SELECTs):
a float of seconds round-trips exactly through both.

Messages are read from their typed columns without a second validation (rows_to_models.py). A row
those checks refuse is read as before: DuckDB writes each message as the JSON object
``Message`` validates from, its parts' stored JSON spliced in (``message_json``), and pydantic
validates a page of them in one call (``messages_from_json``), raising what it finds wrong.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter

from ..message import (
    TERMINAL_TOOL_STATES,
    Event,
    Message,
    Part,
    ReasoningPart,
    SessionInfo,
    StepFinishPart,
    TextPart,
    ToolPart,
)
from .base import collector_paused

if TYPE_CHECKING:
    import duckdb


def timestamp(epoch: float | None) -> datetime | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, UTC)


def seconds(micros: int | None) -> float | None:
    return None if micros is None else micros / 1_000_000


def json_text(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


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
        m.replay_of,
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


def session_row(tenant_id: str, s: SessionInfo, timeline: Sequence[str] = ()) -> tuple:
    """``SESSION_COLUMNS`` of a session whose timeline points at ``timeline``'s messages."""
    return (
        tenant_id, s.id, s.name, s.title, s.agent, s.model, s.directory, s.parent_id,
        s.forked_from_session, s.forked_from_message, timestamp(s.created_at), timestamp(s.updated_at),
        len(timeline), timeline[-1] if timeline else None, json_text(s.metadata),
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


# ------------------------------------------------------------------------- messages in bulk

# A ``message`` row (alias ``m``) as the JSON object ``Message`` validates from. DuckDB prints
# a DOUBLE as the shortest text that reads back the same, so ``epoch_us / 1e6`` is the very
# float ``seconds`` computes.
_MESSAGE_OBJECT = """json_object(
    'id', m.id, 'session_id', m.session_id, 'role', m.role, 'parent_id', m.parent_id,
    'agent', m.agent, 'model', m.model, 'provider', m.provider, 'status', m.status,
    'finish', m.finish, 'summary', m.summary,
    'error', CASE WHEN m.error_type IS NOT NULL
                  THEN json_object('type', m.error_type, 'message', m.error_message) END,
    'tokens', json_object('input', m.tokens_input, 'output', m.tokens_output,
                          'reasoning', m.tokens_reasoning, 'cache_read', m.tokens_cache_read,
                          'cache_write', m.tokens_cache_write, 'estimated', m.tokens_estimated),
    'cost', m.cost, 'created_at', epoch_us(m.created_at) / 1e6,
    'completed_at', epoch_us(m.completed_at) / 1e6, 'origin', m.origin,
    'metadata', coalesce(m.metadata, '{}'::JSON), 'replay_of', m.replay_of)"""


def message_json(parts: str | None) -> str:
    """SQL for a message row (alias ``m``) as JSON text, ``parts`` (an SQL expression: the
    stored JSON of its parts joined by commas, NULL for none) spliced in as its parts."""
    if parts is None:
        return f"{_MESSAGE_OBJECT}::VARCHAR"
    return f"""'{{"parts":[' || coalesce({parts}, '') || '],' || substr({_MESSAGE_OBJECT}::VARCHAR, 2)"""


_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])


def messages_from_json(texts: Sequence[str]) -> list[Message]:
    """The messages ``message_json`` wrote, validated in one call."""
    if not texts:
        return []
    with collector_paused():
        return _MESSAGES.validate_json("[" + ",".join(texts) + "]")
