"""A PostgreSQL URL in Forge.db is never taken for a path (no folder named after a URL and its
password is made): the server's panel connects to it instead (test_api_postgres.py)."""

from __future__ import annotations

import pytest

from forge_jupyter.server.app import store_path


@pytest.mark.parametrize("url", ["postgresql://app:secret@db:5432/forge", " POSTGRES://db/forge"])
def test_a_postgres_url_is_not_a_file(url, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert store_path(url) is None
    assert list(tmp_path.iterdir()) == []


def test_a_duckdb_store_refuses_a_postgres_url_in_forge_db(tmp_path, monkeypatch):
    from forge_jupyter.errors import StoreUnreadable
    from forge_jupyter.store.duckdb.store import DuckDBStore

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FORGE_DB", "postgresql://app:secret@db/forge")
    with pytest.raises(StoreUnreadable, match="PostgreSQL database"):
        DuckDBStore()
    assert list(tmp_path.iterdir()) == []
