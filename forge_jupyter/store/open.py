"""The one way to open a store (DESIGN §3): the kernel's Forge, ``python -m forge_jupyter``
and the server extension all open theirs here, by the scheme of ``Forge.db`` / ``FORGE_DB``
(location.py says which backend a value names)."""

from __future__ import annotations

import os

from .base import DEFAULT_TENANT, Store
from .location import locate


def open_store(db: str | os.PathLike[str] | Store | None = None, *,
               tenant: str = DEFAULT_TENANT, lock_timeout: float | None = None) -> Store:
    """The Store ``db`` names (the values location.py lists); a Store is returned as it is.

    ``lock_timeout``: how long a DuckDB file's opener waits for another process's turn
    (None: the default). On PostgreSQL the tenant left at ``default`` under JupyterHub is
    the hub's user (``postgres.schema.tenant_for``)."""
    if isinstance(db, Store):
        return db
    where = locate(db)
    if where.backend == "memory":
        from .inmemory.store import MemoryStore

        return MemoryStore(tenant_id=tenant)
    if where.backend == "postgresql":
        from .postgres.schema import tenant_for
        from .postgres.store import PostgresStore

        assert where.url is not None
        return PostgresStore(where.url, tenant_id=tenant_for(tenant))
    from .duckdb.store import DEFAULT_LOCK_TIMEOUT, DuckDBStore

    return DuckDBStore(where.path, tenant_id=tenant,
                       lock_timeout=DEFAULT_LOCK_TIMEOUT if lock_timeout is None else lock_timeout)
