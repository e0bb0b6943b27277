"""Fixtures of the store tests. ``pg``: one migrated PostgreSQL database per test module, as
the tenancy tests use it (test_postgres_tenancy.py, test_postgres_sql.py)."""

from __future__ import annotations

import psycopg
import pytest

from forge_jupyter.store.postgres.schema import migrate


@pytest.fixture(scope="module")
def pg(pg_cluster):
    """One migrated database: a shared app role, and roles pinned to tenant a and to b."""
    db = pg_cluster.create_database()
    shared = db.create_app_role()
    alice = db.create_app_role()
    bob = db.create_app_role()
    migrate(db.owner_dsn, (shared.name, alice.name, bob.name))
    with psycopg.connect(db.owner_dsn, autocommit=True) as con:
        con.execute("INSERT INTO forge_tenant_role VALUES (%s, 'a'), (%s, 'b')",
                    [alice.name, bob.name])
    yield db, shared, alice, bob
    pg_cluster.drop_database(db)
