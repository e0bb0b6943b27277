"""Every table of a forge-jupyter store, declared once: columns, types, constraints, indexes,
and the migration step each appeared in (DESIGN §3). The DuckDB file's DDL (duckdb/schema.py)
and PostgreSQL's (postgres/schema.py) are both rendered from this one declaration
(``ddl(dialect, version)``); only what one engine alone has — PostgreSQL's row-level security,
a function DuckDB has built in — is written in that engine's schema module.

A step is a historical record: once released, what a step creates never changes. A new column
is declared with ``since`` = the next step, which both dialects then render as an
``ALTER TABLE … ADD COLUMN`` for files made before it and as part of nothing else (a table
made at step 1 is made with its step-1 columns, then altered: every file ends up the same).

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
from typing import Literal

from .dialect import Dialect
from .views import VIEW_NAMES

ColumnType = Literal["id", "text", "integer", "bigint", "boolean", "double", "timestamp",
                     "json", "date", "real[]"]

# Each type as each engine spells it. Ids sort by their bytes on both: DuckDB's VARCHAR
# does; PostgreSQL's text does under the "C" collation, whatever the database's locale.
TYPES: dict[Dialect, dict[ColumnType, str]] = {
    "duckdb": {"id": "VARCHAR", "text": "VARCHAR", "integer": "INTEGER", "bigint": "BIGINT",
               "boolean": "BOOLEAN", "double": "DOUBLE", "timestamp": "TIMESTAMPTZ",
               "json": "JSON", "date": "DATE", "real[]": "REAL[]"},
    "postgresql": {"id": 'text COLLATE "C"', "text": "text", "integer": "integer",
                   "bigint": "bigint", "boolean": "boolean", "double": "double precision",
                   "timestamp": "timestamptz", "json": "json", "date": "date",
                   "real[]": "real[]"},
}


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    description: str
    statements: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: ColumnType
    not_null: bool = False
    primary_key: bool = False
    default: str | None = None
    since: int = 1  # the migration step that added it
    written: bool = True  # part of the bulk inserts (``Table.written``); else set by UPDATEs

    def render(self, dialect: Dialect) -> str:
        out = f"{self.name} {TYPES[dialect][self.type]}"
        if self.primary_key:
            out += " PRIMARY KEY"
        if self.not_null:
            out += " NOT NULL"
        if self.default is not None:
            out += f" DEFAULT {self.default}"
        return out


@dataclass(frozen=True, slots=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()  # a composite key; a single one is the column's own
    since: int = 1

    def columns_at(self, version: int) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if c.since <= version)

    @property
    def written(self) -> tuple[str, ...]:
        """The columns the bulk inserts give, in the table's order (the appender's)."""
        return tuple(c.name for c in self.columns if c.written)

    def create(self, dialect: Dialect) -> str:
        lines = [c.render(dialect) for c in self.columns if c.since <= self.since]
        if self.primary_key:
            lines.append(f"PRIMARY KEY ({', '.join(self.primary_key)})")
        return f"CREATE TABLE {self.name} (\n    " + ",\n    ".join(lines) + "\n)"


@dataclass(frozen=True, slots=True)
class Index:
    """An index, per engine: a column list where it has one, None where it has none.
    PostgreSQL's lead with ``tenant_id`` (its row-level security filters every query on
    it); DuckDB's ART serves equality lookups, so there most need no tenant prefix."""

    name: str
    table: str
    since: int
    duckdb: tuple[str, ...] | None
    postgresql: tuple[str, ...] | None
    unique: bool = False

    def create(self, dialect: Dialect) -> str | None:
        columns = self.duckdb if dialect == "duckdb" else self.postgresql
        if columns is None:
            return None
        unique = "UNIQUE " if self.unique else ""
        return f"CREATE {unique}INDEX {self.name} ON {self.table} ({', '.join(columns)})"


def _c(name: str, type: ColumnType, *flags: str, since: int = 1, written: bool = True,
       default: str | None = None) -> Column:
    """A column; ``flags``: "not null", "key" (the primary key)."""
    return Column(name, type, not_null="not null" in flags, primary_key="key" in flags,
                  default=default, since=since, written=written)


