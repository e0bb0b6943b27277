"""History as data: pandas DataFrames over the store's SQL views (DESIGN §8).

Every function here is one SELECT over a view of ``store/sql/views.py``, run through
``store/sql/scoped.py``'s ``select`` — so it sees only the store's tenant — on the DuckDB file
itself, for the memory store on an in-memory DuckDB holding the same tables, and for a
PostgreSQL store translated to its dialect and run there over the same views, which its
row-level security scopes (store/postgres/select.py): one set of SQL, the same columns and
dtypes on every backend. That SQL is fixed text written here, every value a bound parameter. ``sql()``,
the one entry for SQL a person writes, runs elsewhere: in a DuckDB holding only the tenant's
rows (store/query/sandbox.py).

Results have stable columns and dtypes, empty or not: timestamps ``datetime64[us, UTC]``,
token counts ``int64`` (``Int64`` where they may be missing), costs ``float64`` (NaN where
the price table does not know the model), ids and names pandas strings. ``sessions()`` and
``history()`` display the columns a person reads, with short ids (frame_display.py); their data
keep every column and the full ids.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pandas as pd

from .errors import NotFound
from .frame_columns import (
    COMPACTIONS,
    CONTEXT,
    COST_KEYS,
    EVENTS,
    HISTORY,
    MESSAGES,
    PARTS,
    SESSIONS,
    TOOL_CALLS,
    TURNS,
    cost_spec,
)
from .frame_display import HISTORY_DISPLAY, SESSIONS_DISPLAY, ReadableFrame
from .ids import check_id, looks_like_id, match_short
from .store.sql.scoped import select
from .store.sql.views import costs_of_parts, for_one_session

if TYPE_CHECKING:
    from .store.base import Store

When = datetime | pd.Timestamp | str | None
OneOrMany = str | Iterable[str] | None

# ------------------------------------------------------------------------------ plumbing


def typed(frame: pd.DataFrame, spec: dict[str, str]) -> pd.DataFrame:
    """``frame`` with exactly ``spec``'s columns, in order, as ``spec``'s dtypes."""
    out = {}
    for column, dtype in spec.items():
        values = frame[column] if column in frame else pd.Series([], dtype=object)
        if dtype.startswith("datetime64"):
            values = pd.to_datetime(values, utc=True)
        out[column] = values.astype(dtype)
    return pd.DataFrame(out, index=pd.RangeIndex(len(frame)))


def utc_times(frame: pd.DataFrame) -> pd.DataFrame:
    """Every time-zone-aware column of ``frame`` in UTC (DuckDB hands them over in its
    connection's time zone)."""
    for column in frame.columns:
        if isinstance(frame[column].dtype, pd.DatetimeTZDtype):
            frame[column] = frame[column].dt.tz_convert("UTC")
    return frame


def utc(value: When) -> pd.Timestamp | None:
    """A time bound as a UTC timestamp; a naive one is read as UTC."""
    if value is None:
        return None
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def session_id(store: Store, session: Any) -> str | None:
    """The id of a session given as a Session, a SessionInfo, an id, a name (this tenant) or
    an id as the frames show it (``ses_…k3Vq9a``)."""
    if session is None:
        return None
    ref = getattr(session, "id", session)
    if not isinstance(ref, str):
        raise TypeError(f"a session is a Session, an id or a name, not {type(session).__name__}")
    if looks_like_id(ref, "session") and not any(mark in ref for mark in ("…", "...")):
        check_id(ref, "session")  # an id from outside: of the grammar, or a clear error
    try:
        return store.find_session(ref).id
    except NotFound:
        full = short_session_id(store, ref)
        if full is None:
            raise
        return full


def short_session_id(store: Store, ref: str) -> str | None:
    """The session id ``ref`` abbreviates as the frames show ids (``ses_…k3Vq9a``), if any."""
    if not any(mark in ref for mark in ("…", "...")):
        return None

    def every_id() -> Iterator[str]:
        cursor = None
        while True:
            page = store.list_sessions(cursor=cursor)
            yield from (info.id for info in page.items)
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    try:
        return match_short(ref, every_id())
    except LookupError as exc:
        raise NotFound(str(exc)) from None


class Where:
    """The WHERE clause of one query and its parameters."""

    def __init__(self) -> None:
        self.terms: list[str] = []
        self.params: list[Any] = []

    def equals(self, column: str, value: OneOrMany) -> Where:
        """``column`` is ``value``, or one of several values."""
        if value is None:
            return self
        if isinstance(value, str):
            self.terms.append(f"{column} = ?")
            self.params.append(value)
        else:
            self.terms.append(f"{column} IN (SELECT unnest(?::VARCHAR[]))")
            self.params.append(list(value))
        return self

    def between(self, column: str, since: When, until: When) -> Where:
        """``since`` <= ``column`` < ``until`` (either bound optional)."""
        if since is not None:
            self.terms.append(f"{column} >= ?")
            self.params.append(utc(since).to_pydatetime())  # type: ignore[union-attr]
        if until is not None:
            self.terms.append(f"{column} < ?")
            self.params.append(utc(until).to_pydatetime())  # type: ignore[union-attr]
        return self

    def sql(self) -> str:
        return f"WHERE {' AND '.join(self.terms)}" if self.terms else ""


def query(store: Store, sql: str, params: Sequence[Any] = (), spec: dict[str, str] | None = None
          ) -> pd.DataFrame:
    """Run ``sql`` over the store's tenant; typed by ``spec``, or with times in UTC."""
    with selecting(store) as run:
        frame = run(sql, list(params) or None)
    return typed(frame, spec) if spec is not None else utc_times(frame)


@contextmanager
def selecting(store: Store) -> Iterator[Callable[[str, Sequence[Any] | None], pd.DataFrame]]:
    """``run(sql, params)`` for forge's own SELECTs over this tenant, in one read: on DuckDB
    (the file, the memory store's snapshot) tenant-scoped by ``select``; on PostgreSQL
    translated and run there, scoped by its row-level security (store/postgres/select.py)."""
    if store.dialect == "duckdb":
        with store.reading() as con:
            yield lambda sql, params: select(con, sql, params, store.tenant_id)
        return
    from .store.postgres.select import select_native

    with store.reading() as pg:
        yield lambda sql, params: select_native(pg, sql, params)


def _from_view(store: Store, view: str, spec: dict[str, str], where: Where, order: str
               ) -> pd.DataFrame:
    columns = ", ".join(spec)
    return query(store, f"SELECT {columns} FROM {view} {where.sql()} ORDER BY {order}",
                 where.params, spec)


# ------------------------------------------------------------------------------ the frames


def sessions(store: Store, *, since: When = None, until: When = None,
             ids: Iterable[str] | None = None) -> pd.DataFrame:
    """Live sessions (created in the range; of ``ids`` only, if given), oldest first, with their
    step, token and cost totals
    (of the messages each session wrote; one that has not run yet cost $0) and ``models``: the
    models its answers came from, first used first. ``title`` is the stored one, else — a
    session of a file written before titles were stored, or a fork — the first line of the
    first prompt in its timeline (the same rule, session/title.py)."""
    from .session.title import title_of

    where = Where().between("s.created_at", since, until)
    if ids is not None:  # a page of the server's session list (server/reader.py)
        where.equals("s.session_id", list(ids))
    sql = f"""
        SELECT s.session_id, s.name, s.title, s.agent, s.model, s.directory, s.parent_id,
               s.forked_from_session, s.forked_from_message, s.created_at, s.updated_at,
               s.messages, mm.models, coalesce(c.steps, 0) AS steps,
               coalesce(c.tokens_input, 0) AS tokens_input,
               coalesce(c.tokens_output, 0) AS tokens_output,
               -- nothing spent yet is $0; NULL stays for a price the table does not know
               CASE WHEN c.session_id IS NULL THEN 0 ELSE c.cost END AS cost
        FROM sessions s LEFT JOIN (
            SELECT session_id, count(*) AS steps, sum(tokens_input)::BIGINT AS tokens_input,
                   sum(tokens_output)::BIGINT AS tokens_output, sum(cost) AS cost
            FROM costs GROUP BY session_id
        ) c ON c.session_id = s.session_id
        LEFT JOIN (
            SELECT session_id,
                   string_agg(model, ', ' ORDER BY first_used, model COLLATE "C") AS models
            FROM (SELECT session_id, model, min(created_at) AS first_used FROM message
                  WHERE role = 'assistant' AND model IS NOT NULL GROUP BY session_id, model) u
            GROUP BY session_id
        ) mm ON mm.session_id = s.session_id
        {where.sql()} ORDER BY s.created_at, s.session_id"""
    with selecting(store) as run:
        frame = run(sql, where.params or None)
        untitled = frame["title"].isna() & (frame["messages"] > 0)
        if untitled.any():
            # sessions of a file written before titles were stored, and forks: the same rule
            # over the first message of the timeline, always the person's first prompt
            firsts = run(_FIRST_PROMPTS, [frame["session_id"][untitled].tolist()])
            derived = {sid: title_of(text) for sid, text in
                       zip(firsts["session_id"], firsts["first_prompt"], strict=True)
                       if isinstance(text, str)}
            frame.loc[untitled, "title"] = frame.loc[untitled, "session_id"].map(derived)
    return ReadableFrame.of(typed(frame, SESSIONS), SESSIONS_DISPLAY)


_FIRST_PROMPTS = """
    WITH firsts AS (SELECT session_id, message_id FROM session_message
                    WHERE pos = 0 AND session_id IN (SELECT unnest(?::VARCHAR[])))
    SELECT f.session_id, string_agg(p.data ->> '$.text', chr(10) ORDER BY p.id) FILTER (
               WHERE NOT coalesce(TRY_CAST(p.data ->> '$.synthetic' AS BOOLEAN), false)
           ) AS first_prompt
    FROM firsts f JOIN part p ON p.message_id = f.message_id AND p.type = 'text'
    GROUP BY f.session_id"""


def messages(store: Store, session: Any = None, *, role: OneOrMany = None,
             model: OneOrMany = None, since: When = None, until: When = None) -> pd.DataFrame:
    """Message bodies (of one session: those it wrote), oldest first."""
    where = (Where().equals("session_id", session_id(store, session)).equals("role", role)
             .equals("model", model).between("created_at", since, until))
    # replay_of is a column of the message table (schema step 6), not of the view
    return _from_view(store, _MESSAGES_WITH_REPLAY, MESSAGES, where, "created_at, message_id")


_MESSAGES_WITH_REPLAY = ("(SELECT v.*, m.replay_of FROM messages v JOIN message m "
                         "ON m.tenant_id = v.tenant_id AND m.id = v.message_id) AS mv")


def parts(store: Store, session: Any = None, type: OneOrMany = None, *, since: When = None,
          until: When = None) -> pd.DataFrame:
    """Parts (optionally of some types), in id order; ``data`` holds each one's JSON."""
    where = (Where().equals("session_id", session_id(store, session)).equals("type", type)
             .between("created_at", since, until))
    return _from_view(store, "parts", PARTS, where, "part_id")


def tool_calls(store: Store, session: Any = None, tool: OneOrMany = None,
               state: OneOrMany = None, *, model: OneOrMany = None, since: When = None,
               until: When = None) -> pd.DataFrame:
    """Tool calls with state, duration, input/output sizes and error, oldest first."""
    where = (Where().equals("session_id", session_id(store, session)).equals("tool", tool)
             .equals("state", state).equals("model", model).between("created_at", since, until))
    return _from_view(store, "tool_calls", TOOL_CALLS, where, "part_id")


def costs(store: Store, by: str | Sequence[str] = "session", *, session: Any = None,
          model: OneOrMany = None, since: When = None, until: When = None) -> pd.DataFrame:
    """Tokens and cost summed from the step-finish parts, grouped ``by`` session, day, model,
    agent, cell (notebook + cell id of the prompt) or replayed (steps of replayed turns, at $0,
    beside live ones), or several of them."""
    spec = cost_spec(by)
    keys = [by] if isinstance(by, str) else list(by)
    groups = [g for k in keys for g in COST_KEYS[k]]
    where = (Where().equals("c.session_id", session_id(store, session))
             .equals("c.model", model).between("c.created_at", since, until))
    ordinals = ", ".join(str(i) for i in range(1, len(groups) + 1))
    # names in byte order, as DuckDB sorts them, whatever a PostgreSQL database's collation
    order = ", ".join(f'{expr} COLLATE "C"' if code == "str" else expr
                      for expr, _, code in groups)
    sql = f"""
        SELECT {', '.join(f'{expr} AS {name}' for expr, name, _ in groups)},
               count(*) AS steps, sum(c.tokens_input)::BIGINT AS tokens_input,
               sum(c.tokens_output)::BIGINT AS tokens_output,
               sum(c.tokens_reasoning)::BIGINT AS tokens_reasoning,
               sum(c.tokens_cache_read)::BIGINT AS tokens_cache_read,
               sum(c.tokens_cache_write)::BIGINT AS tokens_cache_write,
               sum(c.cost) AS cost, count(*) - count(c.cost) AS unpriced_steps
        FROM {_costs_source(keys, model)} c
        {"LEFT JOIN sessions s ON s.session_id = c.session_id" if "session" in keys else ""}
        {where.sql()}
        GROUP BY {ordinals} ORDER BY {order}"""
    return query(store, sql, where.params, spec)


def _costs_source(keys: Sequence[str], model: OneOrMany) -> str:
    """What ``costs`` sums: the view, or its part columns alone when nothing grouped or
    filtered is a message's (no join of the messages: ~10× less work at a million parts)."""
    if "replayed" in keys:
        return _COSTS_WITH_REPLAY
    if model is None and set(keys) <= {"session", "day"}:
        return f"({costs_of_parts()})"
    return "costs"


_COSTS_WITH_REPLAY = ("(SELECT k.*, m.replay_of FROM costs k JOIN message m "
                      "ON m.tenant_id = k.tenant_id AND m.id = k.message_id)")


def compactions(store: Store, session: Any = None, *, since: When = None, until: When = None
                ) -> pd.DataFrame:
    """Compactions from their events: when, reason, auto, tokens before/after, boundary."""
    where = (Where().equals("session_id", session_id(store, session))
             .between("created_at", since, until))
    return _from_view(store, "compactions", COMPACTIONS, where, "created_at, event_id")


def context(store: Store, session: Any = None, *, since: When = None, until: When = None
            ) -> pd.DataFrame:
    """Per model call of each timeline: the tokens it was sent and the boundary in force."""
    # the view filtered, not views.for_one_session('context'): measured slower at a million
    # parts (DuckDB pushes this filter through the view's window well; bench_frames.py)
    where = (Where().equals("session_id", session_id(store, session))
             .between("created_at", since, until))
    return _from_view(store, "context", CONTEXT, where, "session_id, step")


def turns(store: Store, session: Any = None, *, since: When = None, until: When = None
          ) -> pd.DataFrame:
    """One row per user message: the prompt, its cell, and what answering it took and cost."""
    where = (Where().equals("session_id", session_id(store, session))
             .between("started_at", since, until))
    return _from_view(store, "turns", TURNS, where, "started_at, message_id")


def history(store: Store, session: Any, include_superseded: bool = False) -> pd.DataFrame:
    """The session's timeline in order, with ``visible_to_model``; messages a compaction
    superseded only with ``include_superseded=True``."""
    sid = session_id(store, session)
    if sid is None:
        raise ValueError("history() needs a session (a Session, an id or a name)")
    where = Where()
    if not include_superseded:
        where.terms.append("visible_to_model")
    # the text of this session's messages only (the view leaves it out: over every timeline
    # it would read every text part). A person's prompt reads as they wrote it: the notes
    # the harness attached to it (the notebook context, synthetic) are left out, while a
    # message the harness wrote alone (compaction's "continue") keeps its text.
    sql = f"""
        WITH h AS (SELECT * FROM ({for_one_session("timeline")}) tl {where.sql()}),
        x AS (
            SELECT message_id,
                   coalesce(
                       string_agg(text, chr(10) || chr(10) ORDER BY part_id) FILTER (
                           WHERE type = 'text'
                             AND NOT coalesce(TRY_CAST(data ->> '$.synthetic' AS BOOLEAN), false)),
                       string_agg(text, chr(10) || chr(10) ORDER BY part_id)
                           FILTER (WHERE type = 'text')) AS text,
                   count(*) FILTER (WHERE type = 'tool') AS tool_calls
            FROM parts
            -- the writers' sessions first (the timeline's own, a fork's parents): a filter
            -- the scan applies before the view's text is extracted, so the read grows with
            -- the session, not with the store (the message ids alone join every part)
            WHERE type IN ('text', 'tool') AND session_id IN (SELECT written_by FROM h)
              AND message_id IN (SELECT message_id FROM h)
            GROUP BY message_id
        )
        SELECT h.*, x.text, coalesce(x.tool_calls, 0) AS tool_calls
        FROM h LEFT JOIN x ON x.message_id = h.message_id ORDER BY h.pos"""
    return ReadableFrame.of(query(store, sql, [sid], HISTORY), HISTORY_DISPLAY)


def events(store: Store, session: Any = None, type: OneOrMany = None, *, since: When = None,
           until: When = None) -> pd.DataFrame:
    """Events (compaction, fork, permissions, abort, recovery, …), oldest first."""
    where = (Where().equals("session_id", session_id(store, session)).equals("type", type)
             .between("created_at", since, until))
    return _from_view(store, "events", EVENTS, where, "event_id")


def sql(store: Store, text: str, params: Sequence[Any] | dict[str, Any] | None = None
        ) -> pd.DataFrame:
    """One read-only SELECT a person wrote, over this tenant's tables and views
    (docs/schema.md). It runs in a DuckDB of its own holding only this tenant's rows
    (store/query/sandbox.py), not on the store: no spelling of a name reaches another tenant."""
    from .store.query.sandbox import tenant_sql

    return utc_times(tenant_sql(store, text, params))
