"""A PostgreSQL store's rows of one tenant, copied out to Parquet for the SQL sandbox.

SQL a person or the model writes never runs on the PostgreSQL connection: there a role shared
by several tenants could change ``forge.tenant`` with ``set_config`` and read another tenant's
rows. It runs where the DuckDB store's runs (sandbox.py): in a locked DuckDB holding only this
tenant's rows, as Parquet files with the DuckDB file's column types — so the dialect, the
table and view names, the columns and the dtypes are the same on both backends.

The copy is taken in the store's read-only, repeatable-read transaction (``reading()``, with
its statement timeout; one snapshot for every table and for the fingerprint), with the
tenant predicate in the query *and* the row-level security policies under it:

- ``fingerprint``: per table, the row count and the sum of the rows' ``xmin`` (the id of the
  transaction that wrote each row version). Any insert, update or delete of this tenant's
  rows changes it, so a copy is reused exactly as long as the tables it holds are current —
  only those and the ones a query adds are read (a query of ``session`` scans no part);
- ``copy_table``: ``COPY (SELECT …) TO STDOUT`` as CSV (in UTC, floats exact) into a file of
  the copy's private folder, read by DuckDB with the file schema's types, written as Parquet.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from psycopg import sql

from ..sql.tables import TENANT_TABLES

if TYPE_CHECKING:
    import psycopg

# PostgreSQL's largest field is 1 GB; a part's JSON may be long (a written file), never that
_MAX_LINE = 1 << 30


@lru_cache(maxsize=1)
def duckdb_columns() -> dict[str, tuple[tuple[str, str], ...]]:
    """Each table's (column, DuckDB type) in the DuckDB file's order (sql/tables.py)."""
    import duckdb

    from ..duckdb.schema import migrate

    con = duckdb.connect(":memory:")
    try:
        migrate(con, ":memory:")
        rows = con.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() "
            "WHERE database_name = current_database() AND schema_name = 'main' "
            "ORDER BY table_name, column_index").fetchall()
    finally:
        con.close()
    found: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in rows:
        found.setdefault(table, []).append((column, kind))
    return {t: tuple(c) for t, c in found.items()}


def prepare(con: psycopg.Connection) -> None:
    """The transaction's output as the copy reads it: times in UTC, floats to the last bit."""
    con.execute("SELECT set_config('TimeZone', 'UTC', true), "
                "set_config('extra_float_digits', '1', true)")


def fingerprint(con: psycopg.Connection, tenant_id: str, tables: Iterable[str]
                ) -> dict[str, tuple[int, int]]:
    """{table: what changes whenever its rows of this tenant do} for ``tables`` (see the
    module's docstring); ``forge_schema``: its version."""
    wanted = sorted(set(tables) & set(TENANT_TABLES))
    found: dict[str, tuple[int, int]] = {}
    if wanted:
        query = sql.SQL(" UNION ALL ").join(
            sql.SQL("SELECT {name}, count(*), coalesce(sum(xmin::text::bigint), 0) "
                    "FROM {table} WHERE tenant_id = %(t)s").format(
                name=sql.Literal(table), table=sql.Identifier(table))
            for table in wanted)
        found = {t: (int(n), int(x)) for t, n, x in con.execute(query, {"t": tenant_id})}
    [(version,)] = con.execute("SELECT max(version) FROM forge_schema").fetchall()
    found["forge_schema"] = (int(version), 0)
    return found


def still_current(old: dict[str, tuple[int, int]], now: dict[str, tuple[int, int]]) -> bool:
    """A copy fingerprinted ``old`` holds what ``now`` was read with: every table it has
    is unchanged (a table it has not copied yet is copied from ``now``'s transaction)."""
    return all(now.get(table) == value for table, value in old.items())


def copy_table(con: psycopg.Connection, tenant_id: str, table: str, path: Path) -> None:
    """``table``'s rows of ``tenant_id`` (every row of ``forge_schema``) to a Parquet file at
    ``path``, with the DuckDB file's column types."""
    import duckdb

    columns = duckdb_columns()[table]
    names = sql.SQL(", ").join(sql.Identifier(c) for c, _ in columns)
    select = sql.SQL("SELECT {names} FROM {table}").format(
        names=names, table=sql.Identifier(table))
    if table in TENANT_TABLES:
        select = sql.SQL("{select} WHERE tenant_id = {tenant}").format(
            select=select, tenant=sql.Literal(tenant_id))
    csv = path.with_suffix(".csv")
    try:
        with con.cursor() as cur, open(csv, "wb") as out, \
                cur.copy(sql.SQL("COPY ({select}) TO STDOUT (FORMAT csv)").format(select=select)
                         ) as rows:
            for chunk in rows:
                out.write(chunk)
        types = ", ".join(f"{_literal(c)}: {_literal(t)}" for c, t in columns)
        reader = duckdb.connect(":memory:", config={"threads": 2})
        try:
            # CSV as PostgreSQL writes it: NULL unquoted and empty, '' quoted
            reader.execute(
                f"COPY (SELECT * FROM read_csv({_literal(str(csv))}, header = false, "
                f"auto_detect = false, allow_quoted_nulls = false, max_line_size = {_MAX_LINE}, "
                f"columns = {{{types}}})) TO {_literal(str(path))} (FORMAT parquet)")
        finally:
            reader.close()
    finally:
        csv.unlink(missing_ok=True)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
