"""Which store ``Forge.db`` / ``FORGE_DB`` names, by its scheme (DESIGN §3); open.py opens it.

Read by the one opener (open.py) and by what must know a file's path without opening it (the
server extension, the DuckDB store's default), so a value means the same backend everywhere:

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
