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
from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.store.inmemory.store import MemoryDatabase, MemoryStore

Database = Callable[[str], Store]


def memory_backend(tmp_path: Path, migrated: Callable[[Path], Path]) -> Database:
    db = MemoryDatabase()
    return lambda tenant: MemoryStore(db, tenant_id=tenant)


def duckdb_backend(tmp_path: Path, migrated: Callable[[Path], Path]) -> Database:
    path = migrated(tmp_path / "forge.duckdb")  # a copy of one migrated once (tests/conftest.py)
    return lambda tenant: DuckDBStore(path, tenant_id=tenant, lock_timeout=10)


BACKENDS: dict[str, Callable[[Path, Callable[[Path], Path]], Database]] = {
    "memory": memory_backend,
    "duckdb": duckdb_backend,
}


def postgres_backend(request: pytest.FixtureRequest) -> Database:
    from forge_jupyter.store.postgres.store import PostgresStore

    db, app = request.getfixturevalue("pg_empty")  # the run's database, emptied (tests/pg_cluster.py)
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
    return BACKENDS[request.param](tmp_path, request.getfixturevalue("migrated_duckdb"))


@pytest.fixture
def store(database: Database) -> Store:
    return database("default")


@pytest.fixture
def other_tenant(database: Database) -> Store:
    """The same database seen by another tenant."""
    return database("other")
