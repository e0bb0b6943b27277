"""The DuckDB backend: one file, several kernels, the contract of ``store.base`` (DESIGN §3).

``DuckDBStore(path, tenant_id=…, lock_timeout=…)``: every call takes the file for the length
of one transaction and gives it back (see ``duckdb_file``); ``with store.hold():`` keeps it
across calls, for a run of paginated reads. This class opens the transactions; the methods
that run in them are ``sql_store.SQLStore``'s (shared with PostgreSQL), their queries in
``sql/reads`` and ``sql/writes``. Writes validate through ``plan_write`` — the
invariants live there, once — and land with DuckDB's appender, one transaction per batch.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import duckdb

from ..base import DEFAULT_TENANT
from ..location import default_db_path
from ..sql.store import SQLStore
from .errors import path_error
from .file import DuckDBFile, shared_file

DEFAULT_LOCK_TIMEOUT = 30.0


# ------------------------------------------------------------------------------------ the store


class DuckDBStore(SQLStore):
    """Sessions, messages, parts, timeline, events and leases of one tenant in a DuckDB file."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        tenant_id: str = DEFAULT_TENANT,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    ):
        self.path = Path(path).expanduser() if path is not None else default_db_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:  # a name too long, a file where a folder should be, …
            raise path_error(self.path, error) from error
        self.tenant_id = tenant_id
        self.lock_timeout = lock_timeout
        # open once now: an unreadable or too new file is reported here, an old one upgraded
        with self.hold():
            pass

    def __repr__(self) -> str:
        return f"DuckDBStore({str(self.path)!r}, tenant_id={self.tenant_id!r})"

    # -- access to the file ---------------------------------------------------------------

    def files(self) -> tuple[Path, ...]:
        """The database, its write-ahead log, the lock sidecar and the pending copy's files
        (pending.py), resolved."""
        file = self._file()
        return (file.path, file.path.with_name(file.path.name + ".wal"), file.lock_path,
                *file.pending.files())

    def _file(self) -> DuckDBFile:
        return shared_file(self.path)  # looked up each time: a forked child gets its own

    def _tx(self) -> AbstractContextManager[duckdb.DuckDBPyConnection]:
        return self._file().transaction(self.lock_timeout)

    @contextmanager
    def hold(self) -> Iterator[DuckDBStore]:
        """Keep the file open across the calls inside the block (reentrant; other processes
        wait meanwhile, so keep it short: a run of paginated reads, a burst of writes)."""
        with self._file().opened(self.lock_timeout):
            yield self

    def reading(self) -> AbstractContextManager[duckdb.DuckDBPyConnection]:
        """The file, for read-only SQL over the tables and views (``Store.sql``, frames.py),
        in a transaction that is always rolled back."""
        return self._file().rolled_back(self.lock_timeout)
