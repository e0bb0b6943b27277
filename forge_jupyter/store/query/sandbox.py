"""Where SQL written by a person or the model runs: a DuckDB of its own that cannot write.

DESIGN §3, invariant 3: such SQL "must not be able to name a way around" the tenant. Shadowing
table names inside the store's own connection does not do that — ``forge.main.part``,
``main.part``, ``query_table``, ``duckdb_databases()`` all reach past a CTE named ``part``.
So a person's query never runs where the store is attached. It runs in a separate DuckDB
instance (``locked_connection``) that:

- has no database but its own empty in-memory one, and can attach none;
- reads no file except the exact list it was given (``allowed_paths`` with
  ``enable_external_access`` off: no COPY TO, no ATTACH, no INSTALL, no other path);
- spills nothing to disk, scans no Python variable by name, loads no extension;
- has its configuration locked, so the query cannot undo any of that.

For the history (``tenant_sql``), that instance sees one tenant's rows only: under the store's
lock, each table the query names is copied, filtered on ``tenant_id``, to a Parquet file in a
private temporary folder; the instance gets a view per table over its file, and the documented
views (store/sql/views.py) over those. The copy is kept while the store file stays the same
(``generation``: its header blocks and size, and its write-ahead log), so repeated queries
cost only themselves. The ``sql`` tool (tools/sql.py) uses the same kind of connection over
the notebook's DataFrames and the files its query names inside the session's directory.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..sql.scoped import to_frame
from ..sql.tables import TENANT_TABLES
from ..sql.views import VIEWS
from .check import check_select, nodes
from .timeout import QueryTimeout, timed

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

    from ..base import Store

# What the copy holds: every tenant table, filtered, and the schema's version (no tenant's)
TABLES: tuple[str, ...] = (*TENANT_TABLES, "forge_schema")
ADVICE = "Write through forge's API (export, import, delete_session, cleanup) instead."
KEPT = 4  # tenant copies kept per process (one per store file and tenant in use)


def locked_connection(allowed_paths: Iterable[str] = (), *, temp_directory: str = "",
                      memory_limit: int | None = None, threads: int | None = None
                      ) -> duckdb.DuckDBPyConnection:
    """A new DuckDB instance that reads only ``allowed_paths`` and can write nowhere.

    ``temp_directory`` is where DuckDB may spill a large sort or join ("" : nowhere); DuckDB
    writes only its own temporary files there. The order of the settings matters: DuckDB
    refuses to change the paths once external access is off, and anything once locked.
    ``memory_limit`` (bytes) and ``threads`` bound the instance (default: DuckDB's, most of
    the machine); locked with the rest, a query cannot raise them.
    """
    import duckdb

    config: dict[str, Any] = {
        "autoinstall_known_extensions": False, "autoload_known_extensions": False}
    if memory_limit is not None:
        config["memory_limit"] = f"{max(memory_limit // 2**20, 16)}MiB"
    if threads is not None:
        config["threads"] = max(threads, 1)
    con = duckdb.connect(":memory:", config=config)
    try:
        paths = ", ".join(_literal(p) for p in allowed_paths)
        con.execute(f"SET allowed_paths = [{paths}]")
        con.execute(f"SET temp_directory = {_literal(temp_directory)}")
        con.execute("SET GLOBAL python_enable_replacements = false")  # cursors too
        con.execute("SET allow_community_extensions = false")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    except BaseException:
        con.close()
        raise
    return con


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# ------------------------------------------------------------------------ the tenant's copy


def _tokens(text: str) -> set[str]:
    """The words of ``text``, lower case: a superset of the relation names it uses."""
    return {t.lower() for t in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)}


def _view_tables() -> dict[str, frozenset[str]]:
    """The tables each documented view reads (through the views it reads), from DuckDB's
    parse tree of its SQL."""
    found: dict[str, frozenset[str]] = {}
    for v in VIEWS:  # in order: a view reads only earlier ones
        tree = check_select(v.sql, who="a view", advice="").tree
        names = {n["table_name"] for n in nodes(tree) if n.get("type") == "BASE_TABLE"}
        tables = names & set(TABLES)
        for other in names & found.keys():
            tables |= found[other]
        found[v.name] = frozenset(tables)
    return found


_VIEW_TABLES: dict[str, frozenset[str]] = {}


def tables_named(text: str) -> set[str]:
    """The tables a query over the history may read: those it names, and those behind the
    views it names (a superset: every word that is a relation name counts)."""
    if not _VIEW_TABLES:
        _VIEW_TABLES.update(_view_tables())
    words = _tokens(text)
    found = words & set(TABLES)
    for name in words & _VIEW_TABLES.keys():
        found |= _VIEW_TABLES[name]
    return found


def generation(path: Path) -> tuple[Any, ...]:
    """What changes whenever the DuckDB file's committed contents do: its two header blocks
    (rewritten at every checkpoint), its size and times, and its write-ahead log (which a
    commit appends to before any checkpoint). Read under the store's lock."""
    stat = path.stat()
    with open(path, "rb") as f:
        head = f.read(3 * 4096)
    try:
        wal = Path(f"{path}.wal").stat()
        log: tuple[int, int] | None = (wal.st_size, wal.st_mtime_ns)
    except FileNotFoundError:
        log = None
    return head, stat.st_ino, stat.st_size, stat.st_mtime_ns, log