NN = "not null"
KEY = "key"
TABLES: tuple[Table, ...] = (
    Table("session", (
        _c("tenant_id", "id", NN), _c("id", "id", KEY), _c("name", "text"),
        _c("title", "text"), _c("agent", "text", NN), _c("model", "text"),
        _c("directory", "text"), _c("parent_id", "id"), _c("forked_from_session", "id"),
        _c("forked_from_message", "id"), _c("created_at", "timestamp", NN),
        _c("updated_at", "timestamp", NN),
        # a tombstone and the runner lease: set by their own UPDATEs, not by the inserts
        _c("deleted_at", "timestamp", written=False), _c("lease_owner", "text", written=False),
        _c("lease_expires", "timestamp", written=False),
        # the timeline's tail, kept with the session so a write needs no scan of the pointers
        _c("timeline_length", "integer", NN, default="0"), _c("last_message_id", "id"),
        _c("metadata", "json"),
    )),
    Table("message", (
        _c("tenant_id", "id", NN), _c("id", "id", KEY), _c("session_id", "id", NN),
        _c("role", "text", NN), _c("parent_id", "id"), _c("agent", "text"),
        _c("model", "text"), _c("provider", "text"), _c("status", "text", NN),
        _c("finish", "text"), _c("summary", "boolean", NN), _c("error_type", "text"),
        _c("error_message", "text"), _c("tokens_input", "bigint", NN),
        _c("tokens_output", "bigint", NN), _c("tokens_reasoning", "bigint", NN),
        _c("tokens_cache_read", "bigint", NN), _c("tokens_cache_write", "bigint", NN),
        _c("tokens_estimated", "boolean", NN), _c("cost", "double"),
        _c("created_at", "timestamp", NN), _c("completed_at", "timestamp"),
        _c("origin", "json"), _c("metadata", "json"),
        # a replayed turn's message points at the recorded one it repeats (session/replay.py)
        _c("replay_of", "id", since=6),
    )),
    Table("part", (
        _c("tenant_id", "id", NN), _c("id", "id", KEY), _c("session_id", "id", NN),
        _c("message_id", "id", NN), _c("type", "text", NN), _c("tool", "text"),
        _c("tool_state", "text"), _c("call_id", "text"), _c("tokens_input", "bigint"),
        _c("tokens_output", "bigint"), _c("tokens_reasoning", "bigint"),
        _c("tokens_cache_read", "bigint"), _c("tokens_cache_write", "bigint"),
        _c("tokens_estimated", "boolean"), _c("cost", "double"),
        _c("time_start", "timestamp"), _c("time_end", "timestamp"),
        _c("created_at", "timestamp", NN), _c("data", "json", NN),
    )),
    Table("session_message", (
        _c("tenant_id", "id", NN), _c("session_id", "id", NN), _c("pos", "integer", NN),
        _c("message_id", "id", NN),
    ), primary_key=("tenant_id", "session_id", "pos")),
    Table("event", (
        _c("tenant_id", "id", NN), _c("id", "id", KEY), _c("session_id", "id"),
        _c("type", "text", NN), _c("actor", "text", NN), _c("created_at", "timestamp", NN),
        _c("data", "json"),
    )),
    Table("forge_schema", (_c("version", "integer", NN),)),
    # The long-term memory index (store/sql/memory_index.py): the memory folder's files as the
    # index last saw them, their chunks (text, line range, embedding) and each chunk's terms
    # with their counts, from which BM25 is computed in SQL. ``folder`` is the memory folder's
    # resolved path: one tenant may index several folders. No unique constraint in DuckDB: a
    # re-indexed file is deleted and inserted again in one transaction, which DuckDB's unique
    # indexes refuse.
    Table("memory_file", (
        _c("tenant_id", "id", NN), _c("folder", "text", NN), _c("path", "text", NN),
        _c("size", "bigint", NN), _c("mtime_ns", "bigint", NN), _c("sha256", "text", NN),
        _c("file_date", "date"), _c("chunks", "integer", NN),
        _c("indexed_at", "timestamp", NN),
    ), since=5),
    Table("memory_chunk", (
        _c("tenant_id", "id", NN), _c("id", "id", KEY), _c("folder", "text", NN),
        _c("path", "text", NN), _c("start_line", "integer", NN),
        _c("end_line", "integer", NN), _c("text", "text", NN), _c("terms", "integer", NN),
        _c("file_date", "date"), _c("embedding", "real[]"), _c("embed_model", "text"),
        _c("embed_dims", "integer"),
    ), since=5),
    Table("memory_term", (
        _c("tenant_id", "id", NN), _c("folder", "text", NN), _c("path", "text", NN),
        _c("chunk_id", "id", NN), _c("term", "text", NN), _c("tf", "integer", NN),
    ), since=5),
)

