"""Forge's own SQL over the views (frames.py, export.py): one SELECT, one tenant, a DataFrame.

``select`` is for SQL forge itself writes: fixed text, every value a bound parameter. It
shadows every table and view name with a CTE holding only the store's tenant
(``schema.tenant_views``). Shadowing names is no boundary for SQL a person or the model
writes — ``forge.main.part`` reaches past a CTE named ``part`` — so that SQL runs in a DuckDB
of its own holding only the tenant's rows (sandbox.py, ``tenant_sql``), never here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..query.check import ReadOnlySQL

if TYPE_CHECKING:
    import duckdb
    import pandas as pd
    import pyarrow as pa


def scoped(con: duckdb.DuckDBPyConnection, query: str, tenant_id: str) -> str:
    """``query`` — forge's own SQL, never a person's (see the module's docstring) — checked
    to be exactly one SELECT, with every table and view name standing for ``tenant_id``'s
    rows only (``ReadOnlySQL`` otherwise)."""
    import duckdb

    from .tables import tenant_views

    statements = con.extract_statements(query)
    if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
        kinds = ", ".join(s.type.name for s in statements) or "nothing"
        raise ReadOnlySQL(
            "forge SQL runs exactly one read-only SELECT (or WITH … SELECT) statement over "
            f"the history; this query holds: {kinds}. Write through forge's API (export, "
            "import, delete_session, cleanup) instead."
        )
    text = statements[0].query.rstrip().rstrip(";")
    [(catalog,)] = con.execute("SELECT current_database()").fetchall()
    return tenant_views(text, tenant_id, catalog)


def select(
    con: duckdb.DuckDBPyConnection,
    query: str,
    params: Sequence[Any] | dict[str, Any] | None,
    tenant_id: str,
) -> pd.DataFrame:
    """Run forge's own SELECT ``query`` over ``tenant_id``'s rows; a DataFrame."""
    return to_frame(con.sql(scoped(con, query, tenant_id), params=params).to_arrow_table())


def to_frame(table: pa.Table) -> pd.DataFrame:
    """A query's Arrow result as a DataFrame.

    Fetched through Arrow (measured: 220,000 tool calls in 0.3 s, where ``.df()`` took
    1.1 s converting the strings). Integers that hold NULLs come out as ``Int64``, and
    DuckDB's 128-bit sums (``sum`` of a BIGINT) as 64-bit integers where they fit.
    """
    import pyarrow as pa

    for i, field in enumerate(table.schema):
        if pa.types.is_decimal(field.type):
            column = table.column(i)
            try:
                if field.type.scale:
                    raise pa.ArrowInvalid("not an integer")
                column = column.cast(pa.int64())
            except pa.ArrowInvalid:
                column = column.cast(pa.float64())
            table = table.set_column(i, field.name, column)
    frame = table.to_pandas()
    for field, column in zip(table.schema, table.columns, strict=True):
        if pa.types.is_integer(field.type) and column.null_count:
            frame[field.name] = _nullable_ints(column)
        elif pa.types.is_interval(field.type):
            frame[field.name] = _timedeltas(column)
    return frame


def _nullable_ints(column: Any) -> pd.Series:
    import pandas as pd

    return column.cast("int64").to_pandas(types_mapper=lambda _type: pd.Int64Dtype())


def _timedeltas(column: Any) -> pd.Series:
    """DuckDB INTERVALs (Arrow month-day-nano) as Timedeltas, a month counted as 30 days —
    what DuckDB's own conversion does."""
    import pandas as pd

    return pd.Series(pd.to_timedelta([
        None if v is None else (v.months * 30 + v.days) * 86_400_000_000_000 + v.nanoseconds
        for v in column.to_pylist()
    ], unit="ns"))