PREFIX = "forge-sql-"  # the temporary folders' names: forge-sql-<pid>-<random>
_swept = False


def _sweep_once() -> None:
    """Remove the folders that killed processes of this user left behind (a kernel stopped
    with SIGKILL runs no exit handler), once per process."""
    global _swept
    if _swept:
        return
    _swept = True
    for folder in Path(tempfile.gettempdir()).glob(f"{PREFIX}*-*"):
        pid = folder.name[len(PREFIX):].split("-", 1)[0]
        try:
            if not pid.isdigit() or folder.stat().st_uid != os.getuid():
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue  # alive under another user, or unreadable: not ours to judge


class TenantCopy:
    """One tenant's rows as Parquet files, and a locked DuckDB instance that reads only them."""

    def __init__(self, tenant_id: str, generation: tuple[Any, ...] | None):
        self.tenant_id = tenant_id
        self.generation = generation
        _sweep_once()
        # 0700: this user only; the pid lets a later process remove it if this one is killed
        self.folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))
        (self.folder / "spill").mkdir()
        self.loaded: set[str] = set()  # tables copied
        self.views: set[str] = set()  # documented views defined
        self.lock = threading.Lock()
        try:
            self.con = locked_connection([str(self.file(t)) for t in TABLES],
                                         temp_directory=str(self.folder / "spill"))
        except BaseException:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        self._finalizer = weakref.finalize(self, _remove, self.con, self.folder)

    def file(self, table: str) -> Path:
        return self.folder / f"{table}.parquet"

    def load(self, export: Callable[[str, Path], None], tables: set[str]) -> None:
        """Copy ``tables`` (this tenant's rows) with ``export(table, parquet_path)`` — the
        store's own query, inside its read transaction — and define the views whose tables
        are all here. Called with ``self.lock``."""
        missing = sorted(tables - self.loaded)
        if not missing:
            return
        for table in missing:
            export(table, self.file(table))
        for table in missing:
            self.con.execute(f"CREATE VIEW {table} AS SELECT * FROM "
                             f"read_parquet({_literal(str(self.file(table)))})")
            self.loaded.add(table)
        for v in VIEWS:  # in order: a view may read an earlier one
            if v.name not in self.views and _VIEW_TABLES[v.name] <= self.loaded:
                self.con.execute(v.create)
                self.views.add(v.name)

    def close(self) -> None:
        self._finalizer()


def _remove(con: duckdb.DuckDBPyConnection, folder: Path) -> None:
    try:
        con.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


_copies: OrderedDict[tuple[str, str], TenantCopy] = OrderedDict()
_copies_lock = threading.Lock()


# Copies inherited through fork(): DuckDB is not fork-safe, so a child never uses, closes nor
# destroys them (shutting an instance down removes its spill files, the parent's).
_inherited: list[TenantCopy] = []


def _forget_copies_in_child() -> None:
    global _copies_lock
    for copy in _copies.values():
        copy._finalizer.detach()  # the parent's folder and instance: not ours to remove
        _inherited.append(copy)
    _copies.clear()
    _copies_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_copies_in_child)


def _duckdb_export(source: duckdb.DuckDBPyConnection, tenant_id: str
                   ) -> Callable[[str, Path], None]:
    """Copies a table of the DuckDB file (or the memory store's snapshot) to Parquet."""
    [(catalog,)] = source.execute("SELECT current_database()").fetchall()

    def export(table: str, file: Path) -> None:
        # the tenant id is a bound parameter; the table name and path are ours
        rows, params = (f"{catalog}.main.{table} WHERE tenant_id = ?", [tenant_id]) \
            if table in TENANT_TABLES else (f"{catalog}.main.{table}", [])
        source.execute(f"COPY (SELECT * FROM {rows}) TO {_literal(str(file))} "
                       "(FORMAT parquet)", params)

    return export


def _copy_for(store: Store, tables: set[str]) -> TenantCopy:
    """A copy of ``store``'s tenant holding at least ``tables``, current with the store.

    A DuckDB file is watched through its bytes (``generation``), a PostgreSQL store through a
    fingerprint of the tenant's rows (postgres/tenant_copy.py), both read in the transaction the copy
    is taken in; the memory store's copy serves one query. A copy that a newer one replaces is
    only dropped from the cache: a query still running on it keeps it alive, and its instance
    and folder go when the last reference does.
    """
    if store.dialect == "postgresql":
        from psycopg.errors import QueryCanceled

        try:
            return _copy_in(store, tables)
        except QueryCanceled as exc:
            raise QueryTimeout(
                f"copying this tenant's rows out of {store.where} "
                f"took longer than the store's statement timeout ({store.statement_timeout or 0:g} s;"
                " PostgreSQL cancelled it). Raise it — PostgresStore(…, statement_timeout="
                "seconds) — or use the DataFrames (forge.costs(), …), which run in PostgreSQL."
            ) from exc
    return _copy_in(store, tables)


