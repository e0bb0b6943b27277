"""The file: where it lives, what is refused untouched, and how its schema moves forward."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from pathlib import Path

import duckdb
import pytest

from forge_jupyter.errors import SchemaTooNew, StoreUnreadable
from forge_jupyter.message import SessionInfo
from forge_jupyter.store.duckdb import schema
from forge_jupyter.store.duckdb.store import DuckDBStore, default_db_path
from forge_jupyter.store.sql.tables import TENANT_TABLES


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _text_file(path: Path) -> None:
    path.write_text("name,value\nnot,a database\n" * 100)


def _sqlite_file(path: Path) -> None:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE session (id TEXT)")
    con.commit()
    con.close()


def _empty_file(path: Path) -> None:
    path.write_bytes(b"")


def _truncated_duckdb(path: Path) -> None:
    DuckDBStore(path).create_session(SessionInfo())
    path.write_bytes(path.read_bytes()[:5000])


def _garbled_duckdb(path: Path) -> None:
    DuckDBStore(path).create_session(SessionInfo())
    data = bytearray(path.read_bytes())
    data[4096:] = b"\xa5" * (len(data) - 4096)
    path.write_bytes(bytes(data))


def _someone_elses_duckdb(path: Path) -> None:
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE sales AS SELECT 1 AS amount")
    con.close()


@pytest.mark.parametrize("make", [_text_file, _sqlite_file, _empty_file, _truncated_duckdb,
                                  _garbled_duckdb, _someone_elses_duckdb])
def test_a_file_that_is_not_a_forge_database_is_refused_and_left_untouched(tmp_path, make):
    path = tmp_path / "notes.duckdb"
    make(path)
    before = _digest(path)
    with pytest.raises(StoreUnreadable) as caught:
        DuckDBStore(path)
    assert str(path) in str(caught.value)
    assert _digest(path) == before
    assert not Path(f"{path}.wal").exists()


def test_a_newer_schema_is_refused_with_what_to_do(tmp_path):
    path = tmp_path / "future.duckdb"
    DuckDBStore(path)
    con = duckdb.connect(str(path))
    con.execute("UPDATE forge_schema SET version = ?", [schema.LATEST + 1])
    con.close()
    before = _digest(path)
    with pytest.raises(SchemaTooNew) as caught:
        DuckDBStore(path)
    message = str(caught.value)
    assert str(path) in message
    assert f"version {schema.LATEST + 1}" in message and f"version {schema.LATEST}" in message
    assert "upgrade forge-jupyter" in message.lower()
    assert _digest(path) == before


def test_an_older_schema_is_upgraded_on_open_and_keeps_its_rows(tmp_path):
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    schema.migrate(con, str(path), target=1)
    con.execute(
        "INSERT INTO session (tenant_id, id, name, agent, created_at, updated_at) "
        "VALUES ('default', 'ses_old', 'from-v1', 'build', now(), now())"
    )
    assert con.execute("SELECT count(*) FROM duckdb_indexes()").fetchone()[0] == 0
    con.close()

    store = DuckDBStore(path)
    assert store.find_session("from-v1").id == "ses_old"
    con = duckdb.connect(str(path), read_only=True)
    try:
        assert con.execute("SELECT version FROM forge_schema").fetchall() == [(schema.LATEST,)]
        indexes = {r[0] for r in con.execute("SELECT index_name FROM duckdb_indexes()").fetchall()}
    finally:
        con.close()
    assert {"part_message", "session_message_message", "session_name"} <= indexes


def test_a_fresh_file_gets_every_step(tmp_path):
    path = tmp_path / "deep" / "er" / "fresh.duckdb"  # the folder is created too
    DuckDBStore(path)
    con = duckdb.connect(str(path), read_only=True)
    try:
        assert con.execute("SELECT version FROM forge_schema").fetchone() == (schema.LATEST,)
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    finally:
        con.close()
    assert {"session", "message", "part", "session_message", "event", "forge_schema"} <= tables
    assert schema.LATEST >= 2 and [m.version for m in schema.MIGRATIONS] == list(
        range(1, schema.LATEST + 1))


def test_every_table_carries_the_tenant(tmp_path):
    path = tmp_path / "t.duckdb"
    DuckDBStore(path)
    con = duckdb.connect(str(path), read_only=True)
    try:
        for table in TENANT_TABLES:
            columns = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]
            assert columns[0] == "tenant_id", table
    finally:
        con.close()


def test_default_path_is_under_home_unless_forge_db_says_otherwise(monkeypatch, tmp_path):
    monkeypatch.delenv("FORGE_DB", raising=False)
    assert default_db_path() == Path.home() / ".forge" / "forge.duckdb"
    monkeypatch.setenv("FORGE_DB", str(tmp_path / "elsewhere" / "mine.duckdb"))
    assert default_db_path() == tmp_path / "elsewhere" / "mine.duckdb"
    store = DuckDBStore()
    assert store.path == tmp_path / "elsewhere" / "mine.duckdb" and store.path.exists()


# -- paths the OS refuses, and files damaged after they were opened ------------------------


def _refused(path: Path) -> str:
    with pytest.raises(StoreUnreadable) as caught:
        DuckDBStore(path)
    message = str(caught.value)
    assert str(path) in message
    assert "FORGE_DB" in message  # and where to point it instead
    return message


def test_a_directory_at_the_path_is_refused_naming_it(tmp_path):
    path = tmp_path / "forge.duckdb"
    path.mkdir()
    (path / "keep.txt").write_text("mine")
    message = _refused(path)
    assert "is a directory, not a database file" in message
    assert str(path / "forge.duckdb") in message  # a file it could name instead
    assert [p.name for p in path.iterdir()] == ["keep.txt"]


def test_a_pipe_at_the_path_is_refused_at_once_rather_than_read_forever(tmp_path):
    path = tmp_path / "forge.duckdb"
    os.mkfifo(path)
    t = time.perf_counter()
    assert "not a regular file" in _refused(path)
    assert time.perf_counter() - t < 5


@pytest.mark.parametrize("shape", ["name", "path"])
def test_a_path_longer_than_the_os_allows_is_refused_with_what_to_do(tmp_path, shape):
    if shape == "name":
        path = tmp_path / ("x" * 300 + ".duckdb")
    else:
        path = tmp_path.joinpath(*["d" * 200] * 25) / "forge.duckdb"
    message = _refused(path)
    assert "ENAMETOOLONG" in message and "shorter path" in message
    assert list(tmp_path.iterdir()) == []  # nothing was created


def test_a_file_where_a_folder_should_be_is_refused(tmp_path):
    (tmp_path / "notes").write_text("a file")
    message = _refused(tmp_path / "notes" / "forge.duckdb")
    assert "is a file, not a folder" in message
    assert (tmp_path / "notes").read_text() == "a file"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_refused_with_what_to_do(tmp_path):
    path = tmp_path / "forge.duckdb"
    DuckDBStore(path)
    path.chmod(0)
    try:
        assert "read and write access" in _refused(path)
    finally:
        path.chmod(0o644)


def test_a_half_truncated_database_is_refused_at_first_use_and_left_untouched(tmp_path):
    path = tmp_path / "half.duckdb"
    store = DuckDBStore(path)
    for i in range(200):  # enough rows for several blocks, the tail of them cut off below
        store.create_session(SessionInfo(name=f"s{i}", metadata={"pad": "x" * 1000}))
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    before = _digest(path)
    with pytest.raises(StoreUnreadable) as caught:
        # the header is intact, so opening may pass; reading or writing the rest may not
        again = DuckDBStore(path)
        again.create_session(SessionInfo(name="one more"))
        again.list_sessions(limit=500)
    message = str(caught.value)
    assert str(path) in message
    assert "damaged" in message or "could not be opened" in message
    assert "restore it from a backup" in message or "move it away" in message
    assert _digest(path) == before
