"""SQL a person writes cannot reach another tenant, however a table is spelt (issue 10, item 2).

Two Forges, tenants A and B, share one DuckDB file (and, for the memory backend, one memory
database); each ran a real prompt through litellm and the fake model server. B's ``forge.sql``
/ ``store.sql`` with every spelling that reached past the old name-shadowing must return none
of A's prompts, answers, session names or ids — or fail. The same for every frame, for
``export_parquet`` and for ids of A handed to B's API.
"""

from __future__ import annotations

import gc
import os

import duckdb
import pandas as pd
import pytest

from forge_jupyter.errors import ForgeError, NotFound
from forge_jupyter.message import SessionInfo
from forge_jupyter.store.inmemory.store import MemoryDatabase, MemoryStore
from forge_jupyter.store.query import sandbox
from forge_jupyter.store.query.check import ReadOnlySQL
from forge_jupyter.store.sql.views import VIEW_NAMES
from forge_jupyter.testing import Turn
from tests.frames.frames_helpers import make_forge

A_SESSION, A_PROMPT, A_ANSWER = "alpha-private-plans", "tenant A prompt 7731", "tenant A answer 9911"
B_SESSION, B_PROMPT, B_ANSWER = "beta-own-work", "tenant B prompt 4242", "tenant B answer 5353"

SPELLINGS = [
    "SELECT * FROM session",
    "SELECT * FROM main.session",
    "SELECT * FROM forge.session",
    "SELECT * FROM forge.main.session",
    'SELECT * FROM "forge"."main"."session"',
    "SELECT * FROM FORGE.MAIN.SESSION",
    "SELECT * FROM memory.main.session",
    "SELECT * FROM memory.session",
    "SELECT * FROM system.main.session",
    "SELECT * FROM temp.main.session",
    "SELECT * FROM forge.main.part",
    "SELECT * FROM main.part",
    "SELECT * FROM forge.parts",
    "SELECT * FROM forge.main.turns",
    "SELECT * FROM forge.main.sessions",
    "SELECT * FROM forge.main.session_message",
    "SELECT * FROM forge.main.event",
    "WITH s AS (SELECT * FROM forge.main.session) SELECT * FROM s",
    "WITH part AS (SELECT * FROM main.part) SELECT * FROM part",
    "WITH x AS (WITH y AS (SELECT * FROM forge.main.message) SELECT * FROM y) SELECT * FROM x",
    "SELECT * FROM (SELECT * FROM forge.main.part) AS p",
    "SELECT (SELECT string_agg(name, ',') FROM forge.main.session) AS names",
    "SELECT * FROM part WHERE id IN (SELECT id FROM forge.main.part)",
    "SELECT * FROM parts UNION ALL SELECT * FROM forge.main.parts",
    "SELECT * FROM query_table('session')",
    "SELECT * FROM query_table('forge.main.session')",
    "SELECT * FROM query_table(['session', 'forge.main.session'])",
    "SELECT * FROM query('SELECT * FROM forge.main.session')",
    "SELECT * FROM json_execute_serialized_sql(json_serialize_sql("
    "'SELECT * FROM forge.main.session'))",
    "SELECT * FROM duckdb_databases()",
    "SELECT * FROM duckdb_tables()",
    "SELECT * FROM duckdb_views()",
    "SELECT * FROM information_schema.tables",
    "SHOW ALL TABLES",
    "SELECT * FROM read_parquet('*.parquet')",
    "SELECT * FROM read_text('{db}')",
    "SELECT * FROM read_blob('{db}')",
    "SELECT * FROM read_duckdb('{db}', table_name := 'session')",
    "SELECT * FROM '{db}'",
    "ATTACH '{db}' AS again (READ_ONLY)",
    "USE forge",
    "SET search_path = 'forge.main'",
    "SELECT * FROM forge.main.session; SELECT 1",
    "/* hi */ SELECT * FROM forge -- x\n .main.session",
]


def _two_tenants(kind, server, folder):
    if kind == "duckdb":
        path = folder / "shared.duckdb"
        a = make_forge(server, str(path), tenant="A")
        b = make_forge(server, str(path), tenant="B")
    else:
        path, shared = None, MemoryDatabase()
        a = make_forge(server, MemoryStore(shared, tenant_id="A"))
        b = make_forge(server, MemoryStore(shared, tenant_id="B"))
    server.add(Turn.text(A_ANSWER, usage=(40, 6)))
    a.session(A_SESSION).prompt(A_PROMPT)
    server.add(Turn.text(B_ANSWER, usage=(40, 6)))
    b.session(B_SESSION).prompt(B_PROMPT)
    return a, b, path


