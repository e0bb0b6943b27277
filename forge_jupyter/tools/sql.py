"""``sql``: read-only DuckDB SQL over the notebook's DataFrames and the session's files.

Each call opens a private in-memory DuckDB connection, registers every DataFrame (pandas,
polars, Arrow) of the namespace under its variable name, confines file access to the
session's directory (``allowed_directories`` + ``enable_external_access=false``) and runs one
SELECT. Writing statements — INSERT, UPDATE, COPY … TO, ATTACH, CREATE, PRAGMA, … — are refused
before anything runs.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult

MAX_ROWS = 100
READ_ONLY = {"SELECT", "EXPLAIN"}


def _frames(namespace: dict[str, Any]) -> dict[str, Any]:
    found = {}
    for name, value in namespace.items():
        if name.startswith("_") or not name.isidentifier():
            continue
        module = type(value).__module__
        if (module.startswith("pandas") and type(value).__name__ == "DataFrame") or \
           (module.startswith("polars") and type(value).__name__ == "DataFrame") or \
           (module.startswith("pyarrow") and type(value).__name__ == "Table"):
            found[name] = value
    return found


def check_read_only(query: str) -> None:
    """Refuse anything but one read-only statement, naming what was found."""
    import duckdb

    try:
        statements = duckdb.connect().extract_statements(query)
    except duckdb.Error as exc:
        raise ToolError(f"The SQL does not parse: {exc}") from None
    if not statements:
        raise ToolError("The SQL is empty.")
    if len(statements) > 1:
        raise ToolError("Send one statement at a time.")
    kind = statements[0].type.name
    if kind not in READ_ONLY:
        raise ToolError(f"Only read-only queries (SELECT, WITH …, EXPLAIN) are allowed; this is a "
                        f"{kind} statement. The sql tool never writes data or files.")


def _run(query: str, namespace: dict[str, Any], root: str | None) -> str:
    import duckdb

    check_read_only(query)
    con = duckdb.connect(":memory:")
    try:
        if root:
            escaped = root.replace("'", "''")
            con.execute(f"SET allowed_directories=['{escaped}']")
        con.execute("SET enable_external_access=false")
        for name, frame in _frames(namespace).items():
            con.register(name, frame)
        rel = con.sql(query)
        if rel is None:
            return "(no result)"
        total = None
        try:
            total = con.sql(f"SELECT count(*) FROM ({query.rstrip().rstrip(';')})").fetchall()[0][0]
        except duckdb.Error:
            pass
        frame = rel.limit(MAX_ROWS).df()
    except duckdb.Error as exc:
        raise ToolError(f"{type(exc).__name__}: {exc}") from None
    finally:
        con.close()
    import pandas as pd

    with pd.option_context("display.max_columns", 50, "display.width", 200,
                           "display.max_colwidth", 80):
        table = frame.to_string(index=False) if len(frame.columns) else "(no columns)"
    rows = total if total is not None else len(frame)
    note = f"{rows:,} row{'s' if rows != 1 else ''}"
    if total is not None and total > MAX_ROWS:
        note += f"; showing the first {MAX_ROWS} (add LIMIT/OFFSET or aggregate to see others)"
    return f"{table}\n\n({note})"


async def run_sql(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    namespace = ctx.forge.namespace if ctx.forge is not None else {}
    query = args["query"]
    text = await asyncio.to_thread(_run, query, namespace, ctx.root)
    return ToolResult(text, title=query.strip().splitlines()[0][:80])


def sql_tool() -> Tool:
    return Tool(
        name="sql",
        description=(
            "Run one read-only DuckDB SQL query. Every DataFrame in the notebook is a table "
            "under its variable name; files in the working directory can be read with "
            "read_csv(...), read_parquet(...), read_json(...). Returns at most 100 rows and the "
            "total row count. Writing statements (INSERT, COPY TO, ATTACH, CREATE…) are refused."
        ),
        parameters={
            "type": "object",
            "properties": {"query": {"type": "string", "description": "one SELECT statement"}},
            "required": ["query"],
            "additionalProperties": False,
        },
        execute=run_sql,
        subject_arg="query",
    )
