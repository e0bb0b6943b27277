"""SQL a person or the model writes, on a PostgreSQL store: one tenant's rows, read only, timed.

On PostgreSQL a login role may be shared by every tenant (unpinned): SQL run on its connection
could ``set_config('forge.tenant', …)`` and read another tenant's rows. So ``forge.sql`` (and
``%forge sql``, which calls it) never runs there: the tenant's rows are copied out through the
store's own tenant-scoped query and the text runs in a locked DuckDB (store/sandbox.py). Tenant
A asks with every spelling that would matter on PostgreSQL or on DuckDB — qualified names,
CTEs, ``set_config``, ``current_setting``, ``SET ROLE``, ``RESET``, comments, case, quoting,
the copies' own files — through an unpinned and through a pinned role, after tenant B's copy
is in the same process: nothing of B comes back.
"""

from __future__ import annotations

import time
import uuid

import duckdb
import psycopg
import pytest

from forge_jupyter import Forge, frames
from forge_jupyter.errors import ForgeError
from forge_jupyter.message import SessionInfo
from forge_jupyter.store.postgres.store import PostgresStore
from forge_jupyter.store.query.check import ReadOnlySQL
from forge_jupyter.store.query.timeout import QueryTimeout
from tests.store.pg_tenants import turn

B_SECRET = "tenant-b-secret-4242"


@pytest.fixture(scope="module")
def tenants(pg):
    """B's rows (one session, one turn) and A's; B has queried, so B's copy exists here too.
    Yields A's stores: one on the shared role, one on A's pinned role, and B's secrets."""
    db, shared, alice, bob = pg
    b = PostgresStore(bob.dsn, tenant_id="b")
    sb = b.create_session(SessionInfo(name=f"secret-{uuid.uuid4().hex}"))
    mb = turn(b, sb, B_SECRET)
    a_shared = PostgresStore(shared.dsn, tenant_id="a")
    sa = a_shared.create_session(SessionInfo(name="mine"))
    turn(a_shared, sa, "a's own words")
    assert B_SECRET in b.sql("SELECT text FROM parts").to_string()  # B's copy, in this process
    a_pinned = PostgresStore(alice.dsn, tenant_id="a")
    yield {"shared": a_shared, "pinned": a_pinned}, [B_SECRET, sb.name, sb.id, mb.id], db
    for store in (a_shared, a_pinned, b):
        store.close()


SPELLINGS = [
    "SELECT * FROM part",
    "SELECT * FROM public.part",
    'SELECT * FROM "public"."part"',
    "SELECT * FROM PUBLIC.PART",
    'SELECT * FROM "part"',
    "SeLeCt * FrOm PaRtS",
    "SELECT * FROM forge.public.part",
    "SELECT * FROM memory.main.part",
    "SELECT * FROM main.part WHERE tenant_id = 'b' OR true",
    "WITH part AS (SELECT * FROM public.part) SELECT * FROM part",
    "WITH x AS (WITH y AS (SELECT * FROM message) SELECT * FROM y) SELECT * FROM x",
    "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 3) "
    "SELECT * FROM r, session",
    "SELECT set_config('forge.tenant', 'b', false)",
    "SELECT set_config('forge.tenant', 'b', false), * FROM part",
    "SELECT set_config('forge.tenant', 'b', false); SELECT * FROM part",
    "SELECT current_setting('forge.tenant')",
    "SELECT current_setting('forge.tenant'), * FROM session",
    "SET ROLE postgres",
    "SET ROLE postgres; SELECT * FROM part",
    "SET forge.tenant = 'b'",
    "SET LOCAL forge.tenant TO 'b'",
    "RESET forge.tenant",
    "RESET ALL",
    "/* set_config('forge.tenant','b',false) */ SELECT * FROM parts -- x\n WHERE true",
    "SELECT * FROM parts /* ; SELECT set_config('forge.tenant', 'b', false) */",
    "SELECT * FROM pg_catalog.pg_stats",
    "SELECT * FROM pg_stats",
    "SELECT * FROM dblink('dbname=forge', 'SELECT * FROM part') AS t(x text)",
    "ATTACH 'dbname=forge' AS pg (TYPE postgres)",
    "SELECT * FROM postgres_scan('dbname=forge', 'public', 'part')",
    "SELECT * FROM query_table('part')",
    "SELECT * FROM query('SELECT * FROM part')",
    "SELECT * FROM read_parquet('{tmp}/forge-sql-*/part.parquet')",
    "SELECT * FROM '{tmp}/forge-sql-*/part.parquet'",
    "SELECT * FROM read_csv('{tmp}/forge-sql-*/part.csv')",
    "SELECT * FROM glob('{tmp}/forge-sql-*/*')",
    "SELECT * FROM duckdb_databases()",
    "SELECT * FROM information_schema.tables",
    "SHOW ALL TABLES",
]


