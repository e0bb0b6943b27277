"""The documented SQL views over the raw tables: their text and descriptions (DESIGN §8).

The views are part of the schema (migration step 3), so the file explains itself in any DuckDB
client. A view cannot take a parameter, so every view keeps ``tenant_id`` as a column and the
reader scopes it (sql/scoped.py for forge's own SQL, query/sandbox.py for SQL a person writes).

Each view is written once: SQL both engines read, with the few constructs they spell
differently left to dialect.py (``d.json_text(…)``, ``d.arg_max(…)``, …). The DuckDB file has
them from step 3; the in-memory store loads its rows into a throwaway DuckDB with the same
schema (inmemory/sql.py); PostgreSQL has them, ``security_invoker``, from its step 4 (for
psql: forge's own DataFrames run their SQL in PostgreSQL, and ``forge.sql`` runs on a DuckDB
copy of the tenant's rows).
Descriptions here feed ``docs/schema.md`` (``scripts/gen_schema_docs.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .dialect import DUCKDB, SPELLINGS, Dialect, Spelling


@dataclass(frozen=True, slots=True)
class View:
    name: str
    description: str
    body: Callable[[Spelling], str]  # the SELECT, given how the engine spells what differs
    # a query for the generated docs, run against a live database: SQL both DuckDB and
    # PostgreSQL read alike (no GROUP BY ALL, no round() of a double), so it runs as shown
    # in forge.sql and in psql (tests/frames/test_schema_examples.py runs it in psql)
    example: str

    def render(self, dialect: Dialect) -> str:
        """The view's SELECT in ``dialect``."""
        return self.body(SPELLINGS[dialect])

    @property
    def sql(self) -> str:
        """The view's SELECT in DuckDB's SQL (the file's, and every DataFrame's)."""
        return self.body(DUCKDB)

    def create_in(self, dialect: Dialect) -> str:
        # on PostgreSQL, security_invoker: the tables' row-level security applies to whoever
        # reads the view, not to its owner
        invoker = " WITH (security_invoker = true)" if dialect == "postgresql" else ""
        return f"CREATE VIEW {self.name}{invoker} AS\n{self.render(dialect).strip()}"

    @property
    def create(self) -> str:
        return self.create_in("duckdb")


# A successful compaction summary (session/view.py ``is_summary``), as a predicate on messages.
_IS_SUMMARY = (
    "{m}.role = 'assistant' AND {m}.summary AND {m}.status = 'completed' "
    "AND {m}.finish IS NOT NULL AND {m}.error_type IS NULL"
)

def _timeline(d: Spelling, session: str | None = None) -> str:
    """The ``timeline`` view's SELECT; with ``session`` (a placeholder), that session's alone:
    the filter sits inside, before the timeline is numbered and marked, so reading one
    session reads that session's rows, not every session's of the store."""
    one = f"\n    WHERE sm.session_id = {session}" if session else ""
    return f"""
WITH t AS (
    SELECT sm.tenant_id, sm.session_id, sm.pos, sm.message_id, m.session_id AS written_by,
           m.role, m.parent_id, m.agent, m.model, m.status, m.finish, m.summary, m.error_type,
           m.created_at, m.completed_at, m.tokens_input, m.tokens_output, m.cost
    FROM session_message sm
    JOIN message m ON m.tenant_id = sm.tenant_id AND m.id = sm.message_id{one}
), request AS (
    SELECT tenant_id, message_id, {d.json_text('data', 'tail_start')} AS tail_start
    FROM part WHERE type = 'compaction'
), boundary AS (
    -- filterCompacted (session/view.py): a summary that succeeded, answering a user message
    -- that carries a compaction part, earlier in the same timeline; the model's view then
    -- starts at that request, or further back at the tail it kept verbatim
    SELECT s.tenant_id, s.session_id, s.pos, r.pos AS request_pos,
           CASE WHEN q.tail_start IS NULL OR q.tail_start = r.message_id THEN r.pos
                ELSE coalesce(k.pos, 0) END AS start_pos
    FROM t s
    JOIN t r ON r.tenant_id = s.tenant_id AND r.session_id = s.session_id
            AND r.message_id = s.parent_id AND r.pos < s.pos AND r.role = 'user'
    JOIN request q ON q.tenant_id = r.tenant_id AND q.message_id = r.message_id
    LEFT JOIN t k ON k.tenant_id = r.tenant_id AND k.session_id = r.session_id
            AND k.message_id = q.tail_start AND k.pos < r.pos
    WHERE {_IS_SUMMARY.format(m="s")}
), marked AS (
    SELECT t.*, b.request_pos, b.start_pos
    FROM t LEFT JOIN boundary b
        ON b.tenant_id = t.tenant_id AND b.session_id = t.session_id AND b.pos = t.pos
)
SELECT m.tenant_id, m.session_id, m.pos, m.message_id, m.written_by, m.role, m.parent_id,
       m.agent, m.model, m.status, m.finish, m.summary, m.created_at, m.completed_at,
       m.tokens_input, m.tokens_output, m.cost, m.request_pos IS NOT NULL AS is_boundary,
       max(m.request_pos) OVER before AS compaction_pos,
       count(m.request_pos) OVER before AS compactions,
       coalesce({d.arg_max('m.start_pos', 'm.request_pos', over='before')}, 0) AS view_start,
       m.pos >= coalesce({d.arg_max('m.start_pos', 'm.request_pos', over='whole')}, 0) AS visible_to_model
FROM marked m
WINDOW before AS (PARTITION BY m.tenant_id, m.session_id ORDER BY m.pos
                  ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
       whole AS (PARTITION BY m.tenant_id, m.session_id)
"""


