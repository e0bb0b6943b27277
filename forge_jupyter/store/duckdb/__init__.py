"""The DuckDB backend: one file, opened by every kernel of a machine in turn (store, file, errors).

``forge_jupyter.store.duckdb.DuckDBStore`` and ``default_db_path`` are still importable from here,
as they were when this package was one module."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    # lazy: importing a submodule (file, errors) need not load the whole store
    if name in ("DuckDBStore", "default_db_path", "DEFAULT_LOCK_TIMEOUT"):
        from . import store

        return getattr(store, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
