"""The index in the store: updated incrementally, the same SQL and scores on every backend."""

from __future__ import annotations

import os

import pytest

from forge_jupyter.memory import LongTermMemory
from forge_jupyter.store.duckdb.store import DuckDBStore
from forge_jupyter.store.inmemory.store import MemoryStore
from tests.memory.memory_fixture import FIXTURE, TODAY, write_fixture


def test_editing_one_file_reindexes_only_that_file(keyword_memory, folder):
    first = keyword_memory.sync()
    assert sorted(first.indexed) == sorted(FIXTURE) and first.unchanged == 0
    rows_before = {p: s.sha256 for p, s in keyword_memory.index.files().items()}

    log = folder / "2026-11-28.md"
    log.write_text(log.read_text() + "\nThe churn dashboard refreshes at 06:00 UTC.\n")
    second = keyword_memory.sync()
    assert second.indexed == ["2026-11-28.md"]
    assert second.unchanged == len(FIXTURE) - 1 and second.removed == []
    rows_after = {p: s.sha256 for p, s in keyword_memory.index.files().items()}
    assert {p for p in rows_after if rows_after[p] != rows_before[p]} == {"2026-11-28.md"}
    assert keyword_memory.search("dashboard refreshes", today=TODAY).hits[0].path == "2026-11-28.md"

    assert keyword_memory.sync().indexed == []  # nothing changed: nothing read again