@pytest.mark.parametrize("role", ["shared", "pinned"])
@pytest.mark.parametrize("spelling", SPELLINGS)
def test_no_spelling_shows_tenant_a_any_row_of_b(tenants, role, spelling):
    import tempfile

    stores, secrets, _ = tenants
    store = stores[role]
    try:
        frame = store.sql(spelling.replace("{tmp}", tempfile.gettempdir()))
    except (ForgeError, duckdb.Error):
        return  # refused, or no such name: nothing shown
    shown = frame.astype(str).to_string()
    assert not [s for s in secrets if s in shown], shown
    if "tenant_id" in frame:
        assert set(frame["tenant_id"]) <= {"a"}
    # and the next transaction of the store is a's alone
    assert {i.name for i in store.list_sessions().items} == {"mine"}


def test_a_sees_its_own_rows_through_either_role(tenants):
    stores, _, _ = tenants
    for store in stores.values():
        frame = store.sql("SELECT s.name, p.text FROM sessions s JOIN parts p "
                          "ON p.session_id = s.session_id")
        assert frame.to_dict("records") == [{"name": "mine", "text": "a's own words"}]


@pytest.mark.parametrize("query", [
    "DELETE FROM part",
    "UPDATE session SET name = 'x'",
    "INSERT INTO event VALUES ('a', 'evt_x', NULL, 'abort', 'me', now(), NULL)",
    "CREATE TABLE x AS SELECT * FROM part",
    "DROP VIEW costs",
    "COPY part TO '/tmp/forge-leak.csv'",
    "WITH d AS (DELETE FROM part RETURNING *) SELECT * FROM d",
    "SELECT 1; DELETE FROM part",
])
def test_writes_and_ddl_are_refused_and_change_nothing(tenants, query):
    stores, _, _ = tenants
    store = stores["shared"]
    with pytest.raises(ReadOnlySQL, match="read-only SELECT"):
        store.sql(query)
    assert [len(m.parts) for s in store.list_sessions().items
            for m in store.iter_timeline(s.id)] == [1]


def test_a_query_past_the_statement_timeout_is_stopped(pg, tenants):
    _, shared, _, _ = pg
    store = PostgresStore(shared.dsn, tenant_id="a", statement_timeout=0.5)
    try:
        started = time.perf_counter()
        with pytest.raises(QueryTimeout, match="statement timeout"):
            store.sql("SELECT count(*) FROM range(100000000000) a, part")
        assert time.perf_counter() - started < 10
        assert store.sql("SELECT count(*) AS n FROM part")["n"][0] == 1  # the copy still works
    finally:
        store.close()


@pytest.mark.parametrize("read", [
    lambda store: store.sql("SELECT count(*) AS n FROM part")["n"][0],  # the copy, taken out
    lambda store: len(frames.parts(store)),  # a DataFrame, run in PostgreSQL
], ids=["forge.sql copy", "dataframe"])
def test_postgresql_past_the_statement_timeout_says_so(pg, tenants, read):
    """PostgreSQL's side: every read runs in a transaction with the statement timeout (here
    it waits on a lock the owner holds; a huge table would take as long)."""
    db, shared, _, _ = pg
    store = PostgresStore(shared.dsn, tenant_id="a", statement_timeout=0.5)
    try:
        with psycopg.connect(db.owner_dsn) as owner:
            owner.execute("LOCK TABLE part IN ACCESS EXCLUSIVE MODE")
            with pytest.raises(QueryTimeout, match="statement timeout"):
                read(store)
            owner.rollback()
        assert read(store) == 1
    finally:
        store.close()


def test_forge_sql_on_a_postgres_url(pg, tenants):
    """``forge.sql`` — what ``%forge sql`` runs — on a Forge opened with a postgresql:// URL."""
    _, shared, _, _ = pg
    _, secrets, _ = tenants
    forge = Forge(db=shared.dsn, tenant="a", load_plugins=False)
    try:
        frame = forge.sql("SELECT name, messages FROM sessions")
        assert frame.to_dict("records") == [{"name": "mine", "messages": 1}]
        shown = forge.sql("SELECT * FROM parts").to_string()
        assert not [s for s in secrets if s in shown]
        assert list(forge.costs(by="day").columns)[:2] == ["day", "steps"]
    finally:
        forge.close()


def test_the_copy_holds_what_each_query_asked_and_stays_current(pg):
    """Tables are copied as queries name them (a query of sessions copies no part), each
    later query checks only the tables the copy holds, and a write to any of them is seen."""
    _, shared, _, _ = pg
    store = PostgresStore(shared.dsn, tenant_id="c")
    try:
        session = store.create_session(SessionInfo(name="c-1"))
        assert list(store.sql("SELECT name FROM session")["name"]) == ["c-1"]
        turn(store, session, "first words")
        assert list(store.sql("SELECT text FROM parts")["text"]) == ["first words"]
        assert list(store.sql("SELECT name FROM session")["name"]) == ["c-1"]
        turn(store, session, "second words")  # part and message change, session too
        assert len(store.sql("SELECT * FROM part")) == 2
        store.create_session(SessionInfo(name="c-2"))  # only the session table changes
        assert sorted(store.sql("SELECT name FROM sessions")["name"]) == ["c-1", "c-2"]
        found = store.sql("SELECT s.name, count(p.part_id) AS n FROM sessions s LEFT JOIN "
                          "parts p USING (session_id) GROUP BY ALL ORDER BY ALL")
        assert found.to_dict("records") == [{"name": "c-1", "n": 2}, {"name": "c-2", "n": 0}]
    finally:
        store.close()
