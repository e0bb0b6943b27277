"""Every backend behind one fixture: the store contract is asserted once (DESIGN §3).

A backend is a function from a test's tmp folder to a *database*: a callable that gives a
``Store`` for a tenant, every tenant on the same underlying database. To add a backend (the
PostgreSQL one), register it in ``BACKENDS`` — skip with a reason when its server is not
reachable — and every contract test runs against it.

PostgreSQL: one throwaway cluster per test session (``tests/pg_cluster.py``) and one database
in it, migrated once by its owner role; before each test its owner empties every table but
``forge_schema`` (TRUNCATE takes milliseconds where a ``CREATE DATABASE`` took a second), so
each test still starts from a freshly migrated, empty database. The stores connect as an
application role that owns nothing and cannot bypass row-level security.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from forge_jupyter.store.base import Store
from forge_jupyter.store.duckdb import DuckDBStore
from forge_jupyter.store.memory import MemoryDatabase, MemoryStore

Database = Callable[[str], Store]


def memory_backend(tmp_path: Path) -> Database:
    db = MemoryDatabase()
    return lambda tenant: MemoryStore(db, tenant_id=tenant)


def duckdb_backend(tmp_path: Path) -> Database:
    path = tmp_path / "forge.duckdb"
    return lambda tenant: DuckDBStore(path, tenant_id=tenant, lock_timeout=10)


BACKENDS: dict[str, Callable[[Path], Database]] = {
    "memory": memory_backend,
    "duckdb": duckdb_backend,
}


@pytest.fixture(scope="session")
def pg_contract(pg_cluster):
    """The run's contract database, migrated once, and the application role the stores log in as."""
    from forge_jupyter.store.postgres_schema import migrate

    db = pg_cluster.create_database("forge_contract")
    app = db.create_app_role("forge_contract_app")
    migrate(db.owner_dsn, (app.name,))
    return db, app


def empty_tables(owner_dsn: str) -> None:
    """Every table of the schema emptied but ``forge_schema`` (the migration stays applied);
    a lock left by a store that did not close fails here in seconds, naming the table."""
    import psycopg

    with psycopg.connect(owner_dsn, autocommit=True) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = current_schema() "
            "AND tablename <> 'forge_schema' ORDER BY tablename")]
        conn.execute("SET lock_timeout = '10s'")
        conn.execute(f"TRUNCATE {', '.join(tables)}")  # type: ignore[arg-type]  # catalogue names


def postgres_backend(request: pytest.FixtureRequest) -> Database:
    from forge_jupyter.store.postgres import PostgresStore

    db, app = request.getfixturevalue("pg_contract")
    empty_tables(db.owner_dsn)
    dsn = db.cluster.dsn(app.name, app.password, db.name)
    opened: list[PostgresStore] = []

    def open_store(tenant: str) -> Store:
        opened.append(PostgresStore(dsn, tenant_id=tenant, pool_size=2))
        return opened[-1]

    def close() -> None:
        for s in opened:
            s.close()

    request.addfinalizer(close)
    return open_store


@pytest.fixture(params=[*BACKENDS, "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Database:
    if request.param == "postgres":
        return postgres_backend(request)
    return BACKENDS[request.param](tmp_path)


@pytest.fixture
def store(database: Database) -> Store:
    return database("default")


@pytest.fixture
def other_tenant(database: Database) -> Store:
    """The same database seen by another tenant."""
    return database("other")
