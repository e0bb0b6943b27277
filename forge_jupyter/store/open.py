"""The one way to open a store: by what ``Forge.db`` / ``FORGE_DB`` says (DESIGN §3).

The kernel's Forge, ``python -m forge_jupyter`` and the server extension all open their store
here, so a value means the same backend everywhere:

- a path, or ``duckdb://PATH`` → the DuckDB file at PATH (``duckdb:///abs/file.duckdb``);
- ``postgresql://…`` or ``postgres://…`` → that PostgreSQL database;
- ``":memory:"`` → the in-memory store of this process;
- None → ``$FORGE_DB`` if set (any of the above), else ``~/.forge/forge.duckdb``.

A value that looks like a URL of some other scheme is refused with what to write instead,
rather than becoming a DuckDB file named after it.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import InvalidOption
from .base import DEFAULT_TENANT, Store

Backend = Literal["duckdb", "postgresql", "memory"]
MEMORY = ":memory:"
POSTGRES_SCHEMES = ("postgresql", "postgres")
SCHEMES = ("duckdb", *POSTGRES_SCHEMES)
# ``name:`` at the start: a scheme of two letters or more (``C:\…`` is a Windows path)
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):(//)?")
_FORMS = ("a path or duckdb://PATH (a DuckDB file), postgresql://USER@HOST/DATABASE, "
          "or ':memory:'")


@dataclass(frozen=True, slots=True)
class Location:
    """Where a store lives: a backend and, for a file, its path; for PostgreSQL, its URL."""

    backend: Backend
    path: Path | None = None
    url: str | None = None


def default_db_path() -> Path:
    """``$FORGE_DB`` if it names a file, else ``~/.forge/forge.duckdb``."""
    configured = os.environ.get("FORGE_DB", "").strip()
    if configured:
        found = locate(configured)
        if found.path is None:  # never a path: no folder is made from a URL
            from ..errors import StoreUnreadable

            raise StoreUnreadable(
                "FORGE_DB names a PostgreSQL database, not a DuckDB file: open it with "
                "forge_jupyter.Forge() (or PostgresStore), or give this DuckDB store a path.")
        return found.path
    return Path.home() / ".forge" / "forge.duckdb"


def is_postgres_url(value: object) -> bool:
    """``Forge.db`` / ``FORGE_DB`` names a PostgreSQL database (not a DuckDB file)."""
    if not isinstance(value, str):
        return False
    m = _SCHEME.match(value.strip())
    return bool(m and m.group(2) and m.group(1).lower() in POSTGRES_SCHEMES)


def locate(db: str | os.PathLike[str] | None) -> Location:
    """Which backend ``db`` names, and where; InvalidOption for a URL of no known scheme."""
    if db is None:
        configured = os.environ.get("FORGE_DB", "").strip()
        return locate(configured) if configured else Location("duckdb", default_db_path())
    if isinstance(db, os.PathLike):
        return Location("duckdb", Path(db).expanduser())
    text = db.strip()
    if text == MEMORY:
        return Location("memory")
    m = _SCHEME.match(text)
    if m is None:
        return Location("duckdb", Path(text).expanduser())
    scheme, slashes = m.group(1).lower(), m.group(2)
    if scheme in POSTGRES_SCHEMES:
        if not slashes or not text[m.end():].strip("/"):
            raise InvalidOption(
                f"Forge.db = {db!r} names no PostgreSQL server: write "
                "postgresql://USER@HOST/DATABASE (the password in ~/.pgpass or PGPASSWORD).")
        return Location("postgresql", url=text)
    if scheme == "duckdb":
        rest = text[m.end():]
        if not rest:
            raise InvalidOption(f"Forge.db = {db!r} names no file: write duckdb://PATH, "
                                "e.g. duckdb:///home/me/forge.duckdb")
        return Location("duckdb", Path(rest).expanduser())
    near = difflib.get_close_matches(scheme, SCHEMES, n=1, cutoff=0.8)
    if slashes or near:
        hint = f"did you mean {near[0]}://? " if near else ""
        raise InvalidOption(f"Forge.db = {db!r}: no store is opened by {scheme}:// URLs; "
                            f"{hint}write {_FORMS}.")
    return Location("duckdb", Path(text).expanduser())  # ``notes:v2.duckdb``: a file name


def open_store(db: str | os.PathLike[str] | Store | None = None, *,
               tenant: str = DEFAULT_TENANT, lock_timeout: float | None = None) -> Store:
    """The Store ``db`` names (see the module's docstring); a Store is returned as it is.

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