def test_a_new_time_with_the_same_bytes_is_not_reindexed(keyword_memory, folder):
    keyword_memory.sync()
    chunk_ids = _chunk_ids(keyword_memory, "MEMORY.md")
    stat = (folder / "MEMORY.md").stat()
    os.utime(folder / "MEMORY.md", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    report = keyword_memory.sync()
    assert report.indexed == [] and report.unchanged == len(FIXTURE)
    assert _chunk_ids(keyword_memory, "MEMORY.md") == chunk_ids  # the same rows, kept


def test_a_removed_file_leaves_the_index(keyword_memory, folder):
    keyword_memory.sync()
    (folder / "notes" / "deploy.md").unlink()
    report = keyword_memory.sync()
    assert report.removed == ["notes/deploy.md"] and report.indexed == []
    hits = keyword_memory.search("make release dashboard", today=TODAY).hits
    assert all(h.path != "notes/deploy.md" for h in hits)


def test_the_first_use_creates_the_folder_and_memory_md_from_the_template(store, tmp_path):
    memory = LongTermMemory(store, tmp_path / "nb" / ".forge" / "memory")
    assert not (tmp_path / "nb").exists()  # nothing on disk before the first use
    assert memory.search("anything at all").hits == []
    text = (tmp_path / "nb" / ".forge" / "memory" / "MEMORY.md").read_text()
    assert text.startswith("# MEMORY.md") and "memory_search" in text
    (memory.path / "MEMORY.md").write_text("# Mine\nkept as written\n")
    memory.search("kept")
    assert (memory.path / "MEMORY.md").read_text() == "# Mine\nkept as written\n"


def test_tenants_and_folders_have_indexes_of_their_own(tmp_path):
    path = tmp_path / "shared.duckdb"
    a_folder = write_fixture(tmp_path / "a", {"MEMORY.md": "alpha secret recipe\n"})
    b_folder = write_fixture(tmp_path / "b", {"MEMORY.md": "beta notes\n"})
    with DuckDBStore(path, tenant_id="alice") as alice, DuckDBStore(path, tenant_id="bob") as bob:
        LongTermMemory(alice, a_folder).sync()
        assert LongTermMemory(bob, a_folder).index.files() == {}  # bob never indexed it
        assert LongTermMemory(alice, b_folder).search("alpha recipe").hits == []
        assert LongTermMemory(alice, a_folder).search("alpha recipe").hits


def _chunk_ids(memory: LongTermMemory, path: str) -> set[str]:
    hits = memory.index.chunks([cid for cid, _ in memory.index.keyword(
        ["the", "a", "facts", "data"], 100)])
    return {c.id for c in hits.values() if c.path == path}


def _scores(store, folder) -> list[tuple[str, int, float]]:
    memory = LongTermMemory(store, folder)
    return [(h.path, h.start_line, round(h.score, 9))
            for q in ("churn model", "highest revenue region", "polars joins", "deploy release")
            for h in memory.search(q, k=5, today=TODAY).hits]


def test_the_bm25_sql_gives_the_same_scores_on_duckdb_and_the_memory_store(folder, tmp_path):
    with DuckDBStore(tmp_path / "x.duckdb") as duck:
        assert _scores(MemoryStore(), folder) == _scores(duck, folder)


def _hybrid(store, folder, server) -> list[tuple[str, int, float]]:
    memory = LongTermMemory(store, folder, embedding_model="openai/fake-embedding",
                            litellm_kwargs={"api_base": server.openai_base, "api_key": "sk-fake"})
    out = []
    for q in ("churn model", "highest revenue region", "deploy release"):
        result = memory.search(q, k=5, today=TODAY)
        assert result.mode == "hybrid"
        out += [(h.path, h.start_line, round(h.score, 4)) for h in result.hits]
    return out


def test_the_same_sql_serves_postgresql(folder, tmp_path, pg_empty, fake_model_server):
    from forge_jupyter.store.postgres.store import PostgresStore

    _, app = pg_empty  # the run's migrated database, emptied (tests/pg_cluster.py)
    pg = PostgresStore(app.dsn, tenant_id="alice", pool_size=2)
    other = PostgresStore(app.dsn, tenant_id="bob", pool_size=2)
    try:
        assert _scores(pg, folder) == _scores(MemoryStore(), folder)
        # vectors: REAL[] rows and array_cosine_similarity (a SQL function on PostgreSQL)
        assert _hybrid(pg, folder, fake_model_server) == _hybrid(MemoryStore(), folder,
                                                                fake_model_server)
        # row-level security: another tenant sees no row of the index, whatever it asks
        with other.memory_index() as con:
            assert con.execute("SELECT count(*) FROM memory_chunk").fetchone() == (0,)
            assert con.execute("SELECT count(*) FROM memory_term").fetchone() == (0,)
        edited = folder / "MEMORY.md"
        edited.write_text(edited.read_text() + "\nThe churn model retrains on Sundays.\n")
        assert LongTermMemory(pg, folder).sync().indexed == ["MEMORY.md"]
    finally:
        pg.close()
        other.close()


def test_two_hosts_indexing_one_file_at_once_leave_one_copy(folder, pg_empty):
    """PostgreSQL: a file another host is indexing (its transaction still open) is refused
    once that one commits, never inserted twice (the unique index of schema step 5)."""
    import threading
    import time

    import psycopg

    from forge_jupyter.store.postgres.store import PostgresStore

    _, app = pg_empty  # the run's migrated database, emptied (tests/pg_cluster.py)
    pg = PostgresStore(app.dsn, tenant_id="alice", pool_size=2)
    memory = LongTermMemory(pg, folder)
    try:
        with psycopg.connect(app.dsn) as other:  # the other host, mid-index of MEMORY.md
            other.execute("SELECT set_config('forge.tenant', 'alice', true)")
            other.execute("INSERT INTO memory_file VALUES ('alice', %s, 'MEMORY.md', 1, 1, 'x', "
                          "NULL, 0, now())", [str(memory.path)])
            done: list = []
            worker = threading.Thread(target=lambda: done.append(memory.sync()))
            worker.start()
            time.sleep(1.0)  # our sync reaches MEMORY.md and waits on the other's row
            other.commit()
        worker.join(30)
        [report] = done
        with pg.memory_index() as con:
            rows = con.execute("SELECT count(*) FROM memory_file WHERE path = 'MEMORY.md'"
                               ).fetchone()
        assert rows == (1,)
        assert "MEMORY.md" in report.indexed or dict(report.skipped)["MEMORY.md"] == (
            "being indexed by another process")
    finally:
        pg.close()


def test_sql_a_person_or_the_model_writes_cannot_reach_the_index(folder, tmp_path):
    from forge_jupyter import Forge

    with Forge(db=tmp_path / "f.duckdb", memory_dir=folder, builtin_tools=False) as forge:
        forge.memory_search("churn")
        for query in ("SELECT text FROM memory_chunk", "SELECT * FROM main.memory_term",
                      "SELECT * FROM f.main.memory_file", 'SELECT * FROM "MEMORY_CHUNK"'):
            with pytest.raises(Exception, match="does not exist"):
                forge.sql(query)