@pytest.fixture(scope="module", params=["duckdb", "memory"])
def tenants(request, server, tmp_path_factory):
    """(A, B, path of the shared file or None): two tenants, one prompt each; read only."""
    a, b, path = _two_tenants(request.param, server, tmp_path_factory.mktemp("tenants"))
    yield a, b, path
    a.close()
    b.close()


@pytest.fixture(params=["duckdb", "memory"])
def writable_tenants(request, server, tmp_path):
    """The same, for a test that writes more."""
    a, b, path = _two_tenants(request.param, server, tmp_path)
    yield a, b, path
    a.close()
    b.close()


def _secrets(a) -> list[str]:
    """What tenant A must never show tenant B: texts, its session's name, every id."""
    found = [A_SESSION, A_PROMPT, A_ANSWER]
    for info in a.store.list_sessions().items:
        found.append(info.id)
        for m in a.session(info.id).messages():
            found.append(m.id)
            found.extend(p.id for p in m.parts)
    return found


def _shown(frame: pd.DataFrame) -> str:
    with pd.option_context("display.max_colwidth", None, "display.max_rows", None,
                           "display.max_columns", None):
        return frame.to_string()


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_no_spelling_of_a_name_shows_tenant_b_what_tenant_a_wrote(tenants, spelling):
    a, b, path = tenants
    secrets = _secrets(a)
    query = spelling.replace("{db}", str(path or "forge.duckdb"))
    for run in (b.sql, b.store.sql):
        try:
            frame = run(query)
        except (ForgeError, duckdb.Error):
            continue  # refused, or no such name: nothing shown
        shown = _shown(frame)
        leaked = [s for s in secrets if s in shown]
        assert not leaked, f"{query!r} showed tenant A's {leaked}"
    # B's own rows are still all there
    assert b.sql("SELECT name FROM sessions").name.tolist() == [B_SESSION]
    assert B_ANSWER in _shown(b.sql("SELECT text FROM parts WHERE type = 'text'"))


def test_the_store_is_not_attached_where_the_query_runs(tenants):
    _, b, path = tenants
    databases = b.sql("SELECT database_name, path FROM duckdb_databases()")
    assert set(databases.database_name) == {"memory", "system", "temp"}
    assert str(path) not in _shown(databases)
    assert set(b.sql("SELECT DISTINCT tenant_id FROM part").tenant_id) == {"B"}
    for view in VIEW_NAMES:
        assert set(b.sql(f"SELECT DISTINCT tenant_id FROM {view}").tenant_id) <= {"B"}, view


@pytest.mark.parametrize("query", [
    "WITH x AS (DELETE FROM part RETURNING *) SELECT count(*) AS n FROM x",
    "WITH x AS (UPDATE session SET name = 'mine' RETURNING *) SELECT * FROM x",
    "WITH x AS (INSERT INTO event SELECT * FROM event RETURNING *) SELECT 1",
    "WITH x AS (COPY (SELECT * FROM part) TO 'leak.csv') SELECT 1",
    "EXPLAIN ANALYZE COPY (SELECT * FROM forge.main.part) TO 'leak.csv'",
    "EXPLAIN ANALYZE DELETE FROM forge.main.part",
    "explain  analyze copy (select 1) to 'leak.csv'",
    "SELECT * FROM query('WITH x AS (DELETE FROM part RETURNING *) SELECT 1')",
])
def test_a_select_that_writes_is_refused_and_changes_nothing(tenants, query, tmp_path,
                                                             monkeypatch):
    a, b, _ = tenants
    monkeypatch.chdir(tmp_path)
    before = {t: len(x.sql("SELECT * FROM part")) for t, x in (("a", a), ("b", b))}
    with pytest.raises(ReadOnlySQL, match="exactly one read-only SELECT"):
        b.sql(query)
    assert {t: len(x.sql("SELECT * FROM part")) for t, x in (("a", a), ("b", b))} == before
    assert b.sql("SELECT name FROM session").name.tolist() == [B_SESSION]
    assert not (tmp_path / "leak.csv").exists()


def test_every_frame_of_b_holds_only_b(tenants):
    a, b, _ = tenants
    secrets = _secrets(a)
    frames = [b.sessions(), b.messages(), b.parts(), b.tool_calls(), b.costs(),
              b.costs(by=["day", "model", "agent", "cell"]), b.compactions(), b.context(),
              b.turns(), b.events(), b.history(B_SESSION, include_superseded=True)]
    for frame in frames:
        shown = _shown(frame)
        assert not [s for s in secrets if s in shown], frame.columns.tolist()
    assert A_SESSION not in set(b.sessions().name)


