"""Every backend behind one fixture: the store contract is asserted once (DESIGN §3).

A backend is a function from a test's tmp folder to a *database*: a callable that gives a
``Store`` for a tenant, every tenant on the same underlying database. To add a backend (the
PostgreSQL one), register it in ``BACKENDS`` — skip with a reason when its server is not
reachable — and every contract test runs against it.

PostgreSQL: one throwaway cluster per test session (``tests/pg_cluster.py``), one template
database migrated once by its owner role, and a fresh copy of it for every test; the stores
connect as an application role that owns nothing and cannot bypass row-level security.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from forge_jupyter.store.base import Store
from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.store.inmemory.store import MemoryDatabase, MemoryStore

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
def pg_template(pg_cluster):
    """A migrated database to copy per test, and the application role the stores log in as."""
    from forge_jupyter.store.postgres.schema import migrate

    template = pg_cluster.create_database("forge_contract_template")
    app = template.create_app_role("forge_contract_app")
    migrate(template.owner_dsn, (app.name,))
    return template, app


def postgres_backend(request: pytest.FixtureRequest) -> Database:
    from forge_jupyter.store.postgres.store import PostgresStore
    from tests.pg_cluster import PgDatabase

    template, app = request.getfixturevalue("pg_template")
    cluster = template.cluster
    name = f"forge_contract_{uuid.uuid4().hex[:12]}"
    cluster.admin_sql(
        f'CREATE DATABASE "{name}" TEMPLATE "{template.name}" OWNER "{template.owner}"',
        f'GRANT CONNECT ON DATABASE "{name}" TO "{app.name}"',
    )
    db = PgDatabase(cluster, name, template.owner, template.owner_password)
    dsn = cluster.dsn(app.name, app.password, name)
    opened: list[PostgresStore] = []

    def open_store(tenant: str) -> Store:
        opened.append(PostgresStore(dsn, tenant_id=tenant, pool_size=2))
        return opened[-1]

    def drop() -> None:
        for s in opened:
            s.close()
        cluster.admin_sql(f'DROP DATABASE IF EXISTS "{db.name}" WITH (FORCE)')

    request.addfinalizer(drop)
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
