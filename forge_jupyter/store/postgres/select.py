"""Forge's own frame SQL (frames.py) on a PostgreSQL store, run by PostgreSQL itself.

The DataFrames ask fixed SELECTs — text written in frames.py, every value a bound parameter —
over the documented views. On PostgreSQL those views exist too (schema step 4,
sql/views.py, ``security_invoker``: the row-level security policies scope them to the
transaction's tenant), so the frames' SQL is translated the way the views are and run in the
store's read-only transaction (``reading()``); ``frames.typed`` then gives every column the
dtype it has on DuckDB. Measured (benchmarks/bench_postgres_frames.py): at 1M parts this is
several times faster than copying the rows out after every write, which is what SQL a person
writes needs (sandbox.py) and forge's own SQL does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .translate import to_postgres

if TYPE_CHECKING:
    import pandas as pd

    from .connection import PgConnection


translated = lru_cache(maxsize=256)(to_postgres)


def select_native(con: PgConnection, query: str, params: Sequence[Any] | None) -> pd.DataFrame:
    """Run forge's own SELECT ``query`` (DuckDB's dialect, frames.py) on PostgreSQL; a
    DataFrame of its rows, untyped (``frames.typed`` types it)."""
    import pandas as pd
    from psycopg.errors import QueryCanceled

    from ..query.timeout import QueryTimeout

    try:
        result = con.execute(translated(query), params)
    except QueryCanceled as exc:
        raise QueryTimeout(
            "PostgreSQL stopped a DataFrame query at the store's statement timeout (or an "
            "operator cancelled it): narrow it (session=, since=, until=) or raise the "
            "timeout, PostgresStore(…, statement_timeout=seconds)."
        ) from exc
    names = [name for name, _ in result.description or ()]
    return pd.DataFrame.from_records(result.fetchall(), columns=names)