def test_ids_of_tenant_a_mean_nothing_to_tenant_b(tenants):
    a, b, _ = tenants
    theirs = a.store.find_session(A_SESSION).id
    for ask in (lambda: b.messages(session=theirs), lambda: b.history(theirs),
                lambda: b.costs(session=theirs), lambda: b.export_session(theirs, "x.json"),
                lambda: b.messages(session=A_SESSION)):
        with pytest.raises(NotFound):
            ask()
    params = b.sql("SELECT count(*) AS n FROM messages WHERE session_id = ?", [theirs])
    assert params.n[0] == 0


def test_export_parquet_holds_one_tenant_and_takes_only_view_names(tenants, tmp_path):
    a, b, _ = tenants
    secrets = _secrets(a)
    for view in ("sessions", "parts", "turns", "timeline"):
        out = b.export_parquet(view, tmp_path / f"{view}.parquet")
        shown = _shown(pd.read_parquet(out))
        assert not [s for s in secrets if s in shown], view
    for name in ("part", "session", "main.parts", "forge.main.parts", "parts; SELECT 1",
                 "parts --", "(SELECT * FROM forge.main.part)", "Parts"):
        with pytest.raises(ValueError, match="no view named"):
            b.export_parquet(name, tmp_path / "x.parquet")
    assert not (tmp_path / "x.parquet").exists()


def test_the_copy_follows_every_write_and_is_reused_between_them(writable_tenants, server):
    a, b, path = writable_tenants
    first = b.sql("SELECT count(*) AS n FROM messages").n[0]
    assert b.sql("SELECT count(*) AS n FROM messages").n[0] == first
    server.add(Turn.text("B again", usage=(50, 3)))
    b.session(B_SESSION).prompt("once more")
    assert b.sql("SELECT count(*) AS n FROM messages").n[0] == first + 2
    server.add(Turn.text("A again", usage=(50, 3)))
    a.session(A_SESSION).prompt("A writes meanwhile")
    assert b.sql("SELECT count(*) AS n FROM messages").n[0] == first + 2
    # a write inside a long hold is seen too (committed to the write-ahead log, not yet
    # checkpointed into the file)
    with b.store.hold():
        b.store.create_session(SessionInfo(name="held"))
        assert sorted(b.sql("SELECT name FROM sessions").name) == [B_SESSION, "held"]
    if path is not None:
        [copy] = [c for key, c in sandbox._copies.items()
                  if key == (os.path.realpath(path), "B")]
        folder = copy.folder
        stamp = (folder / "session.parquet").stat().st_mtime_ns
        b.sql("SELECT name FROM sessions")
        assert (folder / "session.parquet").stat().st_mtime_ns == stamp  # no new copy
        b.store.create_session(SessionInfo(name="later"))
        assert "later" in set(b.sql("SELECT name FROM sessions").name)
        del copy
        gc.collect()
        assert not folder.exists()  # the replaced copy left nothing behind


def test_a_killed_process_leaves_no_copy_behind_for_long(tmp_path):
    """A kernel stopped with SIGKILL runs no exit handler: the next process removes its copy."""
    import signal
    import subprocess
    import sys
    import tempfile
    import textwrap

    db = tmp_path / "forge.duckdb"
    script = textwrap.dedent(f"""
        import os, sys
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        from forge_jupyter.store.duckdb.store import DuckDBStore
        from forge_jupyter.store.query import sandbox
        DuckDBStore({str(db)!r}).sql("SELECT count(*) AS n FROM messages")
        print(*[c.folder for c in sandbox._copies.values()], flush=True)
        if sys.argv[1] == "die":
            os.kill(os.getpid(), {int(signal.SIGKILL)})
    """)
    killed = subprocess.run([sys.executable, "-c", script, "die"], capture_output=True,
                            text=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL
    [left] = killed.stdout.split()
    assert os.path.isdir(left) and os.path.dirname(left) == tempfile.gettempdir()
    clean = subprocess.run([sys.executable, "-c", script, "live"], capture_output=True,
                           text=True, timeout=120)
    assert clean.returncode == 0, clean.stderr
    [own] = clean.stdout.split()
    assert not os.path.exists(left)  # swept by the next process
    assert not os.path.exists(own)  # removed at its own exit