def _copy_in(store: Store, tables: set[str]) -> TenantCopy:
    with store.reading() as source:
        key: tuple[str, str] | None = None
        if store.dialect == "duckdb":
            export = _duckdb_export(source, store.tenant_id)
            path = store.path
            if path is not None:  # no file to watch (the memory store): a copy for this query
                key = (os.path.realpath(path), store.tenant_id)
                now: tuple[Any, ...] | None = generation(Path(key[0]))
        else:  # PostgreSQL: a read-only, repeatable-read transaction of the tenant's role
            from ..postgres import tenant_copy as postgres_copy

            postgres_copy.prepare(source.conn)
            key = (f"postgresql:{store.dsn}", store.tenant_id)  # type: ignore[attr-defined]
            with _copies_lock:
                held = set(_copies[key].loaded) if key in _copies else set()
            now = postgres_copy.fingerprint(source.conn, store.tenant_id, tables | held)

            def export(table: str, file: Path) -> None:
                postgres_copy.copy_table(source.conn, store.tenant_id, table, file)

        if key is None:
            copy = TenantCopy(store.tenant_id, None)
        else:
            with _copies_lock:
                copy = _copies.get(key)  # type: ignore[assignment]
                if copy is None or not _current(copy.generation, now):
                    copy = _copies[key] = TenantCopy(store.tenant_id, now)
                _copies.move_to_end(key)
                while len(_copies) > KEPT:
                    _copies.popitem(last=False)
        with copy.lock:
            if key is not None and not _current(copy.generation, now):
                # another query took more tables meanwhile: a copy of this query's own
                copy = TenantCopy(store.tenant_id, None)
            copy.load(export, tables)
            if isinstance(copy.generation, dict):  # PostgreSQL's: per table
                copy.generation.update(now)
    return copy


def _current(generation: Any, now: Any) -> bool:
    if isinstance(generation, dict):  # a PostgreSQL copy: the tables it holds are unchanged
        from ..postgres.tenant_copy import still_current

        return still_current(generation, now)
    return generation is not None and generation == now


@contextmanager
def snapshot(store: Store, *queries: str) -> Iterator[duckdb.DuckDBPyConnection]:
    """A DuckDB connection with the schema's tables and views, for forge's own read-only
    SQL (``query.select``: export.py). Where the store is a DuckDB (the file, the memory
    store's snapshot), its ``reading()``; for a PostgreSQL store, a cursor on the tenant's
    copy holding the tables ``queries`` read — the same SQL, columns and types."""
    if store.dialect == "duckdb":
        with store.reading() as source:
            yield source
        return
    wanted = set().union(*(tables_named(q) for q in queries)) if queries else set(TABLES)
    copy = _copy_for(store, wanted or set(TABLES))
    cursor = copy.con.cursor()
    try:
        yield cursor
    finally:
        cursor.close()


def tenant_sql(store: Store, query: str,
               params: Sequence[Any] | dict[str, Any] | None = None) -> pd.DataFrame:
    """Run one read-only SELECT written by a person over ``store``'s tenant; a DataFrame.

    Every table name (session, message, part, session_message, event) and view name
    (views.VIEW_NAMES) holds this tenant's rows; nothing else exists where it runs. The
    query runs after the store's lock is given back: a long one holds up no writer.
    """
    import duckdb

    checked = check_select(query, who="forge SQL", advice=ADVICE)
    # a query naming no table (SHOW TABLES, information_schema) sees them all
    wanted = tables_named(checked.text) or set(TABLES)
    while True:
        copy = _copy_for(store, wanted)
        cursor = copy.con.cursor()  # its own connection: queries in other threads go on
        try:
            with timed(cursor, store):
                table = cursor.sql(checked.text, params=params).to_arrow_table()
        except duckdb.CatalogException as exc:
            # a name spelt in a way the word scan missed (a quoted identifier with an escaped
            # quote, a name built by query_table): copy every table and ask once more
            if wanted != set(TABLES):
                wanted = set(TABLES)
                continue
            raise duckdb.CatalogException(
                f"{exc}\nforge SQL sees this tenant's tables and views by their plain names "
                "(session, part, costs, tool_calls, … — docs/schema.md); the store's file is "
                "not attached where it runs, so names like forge.main.part do not exist."
            ) from None
        finally:
            cursor.close()
            if copy.generation is None:
                copy.close()
        return to_frame(table)
