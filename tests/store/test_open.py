"""One opener for every store (store/open.py): the backend is chosen by the value's scheme,
and a value that is almost a URL is refused with what to write, not made into a file."""

from __future__ import annotations

import pytest

from forge_jupyter.errors import InvalidOption
from forge_jupyter.message import SessionInfo
from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.store.inmemory.store import MemoryStore
from forge_jupyter.store.location import locate
from forge_jupyter.store.open import open_store
from forge_jupyter.store.postgres.store import PostgresStore


def _round_trip(store) -> None:
    made = store.create_session(SessionInfo(agent="build", name="opened"))
    assert store.find_session("opened").id == made.id


def test_a_path_opens_a_duckdb_file(tmp_path):
    store = open_store(str(tmp_path / "a.duckdb"), tenant="t")
    assert isinstance(store, DuckDBStore) and store.dialect == "duckdb"
    assert store.path == tmp_path / "a.duckdb" and store.tenant_id == "t"
    _round_trip(store)
    assert (tmp_path / "a.duckdb").exists()


def test_a_duckdb_url_opens_the_file_it_names(tmp_path):
    store = open_store(f"duckdb://{tmp_path}/b.duckdb")
    assert isinstance(store, DuckDBStore) and store.path == tmp_path / "b.duckdb"
    _round_trip(store)


def test_memory_opens_the_in_memory_store():
    store = open_store(":memory:", tenant="t")
    assert isinstance(store, MemoryStore) and store.tenant_id == "t"
    assert store.dialect == "duckdb" and store.path is None
    _round_trip(store)


def test_none_follows_forge_db(tmp_path, monkeypatch):
    monkeypatch.setenv("FORGE_DB", str(tmp_path / "env.duckdb"))
    store = open_store(None)
    assert isinstance(store, DuckDBStore) and store.path == tmp_path / "env.duckdb"
    monkeypatch.setenv("FORGE_DB", ":memory:")
    assert isinstance(open_store(None), MemoryStore)


def test_a_postgresql_url_opens_postgresql(pg):
    _db, shared, _alice, _bob = pg
    for url in (shared.dsn, shared.dsn.replace("postgresql://", "postgres://", 1)):
        store = open_store(url, tenant="a")
        try:
            assert isinstance(store, PostgresStore) and store.dialect == "postgresql"
            assert store.tenant_id == "a" and store.path is None
            assert store.statement_timeout is not None
        finally:
            store.close()


def test_a_store_is_returned_as_it_is():
    store = MemoryStore()
    assert open_store(store) is store


@pytest.mark.parametrize("value, said", [
    ("mysql://me@db/forge", "no store is opened by mysql:// URLs"),
    ("postgresq://me@db/forge", "did you mean postgresql://"),
    ("duckbd:///tmp/x.duckdb", "did you mean duckdb://"),
    ("postgres:", "names no PostgreSQL server"),
    ("postgresql:", "names no PostgreSQL server"),
    ("postgres://", "names no PostgreSQL server"),
    ("postgres:me@db/forge", "names no PostgreSQL server"),
    ("duckdb://", "names no file"),
])
def test_a_value_of_no_known_scheme_says_what_to_write(value, said, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidOption, match=said) as caught:
        open_store(value)
    assert value in str(caught.value)
    assert list(tmp_path.iterdir()) == []  # no file made from the mistyped value


def test_names_that_merely_hold_a_colon_stay_file_names(tmp_path):
    assert locate("notes:v2.duckdb").path is not None
    assert locate(r"C:\Users\me\forge.duckdb").backend == "duckdb"
    assert locate(tmp_path / "p.duckdb").path == tmp_path / "p.duckdb"