INDEXES: tuple[Index, ...] = (
    # a message's parts (timeline pages, list_parts); equality lookups only
    Index("part_message", "part", 2, ("message_id",), ("tenant_id", "message_id")),
    # which timelines point at a message (position, delete's reference check)
    Index("session_message_message", "session_message", 2, ("message_id",),
          ("tenant_id", "message_id")),
    # find_session by name
    Index("session_name", "session", 2, ("tenant_id", "name"), ("tenant_id", "name")),
    Index("event_session", "event", 2, ("session_id",), ("tenant_id", "session_id")),
    Index("message_tenant", "message", 2, None, ("tenant_id", "session_id")),
    Index("event_tenant_id", "event", 2, None, ("tenant_id", "id")),
    Index("session_tenant_id", "session", 2, None, ("tenant_id", "id")),
    # unique: two hosts indexing one file at once cannot both insert it (the second is
    # refused, and indexes it again at its next sync); DuckDB's writers take turns anyway
    Index("memory_file_path", "memory_file", 5, None, ("tenant_id", "folder", "path"),
          unique=True),
    Index("memory_chunk_path", "memory_chunk", 5, None, ("tenant_id", "folder", "path")),
    Index("memory_term_term", "memory_term", 5, None, ("tenant_id", "folder", "term")),
    Index("memory_term_path", "memory_term", 5, None, ("tenant_id", "folder", "path")),
)


def ddl(dialect: Dialect, version: int, *, tables: tuple[Table, ...] = TABLES,
        indexes: tuple[Index, ...] = INDEXES) -> tuple[str, ...]:
    """What step ``version`` of the declaration does in ``dialect``: the tables it makes, the
    columns it adds to older tables, then its indexes."""
    out = [t.create(dialect) for t in tables if t.since == version]
    out += [f"ALTER TABLE {t.name} ADD COLUMN {c.render(dialect)}"
            for t in tables if t.since < version for c in t.columns if c.since == version]
    out += [s for i in indexes if i.since == version if (s := i.create(dialect)) is not None]
    return tuple(out)


def declared_steps(tables: tuple[Table, ...] = TABLES,
                   indexes: tuple[Index, ...] = INDEXES) -> set[int]:
    """Every step the declaration names (each dialect's migrations must have all of them)."""
    return ({t.since for t in tables} | {c.since for t in tables for c in t.columns}
            | {i.since for i in indexes})


BY_NAME: dict[str, Table] = {t.name: t for t in TABLES}
LATEST = 7  # the newest step (duckdb/schema.py and postgres/schema.py each list all of them)

# Tables whose rows belong to a tenant: ``tenant_views`` scopes ad-hoc SQL to one tenant.
TENANT_TABLES: tuple[str, ...] = ("session", "message", "part", "session_message", "event")
# ... and the views over them, each of which keeps ``tenant_id`` as a column for that purpose
TENANT_RELATIONS: tuple[str, ...] = TENANT_TABLES + VIEW_NAMES
# The long-term memory index's tables, also a tenant's rows (not offered to ad-hoc SQL)
MEMORY_TABLES: tuple[str, ...] = ("memory_file", "memory_chunk", "memory_term")
# The memory index's DDL in DuckDB (the in-memory store makes it in a scratch database)
MEMORY_INDEX: tuple[str, ...] = ddl("duckdb", 5)

# Column order of the bulk inserts (the appender follows it; see duckdb/store.py).
SESSION_COLUMNS = BY_NAME["session"].written
MESSAGE_COLUMNS = BY_NAME["message"].written
PART_COLUMNS = BY_NAME["part"].written
TIMELINE_COLUMNS = BY_NAME["session_message"].written
EVENT_COLUMNS = BY_NAME["event"].written


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
