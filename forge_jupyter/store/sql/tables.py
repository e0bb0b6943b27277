"""The DuckDB schema of a forge-jupyter file, as numbered migration steps (DESIGN §3).

A fresh file runs every step; an older file is brought up to date in one transaction when it
is opened; a file written by a newer forge-jupyter is refused (``SchemaTooNew``). A step is a
historical record: once released it never changes — add a new step instead.

Every table carries ``tenant_id``, and every query of the store filters on it. Ids are global
primary keys, so an id of one tenant can never be overwritten by another (``plan_write``
rejects the collision before the database has to). Timestamps are ``TIMESTAMPTZ`` (kept to the
microsecond); the model's float epoch seconds are converted at the boundary.

Columns hold what people query (part type, tool name and state, tokens, cost, timings, status),
so the common questions need no ``json_extract``; ``part.data`` holds the whole part as JSON,
the form ``model.part_from_json`` reads back.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from ...errors import SchemaTooNew, StoreUnreadable
from .views import CREATE_VIEWS, VIEW_NAMES


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    description: str
    statements: tuple[str, ...]


_TABLES = (
    """
    CREATE TABLE session (
        tenant_id           VARCHAR NOT NULL,
        id                  VARCHAR PRIMARY KEY,
        name                VARCHAR,
        title               VARCHAR,
        agent               VARCHAR NOT NULL,
        model               VARCHAR,
        directory           VARCHAR,
        parent_id           VARCHAR,
        forked_from_session VARCHAR,
        forked_from_message VARCHAR,
        created_at          TIMESTAMPTZ NOT NULL,
        updated_at          TIMESTAMPTZ NOT NULL,
        deleted_at          TIMESTAMPTZ,
        lease_owner         VARCHAR,
        lease_expires       TIMESTAMPTZ,
        -- the timeline's tail, kept with the session so a write needs no scan of the pointers
        timeline_length     INTEGER NOT NULL DEFAULT 0,
        last_message_id     VARCHAR,
        metadata            JSON
    )
    """,
    """
    CREATE TABLE message (
        tenant_id          VARCHAR NOT NULL,
        id                 VARCHAR PRIMARY KEY,
        session_id         VARCHAR NOT NULL,
        role               VARCHAR NOT NULL,
        parent_id          VARCHAR,
        agent              VARCHAR,
        model              VARCHAR,
        provider           VARCHAR,
        status             VARCHAR NOT NULL,
        finish             VARCHAR,
        summary            BOOLEAN NOT NULL,
        error_type         VARCHAR,
        error_message      VARCHAR,
        tokens_input       BIGINT NOT NULL,
        tokens_output      BIGINT NOT NULL,
        tokens_reasoning   BIGINT NOT NULL,
        tokens_cache_read  BIGINT NOT NULL,
        tokens_cache_write BIGINT NOT NULL,
        tokens_estimated   BOOLEAN NOT NULL,
        cost               DOUBLE,
        created_at         TIMESTAMPTZ NOT NULL,
        completed_at       TIMESTAMPTZ,
        origin             JSON,
        metadata           JSON
    )
    """,
    """
    CREATE TABLE part (
        tenant_id          VARCHAR NOT NULL,
        id                 VARCHAR PRIMARY KEY,
        session_id         VARCHAR NOT NULL,
        message_id         VARCHAR NOT NULL,
        type               VARCHAR NOT NULL,
        tool               VARCHAR,
        tool_state         VARCHAR,
        call_id            VARCHAR,
        tokens_input       BIGINT,
        tokens_output      BIGINT,
        tokens_reasoning   BIGINT,
        tokens_cache_read  BIGINT,
        tokens_cache_write BIGINT,
        tokens_estimated   BOOLEAN,
        cost               DOUBLE,
        time_start         TIMESTAMPTZ,
        time_end           TIMESTAMPTZ,
        created_at         TIMESTAMPTZ NOT NULL,
        data               JSON NOT NULL
    )
    """,
    """
    CREATE TABLE session_message (
        tenant_id  VARCHAR NOT NULL,
        session_id VARCHAR NOT NULL,
        pos        INTEGER NOT NULL,
        message_id VARCHAR NOT NULL,
        PRIMARY KEY (tenant_id, session_id, pos)
    )
    """,
    """
    CREATE TABLE event (
        tenant_id  VARCHAR NOT NULL,
        id         VARCHAR PRIMARY KEY,
        session_id VARCHAR,
        type       VARCHAR NOT NULL,
        actor      VARCHAR NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        data       JSON
    )
    """,
    "CREATE TABLE forge_schema (version INTEGER NOT NULL)",
)

_INDEXES = (
    # a message's parts (timeline pages, list_parts); equality lookups only: DuckDB's ART
    # serves those, while ranges over prefixed string ids gain nothing from zone maps
    "CREATE INDEX part_message ON part (message_id)",
    # which timelines point at a message (position, delete's reference check)
    "CREATE INDEX session_message_message ON session_message (message_id)",
    # find_session by name
    "CREATE INDEX session_name ON session (tenant_id, name)",
    "CREATE INDEX event_session ON event (session_id)",
)

# The long-term memory index (store/memory_index.py): the memory folder's files as the index
# last saw them, their chunks (text, line range, embedding) and each chunk's terms with their
# counts, from which BM25 is computed in SQL. ``folder`` is the memory folder's resolved path:
# one tenant may index several folders. No unique constraint: a re-indexed file is deleted and
# inserted again in one transaction, which DuckDB's unique indexes refuse.
MEMORY_INDEX = (
    """
    CREATE TABLE memory_file (
        tenant_id  VARCHAR NOT NULL,
        folder     VARCHAR NOT NULL,
        path       VARCHAR NOT NULL,
        size       BIGINT NOT NULL,
        mtime_ns   BIGINT NOT NULL,
        sha256     VARCHAR NOT NULL,
        file_date  DATE,
        chunks     INTEGER NOT NULL,
        indexed_at TIMESTAMPTZ NOT NULL
    )
    """,
    """
    CREATE TABLE memory_chunk (
        tenant_id   VARCHAR NOT NULL,
        id          VARCHAR PRIMARY KEY,
        folder      VARCHAR NOT NULL,
        path        VARCHAR NOT NULL,
        start_line  INTEGER NOT NULL,
        end_line    INTEGER NOT NULL,
        text        VARCHAR NOT NULL,
        terms       INTEGER NOT NULL,
        file_date   DATE,
        embedding   REAL[],
        embed_model VARCHAR,
        embed_dims  INTEGER
    )
    """,
    """
    CREATE TABLE memory_term (
        tenant_id VARCHAR NOT NULL,
        folder    VARCHAR NOT NULL,
        path      VARCHAR NOT NULL,
        chunk_id  VARCHAR NOT NULL,
        term      VARCHAR NOT NULL,
        tf        INTEGER NOT NULL
    )
    """,
)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "tables", _TABLES),
    Migration(2, "indexes", _INDEXES),
    # the documented views (store/views.py, docs/schema.md); a later change to a view is a
    # new step that drops and recreates it
    Migration(3, "views", CREATE_VIEWS),
    # PostgreSQL's step 4 creates these views there (postgres_views.py); the file has them
    Migration(4, "nothing: the views of step 3 in PostgreSQL's dialect, on PostgreSQL", ()),
    Migration(5, "the long-term memory index", MEMORY_INDEX),
    # a replayed turn's message points at the recorded one it repeats (session/replay.py)
    Migration(6, "message.replay_of", ("ALTER TABLE message ADD COLUMN replay_of VARCHAR",)),
)
LATEST = MIGRATIONS[-1].version

# Tables whose rows belong to a tenant: ``tenant_views`` scopes ad-hoc SQL to one tenant.
TENANT_TABLES: tuple[str, ...] = ("session", "message", "part", "session_message", "event")
# ... and the views over them, each of which keeps ``tenant_id`` as a column for that purpose
TENANT_RELATIONS: tuple[str, ...] = TENANT_TABLES + VIEW_NAMES
# The long-term memory index's tables, also a tenant's rows (not offered to ad-hoc SQL)
MEMORY_TABLES: tuple[str, ...] = ("memory_file", "memory_chunk", "memory_term")

# Column order of the bulk inserts (the appender follows it; see duckdb.py).
SESSION_COLUMNS = (
    "tenant_id", "id", "name", "title", "agent", "model", "directory", "parent_id",
    "forked_from_session", "forked_from_message", "created_at", "updated_at",
    "timeline_length", "last_message_id", "metadata",
)
MESSAGE_COLUMNS = (
    "tenant_id", "id", "session_id", "role", "parent_id", "agent", "model", "provider",
    "status", "finish", "summary", "error_type", "error_message", "tokens_input",
    "tokens_output", "tokens_reasoning", "tokens_cache_read", "tokens_cache_write",
    "tokens_estimated", "cost", "created_at", "completed_at", "origin", "metadata",
    "replay_of",
)
PART_COLUMNS = (
    "tenant_id", "id", "session_id", "message_id", "type", "tool", "tool_state", "call_id",
    "tokens_input", "tokens_output", "tokens_reasoning", "tokens_cache_read",
    "tokens_cache_write", "tokens_estimated", "cost", "time_start", "time_end", "created_at",
    "data",
)
TIMELINE_COLUMNS = ("tenant_id", "session_id", "pos", "message_id")
EVENT_COLUMNS = ("tenant_id", "id", "session_id", "type", "actor", "created_at", "data")


def schema_version(con: duckdb.DuckDBPyConnection, path: str) -> int:
    """The file's schema version; 0 for a file with no tables yet."""
    try:
        row = con.execute("SELECT max(version) FROM forge_schema").fetchone()
    except duckdb.CatalogException:
        row = None
    else:
        if row is None or row[0] is None:
            raise StoreUnreadable(f"{path}: the forge_schema table is empty; the file is damaged")
        return int(row[0])
    others = con.execute(
        "SELECT count(*) FROM duckdb_tables() "
        "WHERE database_name = current_database() AND NOT temporary"
    ).fetchone()
    if others and others[0]:
        raise StoreUnreadable(
            f"{path} is a DuckDB database, but not a forge-jupyter one (it has no forge_schema "
            "table); point forge-jupyter at another file (FORGE_DB) rather than mixing the two"
        )
    return 0