def _context(d: Spelling) -> str:
    """The ``context`` view's SELECT."""
    return """
SELECT t.tenant_id, t.session_id,
       row_number() OVER (PARTITION BY t.tenant_id, t.session_id ORDER BY t.pos, p.id) AS step,
       t.pos, t.message_id, p.id AS part_id, p.created_at, t.agent, t.model,
       t.summary AS summarizing, p.tokens_input, p.tokens_output, p.tokens_cache_read,
       p.tokens_cache_write, p.cost, t.compactions, t.compaction_pos, t.view_start
FROM timeline t
JOIN part p ON p.tenant_id = t.tenant_id AND p.message_id = t.message_id
           AND p.type = 'step-finish'
"""


def _cost_columns(d: Spelling) -> tuple[tuple[str, str], ...]:
    """The ``costs`` view's columns in order, each with where it comes from: the step-finish
    part (``p``), its message (``a``) or the prompt that caused it (``u``)."""
    return (
        ("p.tenant_id", "p"), ("p.id AS part_id", "p"), ("p.session_id", "p"),
        ("p.message_id", "p"), ("p.created_at", "p"), ("a.agent", "a"), ("a.model", "a"),
        ("a.provider", "a"), (f"{d.json_text('p.data', 'reason')} AS finish", "p"),
        ("p.tokens_input", "p"), ("p.tokens_output", "p"), ("p.tokens_reasoning", "p"),
        ("p.tokens_cache_read", "p"), ("p.tokens_cache_write", "p"),
        ("p.tokens_estimated", "p"), ("p.cost", "p"), ("a.parent_id AS user_message_id", "a"),
        (f"{d.json_text('u.origin', 'notebook')} AS notebook", "u"),
        (f"{d.json_text('u.origin', 'cell_id')} AS cell_id", "u"),
        (f"{d.json_bigint('u.origin', 'execution_count')} AS execution_count", "u"),
    )


def _costs(d: Spelling, parts_only: bool = False) -> str:
    """The ``costs`` view's SELECT; ``parts_only``: its columns that the step-finish part
    holds, read without joining the messages (a sum by session or day needs no more)."""
    columns = [c for c, source in _cost_columns(d) if not parts_only or source == "p"]
    sep = ",\n       "
    joins = "" if parts_only else (
        "JOIN message a ON a.tenant_id = p.tenant_id AND a.id = p.message_id\n"
        "LEFT JOIN message u ON u.tenant_id = a.tenant_id AND u.id = a.parent_id\n")
    return f"""
SELECT {sep.join(columns)}
FROM part p
{joins}WHERE p.type = 'step-finish'
"""


def costs_of_parts(dialect: Dialect = "duckdb") -> str:
    """The ``costs`` view's part columns alone (``_costs``): for frames.costs' sums that
    group and filter by nothing a message holds."""
    return _costs(SPELLINGS[dialect], parts_only=True)


