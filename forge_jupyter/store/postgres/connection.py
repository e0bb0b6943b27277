"""A psycopg 3 connection that speaks the dialect of the shared queries (``sql/reads``,
``sql/writes``, ``sql/store``), so the PostgreSQL store runs them as they are written.

The differences are few and mechanical, translated once per query text:

- placeholders: ``?`` becomes ``%s`` and ``$name`` becomes ``%(name)s`` (a literal ``%`` is
  doubled);
- ``rowid`` (DuckDB's row address) becomes ``ctid`` (PostgreSQL's);
- the appender becomes one ``INSERT`` per table, its rows sent with ``executemany`` (psycopg
  pipelines them: one round trip); ``COPY FROM`` is refused on a table with row-level security;
- a result's column types are named as DuckDB names them, for ``trusted.check_description``;
- ``json`` columns arrive as their text, as DuckDB gives them (the codecs parse them).

Everything else — ``epoch_us``, ``unnest(?::VARCHAR[])``, ``= ANY(?)`` with a list — is
either common SQL or defined by the schema (``postgres.schema``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import psycopg
from psycopg.types.string import TextLoader

_NAMED = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_ROWID = re.compile(r"\browid\b")

# PostgreSQL type oids -> the names DuckDB gives the same columns (rows_to_models.py compares them)
_TYPE_NAMES = {
    16: "BOOLEAN", 20: "BIGINT", 21: "SMALLINT", 23: "INTEGER", 25: "VARCHAR", 1043: "VARCHAR",
    700: "FLOAT", 701: "DOUBLE", 114: "JSON", 1184: "TIMESTAMP WITH TIME ZONE",
}


@lru_cache(maxsize=512)
def translate(query: str) -> str:
    """A shared query in psycopg's placeholder style, with PostgreSQL's row address."""
    query = _ROWID.sub("ctid", query.replace("%", "%%"))
    return _NAMED.sub(r"%(\1)s", query.replace("?", "%s"))


def prepare(conn: psycopg.Connection) -> None:
    """A new pooled connection: ``json`` read as text, as the row codecs expect it."""
    conn.adapters.register_loader("json", TextLoader)


class PgResult:
    """What ``execute`` returns: the DB-API fetches, and DuckDB-named column types."""

    __slots__ = ("_cur",)

    def __init__(self, cur: psycopg.Cursor[Any]):
        self._cur = cur

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._cur.fetchone()

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._cur.fetchall()

    @property
    def description(self) -> list[tuple[str, str]] | None:
        columns = self._cur.description
        if columns is None:
            return None
        return [(c.name, _TYPE_NAMES.get(c.type_code, str(c.type_code))) for c in columns]


class _Appender:
    __slots__ = ("_cur", "_sql")

    def __init__(self, cur: psycopg.Cursor[Any], sql: str):
        self._cur = cur
        self._sql = sql

    def append_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self._cur.executemany(self._sql, rows)  # type: ignore[arg-type]  # our own SQL


class PgConnection:
    """One pooled connection inside a transaction the store opened."""

    __slots__ = ("conn",)

    def __init__(self, conn: psycopg.Connection):
        self.conn = conn

    def execute(self, query: str, params: Sequence[Any] | dict[str, Any] | None = None) -> PgResult:
        cur = self.conn.cursor()
        cur.execute(translate(query), params)  # type: ignore[arg-type]  # the store's own SQL
        return PgResult(cur)

    @contextmanager
    def appender(self, table: str, columns: Sequence[str]) -> Iterator[_Appender]:
        """Rows into ``table`` (names are the schema's, never a caller's)."""
        sql = (f"INSERT INTO {table} ({', '.join(columns)}) "
               f"VALUES ({', '.join(['%s'] * len(columns))})")
        with self.conn.cursor() as cur:
            yield _Appender(cur, sql)