def migrate(con: duckdb.DuckDBPyConnection, path: str, *, target: int = LATEST) -> int:
    """Bring the file to ``target`` in one transaction; returns the version found before."""
    found = schema_version(con, path)
    if found > LATEST:
        raise SchemaTooNew(
            f"{path} was written by a newer forge-jupyter (schema version {found}); this "
            f"forge-jupyter understands schema version {LATEST} at most. Upgrade forge-jupyter "
            "(pip install -U forge-jupyter) to open it."
        )
    if found >= target:
        return found
    con.execute("BEGIN TRANSACTION")
    try:
        for step in MIGRATIONS:
            if found < step.version <= target:
                for statement in step.statements:
                    con.execute(statement)
        con.execute("DELETE FROM forge_schema")
        con.execute("INSERT INTO forge_schema VALUES (?)", [target])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return found


def tenant_views(query: str, tenant_id: str, catalog: str) -> str:
    """``query`` with every tenant table and view shadowed by a CTE holding only
    ``tenant_id``'s rows (a view's body binds to the tables themselves, not to these CTEs,
    which is why each view keeps ``tenant_id`` as a column)."""
    literal = "'" + tenant_id.replace("'", "''") + "'"
    ctes = ", ".join(
        f"{t} AS (SELECT * FROM {catalog}.main.{t} WHERE tenant_id = {literal})"
        for t in TENANT_RELATIONS
    )
    # newlines: a trailing line comment in ``query`` must not swallow the closing parenthesis
    return f"WITH {ctes}\nSELECT * FROM (\n{query}\n) AS q"