VIEWS: tuple[View, ...] = (
    View(
        "sessions",
        "Live sessions (deleted ones are tombstones in `session` and are left out); "
        "`messages` is the length of the session's timeline.",
        lambda d: """
SELECT s.tenant_id, s.id AS session_id, s.name, s.title, s.agent, s.model, s.directory,
       s.parent_id, s.forked_from_session, s.forked_from_message, s.created_at, s.updated_at,
       s.timeline_length AS messages
FROM session s
WHERE s.deleted_at IS NULL
""",
        "SELECT name, agent, messages FROM sessions ORDER BY created_at",
    ),
    View(
        "messages",
        "Message bodies, one row each (a fork shares bodies, it does not copy them; "
        "`session_id` is the session that wrote it); `duration_s` is an assistant message's "
        "time to finish; `notebook`/`cell_id`/`execution_count` come from the user message's "
        "origin, for an assistant message from its parent's.",
        lambda d: f"""
SELECT m.tenant_id, m.id AS message_id, m.session_id, m.role, m.parent_id, m.agent, m.model,
       m.provider, m.status, m.finish, m.summary, m.error_type, m.error_message,
       m.tokens_input, m.tokens_output, m.tokens_reasoning, m.tokens_cache_read,
       m.tokens_cache_write, m.tokens_estimated, m.cost, m.created_at, m.completed_at,
       CASE WHEN m.role = 'assistant'
            THEN (epoch_us(m.completed_at) - epoch_us(m.created_at)) / 1e6 END AS duration_s,
       {d.json_text('coalesce(m.origin, u.origin)', 'notebook')} AS notebook,
       {d.json_text('coalesce(m.origin, u.origin)', 'cell_id')} AS cell_id,
       {d.json_bigint('coalesce(m.origin, u.origin)', 'execution_count')} AS execution_count
FROM message m
LEFT JOIN message u ON u.tenant_id = m.tenant_id AND u.id = m.parent_id
""",
        "SELECT role, status, count(*) AS n FROM messages GROUP BY role, status\n"
        "ORDER BY role, status",
    ),
    View(
        "parts",
        "Every part, with its text (text and reasoning parts) and its whole JSON form in `data`.",
        lambda d: f"""
SELECT p.tenant_id, p.id AS part_id, p.session_id, p.message_id, p.type,
       CASE WHEN p.type IN ('text', 'reasoning') THEN {d.json_text('p.data', 'text')} END AS text,
       p.tool, p.tool_state, p.call_id, p.tokens_input, p.tokens_output, p.tokens_reasoning,
       p.tokens_cache_read, p.tokens_cache_write, p.tokens_estimated, p.cost,
       p.time_start, p.time_end, p.created_at, p.data
FROM part p
""",
        "SELECT type, count(*) AS n FROM parts GROUP BY type ORDER BY n DESC, type",
    ),
    View(
        "tool_calls",
        "One row per tool call (a `tool` part in its latest state): duration, the sizes of "
        "input and output in bytes, the error; `agent` and `model` of the calling message.",
        lambda d: f"""
SELECT p.tenant_id, p.id AS part_id, p.session_id, p.message_id, p.call_id, p.tool,
       p.tool_state AS state, m.agent, m.model, p.time_start, p.time_end,
       (epoch_us(p.time_end) - epoch_us(p.time_start)) / 1e6 AS duration_s,
       p.j[1] AS input, {d.strlen('p.j[1]')} AS input_bytes, {d.strlen('p.j[2]')} AS output_bytes,
       p.j[3] AS error, p.j[4] AS title, p.created_at
FROM (
    SELECT *, {d.json_texts('data', ('input', 'output', 'error', 'title'))} AS j
    FROM part WHERE type = 'tool'
) p
JOIN message m ON m.tenant_id = p.tenant_id AND m.id = p.message_id
""",
        "SELECT tool, state, count(*) AS calls, max(duration_s) AS slowest_s\n"
        "FROM tool_calls GROUP BY tool, state ORDER BY tool, state",
    ),
    View(
        "costs",
        "One row per model call (a `step-finish` part): its tokens and cost (NULL where the "
        "price table does not know the model), with the agent, model and the notebook cell "
        "of the prompt that caused it. Sum it by whatever you need.",
        _costs,
        "SELECT model, count(*) AS steps, sum(tokens_input) AS tokens_in,\n"
        "       sum(tokens_output) AS tokens_out, sum(cost) AS cost\n"
        "FROM costs GROUP BY model ORDER BY model",
    ),
    View(
        "turns",
        "One row per user message: what it asked (`kind` prompt, synthetic or compaction), "
        "the notebook cell it came from, and what answering it took and cost.",
        lambda d: f"""
WITH answer AS (
    SELECT tenant_id, parent_id, count(*) AS assistant_messages,
           max(completed_at) AS finished_at, {d.arg_max('status', 'id')} AS status
    FROM message WHERE role = 'assistant' AND parent_id IS NOT NULL
    GROUP BY tenant_id, parent_id
), work AS (
    SELECT a.tenant_id, a.parent_id,
           count(*) FILTER (WHERE p.type = 'step-finish') AS steps,
           count(*) FILTER (WHERE p.type = 'tool') AS tool_calls,
           count(*) FILTER (WHERE p.type = 'tool' AND p.tool_state = 'error') AS tool_errors,
           sum(p.tokens_input)::BIGINT AS tokens_input,
           sum(p.tokens_output)::BIGINT AS tokens_output,
           sum(p.tokens_reasoning)::BIGINT AS tokens_reasoning,
           sum(p.tokens_cache_read)::BIGINT AS tokens_cache_read,
           sum(p.tokens_cache_write)::BIGINT AS tokens_cache_write,
           sum(p.cost) AS cost
    FROM part p JOIN message a ON a.tenant_id = p.tenant_id AND a.id = p.message_id
    WHERE a.role = 'assistant' AND p.type IN ('step-finish', 'tool')
    GROUP BY a.tenant_id, a.parent_id
), asked AS (
    SELECT p.tenant_id, p.message_id,
           string_agg({d.json_text('p.data', 'text')}, chr(10) || chr(10) ORDER BY p.id)
               FILTER (WHERE p.type = 'text') AS prompt,
           bool_or(p.type = 'compaction') AS compaction,
           bool_and(coalesce({d.json_boolean('p.data', 'synthetic')}, false))
               FILTER (WHERE p.type = 'text') AS synthetic
    FROM part p JOIN message u ON u.tenant_id = p.tenant_id AND u.id = p.message_id
    WHERE u.role = 'user' AND p.type IN ('text', 'compaction')
    GROUP BY p.tenant_id, p.message_id
)
SELECT u.tenant_id, u.id AS message_id, u.session_id,
       CASE WHEN q.compaction THEN 'compaction' WHEN q.synthetic THEN 'synthetic'
            ELSE 'prompt' END AS kind,
       q.prompt, {d.json_text('u.origin', 'notebook')} AS notebook, {d.json_text('u.origin', 'cell_id')} AS cell_id,
       {d.json_bigint('u.origin', 'execution_count')} AS execution_count,
       u.created_at AS started_at, a.finished_at,
       (epoch_us(a.finished_at) - epoch_us(u.created_at)) / 1e6 AS duration_s,
       coalesce(a.assistant_messages, 0) AS assistant_messages, a.status,
       coalesce(w.steps, 0) AS steps, coalesce(w.tool_calls, 0) AS tool_calls,
       coalesce(w.tool_errors, 0) AS tool_errors, coalesce(w.tokens_input, 0) AS tokens_input,
       coalesce(w.tokens_output, 0) AS tokens_output,
       coalesce(w.tokens_reasoning, 0) AS tokens_reasoning,
       coalesce(w.tokens_cache_read, 0) AS tokens_cache_read,
       coalesce(w.tokens_cache_write, 0) AS tokens_cache_write, w.cost
FROM message u
LEFT JOIN answer a ON a.tenant_id = u.tenant_id AND a.parent_id = u.id
LEFT JOIN work w ON w.tenant_id = u.tenant_id AND w.parent_id = u.id
LEFT JOIN asked q ON q.tenant_id = u.tenant_id AND q.message_id = u.id
WHERE u.role = 'user'
""",
        "SELECT kind, left(prompt, 30) AS prompt, steps, tool_calls, tool_errors, status\n"
        "FROM turns ORDER BY started_at",
    ),
    View(
        "timeline",
        "Each session's timeline in order (`pos`), forks included: the message at each "
        "position (`written_by`: the session that wrote it; its text is in `parts`), "
        "whether it is a compaction boundary (`is_boundary`: a summary that succeeded), the "
        "boundary in force when it was written (`compaction_pos`: the "
        "position of the compaction request; `view_start`: where the model's view began) "
        "and whether the model still sees it (`visible_to_model`; false for superseded "
        "messages, which stay stored and readable).",
        _timeline,
        "SELECT pos, role, summary, is_boundary, compaction_pos, visible_to_model\n"
        "FROM timeline WHERE session_id = (SELECT session_id FROM compactions LIMIT 1)\n"
        "ORDER BY pos",
    ),
    View(
        "context",
        "What the model saw at each step: one row per model call in a session's timeline, "
        "numbered (`step`), with the tokens it was sent (`tokens_input`, cache reads "
        "included) and the compaction boundary in force (`compactions` so far, "
        "`compaction_pos`, `view_start`); `summarizing` marks the calls that wrote a summary.",
        _context,
        "SELECT step, tokens_input, summarizing, compactions, compaction_pos\n"
        "FROM context WHERE session_id = (SELECT session_id FROM compactions LIMIT 1)\n"
        "ORDER BY step",
    ),
    View(
        "compactions",
        "One row per compaction (the `compaction` events): when, why, automatic or asked "
        "for, whether the summary is extractive (the summarizing call failed), the token "
        "estimates before and after, and the boundary's position in the timeline.",
        lambda d: f"""
SELECT e.tenant_id, e.id AS event_id, e.session_id, e.created_at, e.actor,
       {d.json_text('e.data', 'reason')} AS reason, {d.json_boolean('e.data', 'auto')} AS auto,
       {d.json_boolean('e.data', 'extractive')} AS extractive,
       {d.json_bigint('e.data', 'tokens_before')} AS tokens_before,
       {d.json_bigint('e.data', 'tokens_after')} AS tokens_after,
       {d.json_text('e.data', 'request_message_id')} AS request_message_id,
       {d.json_text('e.data', 'summary_message_id')} AS summary_message_id,
       {d.json_text('e.data', 'tail_start')} AS tail_start, sm.pos AS boundary_pos
FROM event e
LEFT JOIN session_message sm ON sm.tenant_id = e.tenant_id AND sm.session_id = e.session_id
                            AND sm.message_id = {d.json_text('e.data', 'request_message_id')}
WHERE e.type = 'compaction'
""",
        "SELECT reason, auto, extractive, tokens_before, tokens_after, boundary_pos\n"
        "FROM compactions ORDER BY created_at",
    ),
    View(
        "events",
        "What changed a session's shape (compaction, fork, permission asked/answered/denied, "
        "abort, recovery, import, deletion, cleanup), oldest first by `event_id`.",
        lambda d: """
SELECT e.tenant_id, e.id AS event_id, e.session_id, e.type, e.actor, e.created_at, e.data
FROM event e
""",
        "SELECT type, actor, count(*) AS n FROM events GROUP BY type, actor\n"
        "ORDER BY type, actor",
    ),
)

VIEW_NAMES: tuple[str, ...] = tuple(v.name for v in VIEWS)
CREATE_VIEWS: tuple[str, ...] = tuple(v.create for v in VIEWS)



def for_one_session(name: str, dialect: Dialect = "duckdb") -> str:
    """The SELECT of the view ``name`` restricted to one session, given as the first ``?``
    parameter: what forge's own per-session reads of the timeline use (frames.history, the
    server's history page) in place of filtering the view, which numbers and marks every
    session's timeline before the filter applies. (``context`` filtered as a view measured
    faster: DuckDB pushes its filter through well.)"""
    if name == "timeline":
        return _timeline(SPELLINGS[dialect], "?")
    raise KeyError(f"no per-session form of the view {name!r}")


def view(name: str) -> View:
    for v in VIEWS:
        if v.name == name:
            return v
    raise ValueError(f"no view named {name!r}; the views are: {', '.join(VIEW_NAMES)}")


def create_views(dialect: Dialect) -> tuple[str, ...]:
    """The statements that create every view in ``dialect``."""
    return tuple(v.create_in(dialect) for v in VIEWS)
