"""How long SQL over the history may run: a PostgreSQL store's ``statement_timeout`` holds on
PostgreSQL (its transactions set it) and, for SQL a person writes, in the DuckDB the query
runs in (sandbox.py) — where no server cancels it, a timer interrupts it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ...errors import ForgeError

if TYPE_CHECKING:
    import duckdb

    from ..base import Store


class QueryTimeout(ForgeError, TimeoutError):
    """A query over the history ran past the store's statement timeout."""


@contextmanager
def timed(cursor: duckdb.DuckDBPyConnection, store: Store) -> Iterator[None]:
    """Interrupt ``cursor``'s query once the store's ``statement_timeout`` (PostgreSQL's, in
    seconds) has passed; a store without one sets no limit."""
    import duckdb

    seconds = store.statement_timeout
    if not seconds:
        yield
        return
    timer = threading.Timer(float(seconds), cursor.interrupt)
    timer.daemon = True
    timer.start()
    try:
        yield
    except duckdb.InterruptException:
        raise QueryTimeout(
            f"the query ran longer than the store's statement timeout ({seconds:g} s) and was "
            "stopped. Narrow it (a WHERE on session_id or created_at, fewer joins), or raise "
            "the timeout: PostgresStore(…, statement_timeout=seconds)."
        ) from None
    finally:
        timer.cancel()
