"""The DuckDB file's schema, as numbered migration steps (DESIGN §3), rendered from the one
declaration of every table (sql/tables.py).

A fresh file runs every step; an older file is brought up to date in one transaction when it
is opened; a file written by a newer forge-jupyter is refused (``SchemaTooNew``).
"""

from __future__ import annotations

import duckdb

from ...errors import SchemaTooNew, StoreUnreadable
from ..sql.tables import LATEST, Migration, ddl
from ..sql.views import create_views

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "tables", ddl("duckdb", 1)),
    Migration(2, "indexes", ddl("duckdb", 2)),
    # the documented views (sql/views.py, docs/schema.md); a later change to a view is a
    # new step that drops and recreates it
    Migration(3, "views", create_views("duckdb")),
    # PostgreSQL's step 4 creates these views there (postgres/schema.py); the file has them
    Migration(4, "nothing: the views of step 3 in PostgreSQL's dialect, on PostgreSQL", ()),
    Migration(5, "the long-term memory index", ddl("duckdb", 5)),
    Migration(6, "message.replay_of", ddl("duckdb", 6)),
    # PostgreSQL's step 7 guards finished history with the owner's triggers there
    # (postgres/history_guard.py); a DuckDB file's readers are the file's own users
    Migration(7, "nothing: finished history guarded by triggers, on PostgreSQL", ()),
)
assert MIGRATIONS[-1].version == LATEST, "a step of sql/tables.py has no DuckDB migration"


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
