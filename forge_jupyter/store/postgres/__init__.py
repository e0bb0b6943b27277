"""The PostgreSQL backend: store (the pool, tenancy per transaction) · connection (the shared
SQL's placeholders) · schema (its migrations, row-level security, the migrate command) · select
(the frames' SQL there) · tenant_copy (the tenant's rows copied out for ``forge.sql``).

``forge_jupyter.store.postgres.PostgresStore`` is still importable from here, as it was when
this package was one module."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    # lazy: psycopg is loaded only by a store that uses PostgreSQL
    if name in ("PostgresStore", "UnsafeRole", "describe", "DEFAULT_STATEMENT_TIMEOUT",
                "DEFAULT_POOL_SIZE"):
        from . import store

        return getattr(store, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
