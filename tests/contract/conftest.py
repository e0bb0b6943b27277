"""Every backend behind one fixture: the store contract is asserted once (DESIGN §3).

A backend is a function from a test's tmp folder to a *database*: a callable that gives a
``Store`` for a tenant, every tenant on the same underlying database. To add a backend (the
PostgreSQL one), register it in ``BACKENDS`` — skip with a reason when its server is not
reachable — and every contract test runs against it.
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
    # "postgres": postgres_backend,  — a later issue; skip when no server answers
}


@pytest.fixture(params=list(BACKENDS))
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Database:
    return BACKENDS[request.param](tmp_path)


@pytest.fixture
def store(database: Database) -> Store:
    return database("default")


@pytest.fixture
def other_tenant(database: Database) -> Store:
    """The same database seen by another tenant."""
    return database("other")
