"""PostgreSQL: tenants kept apart by the database, not only by the package's queries.

Through the API (``Forge`` with a ``postgresql://`` URL), through a query that forgot its
tenant predicate, and through SQL written on A's own connection (qualified names, CTEs,
functions, statistics views, ``SET ROLE``, ``RESET`` of the tenant setting, a pinned role
setting another tenant). The stores log in as application roles that own nothing; the
schema is made by the database's owner, as a DBA would (store/postgres/schema.py).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest
from psycopg import errors as pg_errors

from forge_jupyter import Forge
from forge_jupyter.errors import (
    AccessRefused,
    DuplicateId,
    NotFound,
    SessionDeleted,
    StoreUnreadable,
)
from forge_jupyter.message import SessionInfo
from forge_jupyter.store.postgres.store import PostgresStore, UnsafeRole
from forge_jupyter.store.sql.tables import TENANT_TABLES
from tests.store.pg_tenants import turn


def in_threads(work: Callable[[int], None], n: int) -> None:
    """``work(0)`` … ``work(n - 1)`` at once, each in a thread; the first error is raised."""
    with ThreadPoolExecutor(n) as pool:
        list(pool.map(work, range(n)))


@pytest.fixture
def two(pg):
    """Tenant a (pinned role) and b (pinned role), each with a session and one turn."""
    db, shared, alice, bob = pg
    a = PostgresStore(alice.dsn, tenant_id="a")
    b = PostgresStore(bob.dsn, tenant_id="b")
    sa, sb = a.create_session(SessionInfo()), b.create_session(SessionInfo(name=f"secret-{uuid.uuid4().hex}"))
    ma, mb = turn(a, sa, "a's words"), turn(b, sb, "b's secret")
    yield a, b, (sa, ma), (sb, mb)
    a.close()
    b.close()


def test_forge_with_a_postgres_url_keeps_tenants_apart(pg, monkeypatch):
    db, shared, _, _ = pg
    theirs = Forge(db=shared.dsn, tenant="b-forge", load_plugins=False)
    mine = Forge(db=shared.dsn, tenant="a-forge", load_plugins=False)
    try:
        assert isinstance(mine.store, PostgresStore)
        session = theirs.store.create_session(SessionInfo(name="theirs"))
        message = turn(theirs.store, session, "private")
        assert mine.store.list_sessions().items == []
        for read in (mine.store.get_session, mine.store.timeline, mine.store.timeline_length,
                     mine.store.delete_session, mine.store.unfinished_messages):
            with pytest.raises(NotFound):
                read(session.id)
        with pytest.raises(NotFound):
            mine.store.find_session("theirs")
        with pytest.raises(NotFound):
            mine.store.get_message(message.id)
        with pytest.raises(NotFound):
            mine.store.get_part(message.parts[0].id)
        with pytest.raises(NotFound):
            mine.store.fork(session.id, message.id, SessionInfo())
        with pytest.raises(NotFound):
            mine.store.acquire_lease(session.id, "me", 60)
        with pytest.raises(NotFound):
            turn(mine.store, session, "into theirs")
        with pytest.raises(DuplicateId):  # ids are global: a collision, never an overwrite
            mine.store.create_session(SessionInfo(id=session.id))
        assert [m.id for m in theirs.store.iter_timeline(session.id)] == [message.id]
        assert theirs.store.get_message(message.id).parts[0].text == "private"
    finally:
        mine.close()
        theirs.close()


def test_jupyterhub_user_is_the_tenant_when_none_is_configured(pg, monkeypatch):
    db, shared, _, _ = pg
    monkeypatch.setenv("JUPYTERHUB_USER", "hub-carol")
    monkeypatch.setenv("FORGE_DB", shared.dsn)
    forge = Forge(load_plugins=False)
    try:
        assert isinstance(forge.store, PostgresStore) and forge.store.tenant_id == "hub-carol"
    finally:
        forge.close()
    forge = Forge(tenant="team-x", load_plugins=False)
    try:
        assert forge.store.tenant_id == "team-x"
    finally:
        forge.close()


def test_a_query_without_its_tenant_predicate_still_sees_one_tenant(two):
    a, b, (sa, ma), (sb, mb) = two
    with a._tx() as con:
        for table in TENANT_TABLES:
            tenants = {r[0] for r in con.execute(f"SELECT tenant_id FROM {table}").fetchall()}
            assert tenants <= {"a"}, table
        # writes without a predicate touch only a's rows; a row for b is refused
        assert con.execute("UPDATE session SET title = title RETURNING id").fetchall() == [
            (sa.id,)]
        with pytest.raises(pg_errors.InsufficientPrivilege):
            con.execute("INSERT INTO event (tenant_id, id, type, actor, created_at) "
                        "VALUES ('b', 'evt_forged', 'abort', 'x', now())")
    assert b.timeline_length(sb.id) == 1 and b.get_message(mb.id) == mb


ATTACKS = [
    "SELECT tenant_id, id FROM session",
    "SELECT tenant_id, id FROM public.session",
    'SELECT tenant_id, id FROM "public"."session" WHERE tenant_id = \'b\' OR true',
    "TABLE message",
    "SELECT tenant_id, id FROM ONLY part",
    "WITH x AS (SELECT * FROM message) SELECT tenant_id, id FROM x",
    "WITH RECURSIVE x(t, i) AS (SELECT tenant_id, id FROM event UNION SELECT t, i FROM x) "
    "SELECT * FROM x",
    "SELECT 'b', (SELECT count(*) FROM part WHERE tenant_id = 'b') WHERE "
    "(SELECT count(*) FROM part WHERE tenant_id = 'b') > 0",
    "SELECT 'b', json_agg(m)::text FROM message m WHERE m.tenant_id = 'b' HAVING count(*) > 0",
    "SELECT 'b', data::text FROM part /* comment */ WHERE data::text LIKE '%secret%'",
    "SELECT 'b', most_common_vals::text FROM pg_stats WHERE tablename IN "
    "('session', 'message', 'part') AND most_common_vals::text LIKE '%b%'",
    "SELECT 'b', 1 FROM session WHERE name LIKE 'secret%'",
]


@pytest.mark.parametrize("query", ATTACKS)
def test_sql_on_a_connection_reads_no_row_of_b(two, pg, query):
    a, _, _, _ = two
    db = pg[0]
    with psycopg.connect(db.owner_dsn, autocommit=True) as owner:
        owner.execute("ANALYZE")  # statistics exist: pg_stats must still show nothing of b
    with a.reading() as con:
        rows = con.execute(query).fetchall()
    # a row names its tenant first; the probes for b's data answer 'b' when they find any
    assert all(r[0] == "a" for r in rows), rows


@pytest.mark.parametrize("escape", [
    "RESET forge.tenant",
    "SELECT set_config('forge.tenant', '', true)",
    "SELECT set_config('forge.tenant', 'b', true)",   # a pinned role cannot act for b
    "SET LOCAL forge.tenant = 'b'",
    "SET LOCAL forge.tenant TO 'B'",
    "SET forge.tenant = ' b '",
])
def test_changing_the_tenant_setting_on_a_pinned_role_reaches_nothing(two, escape):
    a, _, _, (sb, mb) = two
    with a.reading() as con:
        con.execute(escape)
        for table in TENANT_TABLES:
            found = con.execute(f"SELECT tenant_id FROM {table} WHERE tenant_id <> 'a'").fetchall()
            assert found == [], (escape, table)
    # and the next transaction on the same pooled connection is a's again, never b's
    with a.hold():
        assert a.timeline_length(a.list_sessions().items[0].id) == 1
        with pytest.raises(NotFound):
            a.get_message(mb.id)


@pytest.mark.parametrize("escape, error", [
    ("SET ROLE {owner}", pg_errors.InsufficientPrivilege),
    ("SET SESSION AUTHORIZATION {owner}", pg_errors.InsufficientPrivilege),
    ("ALTER TABLE session DISABLE ROW LEVEL SECURITY", pg_errors.InsufficientPrivilege),
    ("ALTER TABLE part NO FORCE ROW LEVEL SECURITY", pg_errors.InsufficientPrivilege),
    ("DROP POLICY tenant_rows ON message", pg_errors.InsufficientPrivilege),
    ("CREATE POLICY mine ON message USING (true)", pg_errors.InsufficientPrivilege),
    ("SELECT * FROM forge_tenant_role", pg_errors.InsufficientPrivilege),
    ("INSERT INTO forge_tenant_role VALUES (session_user, 'b')", pg_errors.InsufficientPrivilege),
    ("CREATE TABLE public.session_copy AS SELECT 1", pg_errors.InsufficientPrivilege),
])
def test_what_the_application_role_may_not_do_even_in_a_write(two, pg, escape, error):
    a, _, _, _ = two
    # the database's refusal reaches a person as one line (store/postgres/refusals.py)
    with pytest.raises(AccessRefused, match="may not do this") as refused, a._tx() as con:
        con.execute(escape.format(owner=f'"{pg[0].owner}"'))
    assert isinstance(refused.value.__cause__, error)


@pytest.mark.parametrize("escape, error", [
    ("DELETE FROM session", pg_errors.ReadOnlySqlTransaction),
    ("UPDATE part SET data = '{}'", pg_errors.ReadOnlySqlTransaction),
    ("SELECT pg_sleep(5)", pg_errors.QueryCanceled),
])
def test_reading_is_read_only_and_timed(two, escape, error):
    a, _, _, _ = two
    a.statement_timeout = 0.3
    with pytest.raises(error), a.reading() as con:
        con.execute(escape)


def test_a_role_that_could_see_past_the_policies_is_refused(pg):
    db = pg[0]
    with pytest.raises(UnsafeRole, match="owns"):
        PostgresStore(db.owner_dsn, tenant_id="a")
    with pytest.raises(UnsafeRole, match="superuser"):
        PostgresStore(db.admin_dsn, tenant_id="a")


def test_a_database_without_the_schema_says_how_to_create_it(pg_database):
    app = pg_database.create_app_role()
    with pytest.raises(StoreUnreadable, match=r"postgres\.schema OWNER_URL APP_ROLE"):
        PostgresStore(app.dsn, tenant_id="a")


def test_the_lease_is_a_compare_and_swap_across_connections(two):
    a, _, (sa, _), _ = two
    stores = [PostgresStore(a.dsn, tenant_id="a") for _ in range(8)]
    barrier = threading.Barrier(len(stores))
    won: list[str] = []

    def race(i: int) -> None:
        barrier.wait()
        if stores[i].acquire_lease(sa.id, f"kernel-{i}", 60):
            won.append(f"kernel-{i}")

    in_threads(race, len(stores))
    try:
        assert len(won) == 1 and a.lease(sa.id)[0] == won[0]
        a.delete_session(sa.id)
        with pytest.raises(SessionDeleted):
            stores[0].acquire_lease(sa.id, "kernel-0", 60)
    finally:
        for s in stores:
            s.close()


def test_writers_of_one_session_and_of_others_lose_nothing(two):
    a, _, _, _ = two
    shared = a.create_session(SessionInfo())
    stores = [PostgresStore(a.dsn, tenant_id="a") for _ in range(4)]
    own = [s.create_session(SessionInfo()) for s in stores]

    def write(i: int) -> None:
        for _ in range(25):
            turn(stores[i], shared, f"shared {i}")
            turn(stores[i], own[i], f"own {i}")

    in_threads(write, len(stores))  # an error of any writer is raised here
    try:
        assert a.timeline_length(shared.id) == 100
        timeline = list(a.iter_timeline(shared.id))
        assert len({m.id for m in timeline}) == 100 and all(len(m.parts) == 1 for m in timeline)
        assert [a.timeline_length(s.id) for s in own] == [25] * 4
    finally:
        for s in stores:
            s.close()


def test_after_a_server_restart_the_store_goes_on(two, pg_cluster):
    a, _, (sa, ma), _ = two
    with a.hold():  # the pool now holds a connection the restart will cut
        assert a.timeline_length(sa.id) == 1
    pg_cluster.restart(mode="immediate")
    turn(a, sa, "after the restart")  # the dead pooled connection is replaced, once
    assert [m.id for m in a.iter_timeline(sa.id)][0] == ma.id
    assert a.timeline_length(sa.id) == 2
