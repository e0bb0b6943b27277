"""PostgreSQL as a team uses it: psql on a pinned login role, finished history, retention,
the read-only role for analysts, and the database's refusals said in one line.

Everything a person does here is done as they would: Debian's psql as a subprocess, logged in
as the role the DBA gave them (tests/psql.py). The database is the store tests' ``pg``
(conftest.py): a shared role, alice pinned to tenant ``a``, bob pinned to ``b``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from forge_jupyter import Forge, retention
from forge_jupyter.errors import AccessRefused, Immutable, NotFound, SessionDeleted
from forge_jupyter.message import (
    Event,
    Message,
    SessionInfo,
    StepFinishPart,
    StepStartPart,
    TextPart,
    Tokens,
    ToolPart,
    now,
)
from forge_jupyter.store.ops import AppendMessage, PutEvent, PutMessage, PutPart
from forge_jupyter.store.postgres.connection import PgConnection, prepare
from forge_jupyter.store.postgres.schema import migrate
from forge_jupyter.store.postgres.store import PostgresStore
from forge_jupyter.store.sql import writes
from tests.psql import psql


def finished_turn(store, session: SessionInfo, words: str = "hello") -> list[Message]:
    """A user prompt and a finished, paid assistant answer (text, a tool call, a step)."""
    t = now()
    user = Message(session_id=session.id, role="user", status="completed", completed_at=t)
    user.parts.append(TextPart(session_id=session.id, message_id=user.id, text=words, time_end=t))
    answer = Message(session_id=session.id, role="assistant", parent_id=user.id,
                     status="completed", finish="stop", tokens=Tokens(input=900, output=40),
                     cost=0.0125, completed_at=t)
    sid, mid = session.id, answer.id
    answer.parts += [
        StepStartPart(session_id=sid, message_id=mid),
        ToolPart(session_id=sid, message_id=mid, call_id="c1", tool="python", state="completed",
                 input={"code": "1 + 1"}, output="2", time_start=t, time_end=t),
        TextPart(session_id=sid, message_id=mid, text="It is 2.", time_end=t),
        StepFinishPart(session_id=sid, message_id=mid, reason="stop",
                       tokens=answer.tokens, cost=answer.cost),
    ]
    ops = []
    for m in (user, answer):
        ops += [PutMessage(m.row()), *(PutPart(p) for p in m.parts), AppendMessage(sid, m.id)]
    store.write([*ops, PutEvent(Event(session_id=sid, type="notice", data={"reason": "x"}))])
    return [user, answer]


def snapshot(store, session_id: str) -> tuple:
    """What forge shows of a session: its messages with their parts, cost and tokens."""
    messages = list(store.iter_timeline(session_id))
    return (tuple(m.model_dump_json() for m in messages),
            sum(m.cost or 0 for m in messages), len(store.events(session_id).items))


@pytest.fixture
def alice_store(pg):
    store = PostgresStore(pg[2].dsn)  # no tenant named: the role's own
    yield store
    store.close()


# ------------------------------------------------------------------ 11: the role's own tenant


def test_a_pinned_role_sees_its_own_tenant_in_psql_without_setting_it(pg, alice_store):
    db, shared, alice, bob = pg
    assert alice_store.tenant_id == "a"
    session = alice_store.create_session(SessionInfo(name="psql-default"))
    finished_turn(alice_store, session)
    theirs = PostgresStore(bob.dsn, tenant_id="b")
    try:
        finished_turn(theirs, theirs.create_session(SessionInfo(name="bobs")))
    finally:
        theirs.close()
    shown = psql(alice.dsn, "SELECT DISTINCT tenant_id FROM session;\n"
                 f"SELECT count(*) FROM part WHERE session_id = '{session.id}';\n"
                 "SELECT name FROM sessions WHERE name = 'psql-default';\n"
                 "SELECT count(*) FROM sessions WHERE name = 'bobs';")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.split() == ["a", "5", "psql-default", "0"]
    # setting another tenant reaches nothing of it, and no error hides that: empty is empty
    other = psql(alice.dsn, "SET forge.tenant = 'b'; SELECT count(*) FROM session;")
    assert other.stdout.split() == ["0"], other.stderr
    forge = Forge(db=alice.dsn, load_plugins=False)  # Forge.tenant left alone: the role's
    try:
        assert forge.store.tenant_id == "a"
        assert "psql-default" in set(forge.sessions().name)
    finally:
        forge.close()


def test_a_role_pinned_to_two_tenants_names_one(pg, alice_store):
    db = pg[0]
    alice_store.create_session(SessionInfo(name="for-carol"))  # tenant 'a' has a session,
    # whichever tests ran before this one
    carol = db.create_app_role()
    migrate(db.owner_dsn, (carol.name,))
    with psycopg.connect(db.owner_dsn, autocommit=True) as con:
        con.execute("INSERT INTO forge_tenant_role VALUES (%s, 'a'), (%s, 'c')",
                    [carol.name, carol.name])
    assert psql(carol.dsn, "SELECT count(*) FROM session;").stdout.split() == ["0"]
    assert psql(carol.dsn, "SET forge.tenant = 'a'; SELECT count(*) > 0 FROM session;"
                ).stdout.split() == ["t"]
    with pytest.raises(AccessRefused, match=r"only for tenant 'a', 'c', not 'default'.*one of them"):
        PostgresStore(carol.dsn)
    PostgresStore(carol.dsn, tenant_id="c").close()


# -------------------------------------------------------------- 12: finished history stays

ATTEMPTS = [
    "DELETE FROM part",
    "DELETE FROM public.part WHERE true",
    "WITH gone AS (DELETE FROM part RETURNING 1) SELECT count(*) FROM gone",
    "DELETE FROM ONLY part WHERE type = 'step-finish'",
    "UPDATE part SET data = '{{}}'",
    "UPDATE part SET cost = 0, tokens_input = 0 WHERE type = 'step-finish'",
    "UPDATE part SET tool_state = 'running' WHERE type = 'tool'",
    "DELETE FROM message",
    "UPDATE message SET cost = 0, tokens_input = 0, tokens_output = 0",
    "UPDATE message SET status = 'running'",
    "DELETE FROM session_message",
    "UPDATE session_message SET pos = pos + 100",
    "DELETE FROM event",
    "UPDATE event SET data = NULL",
    "DELETE FROM session",
    "UPDATE session SET deleted_at = now()",
    "UPDATE session SET timeline_length = 0",
    "TRUNCATE part",
    "TRUNCATE message, part CASCADE",
    "INSERT INTO part (tenant_id, id, session_id, message_id, type, created_at, data) "
    "SELECT tenant_id, id || 'x', session_id, message_id, 'step-finish', now(), data FROM part "
    "WHERE session_id = '{sid}' LIMIT 1",
    "ALTER TABLE part DISABLE TRIGGER forge_guard_history",
    "ALTER TABLE part DISABLE TRIGGER ALL",
    "DROP TRIGGER forge_guard_history ON message",
    "SET session_replication_role = replica; DELETE FROM part",
    "CREATE OR REPLACE FUNCTION forge_guard_history() RETURNS trigger LANGUAGE plpgsql "
    "AS $$ BEGIN RETURN OLD; END $$",
    "SET ROLE {owner}; DELETE FROM part",
    "BEGIN; SET LOCAL forge.tenant = 'a'; DELETE FROM part; COMMIT",
    "SELECT forge_delete_session('{bobs}')",  # another tenant's session: not found
]


@pytest.fixture(scope="module")
def history(pg):
    """Alice's finished session (and one of bob's), as forge showed them before any attempt."""
    db, shared, alice, bob = pg
    store = PostgresStore(alice.dsn)
    theirs = PostgresStore(bob.dsn, tenant_id="b")
    session = store.create_session(SessionInfo(name="kept"))
    finished_turn(store, session)
    bobs = theirs.create_session(SessionInfo(name="bob-kept"))
    finished_turn(theirs, bobs)
    before = snapshot(store, session.id), snapshot(theirs, bobs.id)
    yield store, theirs, session, bobs, before
    store.close()
    theirs.close()


@pytest.mark.parametrize("attempt", ATTEMPTS)
def test_finished_history_cannot_be_changed_in_psql(pg, history, attempt):
    db, shared, alice, _ = pg
    store, theirs, session, bobs, before = history
    sql = attempt.format(sid=session.id, bobs=bobs.id, owner=f'"{db.owner}"')
    for role in (alice, shared):  # a pinned role, and the team's shared one
        setting = "" if role is alice else "SET forge.tenant = 'a';\n"
        done = psql(role.dsn, setting + sql + ";")
        assert done.returncode != 0 and "ERROR" in done.stderr, (role.name, done.stdout)
    assert (snapshot(store, session.id), snapshot(theirs, bobs.id)) == before


def test_the_refusal_says_what_to_do(pg, history):
    _, _, alice, _ = pg
    done = psql(alice.dsn, "DELETE FROM part;")
    assert "has finished: it cannot be deleted" in done.stderr
    assert "forge_delete_session" in done.stderr  # the HINT: the one way that removes rows


def test_the_store_itself_is_refused_the_same(pg, history):
    store, _, session, _, before = history
    with pytest.raises(Immutable, match=r"has finished \(completed\): it cannot be updated"), \
            store._tx() as con:
        con.execute("UPDATE message SET cost = 0")
    assert snapshot(store, session.id) == before[0]


@pytest.fixture
def own_tenant(pg):
    """A store of a tenant of its own (the shared role): cleanup may delete all of it."""
    store = PostgresStore(pg[1].dsn, tenant_id=f"retention-{time.time_ns()}")
    yield store
    store.close()


def test_retention_deletes_whole_sessions_and_nothing_else(own_tenant):
    store = own_tenant
    gone, kept = (store.create_session(SessionInfo(name=n)) for n in ("old", "new"))
    finished_turn(store, gone)
    kept_before = finished_turn(store, kept)
    fork = store.fork(gone.id, finished_turn(store, gone)[-1].id, SessionInfo())
    retention.delete_session(store, gone.id)
    with pytest.raises(SessionDeleted):
        store.get_session(gone.id)
    assert len(list(store.iter_timeline(fork.id))) == 4  # a fork keeps what it shares
    assert [m.id for m in store.iter_timeline(kept.id)] == [m.id for m in kept_before]
    events = store.events(gone.id, type="session.deleted").items
    assert [e.data["reason"] for e in events] == ["deleted on request"]
    # cleanup: the sessions idle longer than max_age, by retention's own path
    deleted = retention.cleanup(store, timedelta(days=1), now=datetime.now(UTC) + timedelta(days=2))
    assert set(deleted) == {kept.id, fork.id}
    assert store.list_sessions().items == []


def test_in_psql_a_whole_session_is_deleted_by_the_documented_function(pg, alice_store):
    alice = pg[2]
    mine = alice_store.create_session(SessionInfo(name="by-hand"))
    finished_turn(alice_store, mine)
    done = psql(alice.dsn, f"SELECT forge_delete_session('{mine.id}');\n"
                f"SELECT count(*) FROM part WHERE session_id = '{mine.id}';")
    assert done.returncode == 0 and done.stdout.split() == ["2", "0"], done.stderr
    with pytest.raises(SessionDeleted):
        alice_store.get_session(mine.id)
    again = psql(alice.dsn, f"SELECT forge_delete_session('{mine.id}');")
    assert "no live session" in again.stderr


def test_another_tenants_session_cannot_be_deleted_by_id(pg, history):
    store, theirs, _, bobs, before = history
    with pytest.raises(NotFound):
        store.delete_session(bobs.id)
    assert snapshot(theirs, bobs.id) == before[1]


# -------------------------------------------------------------------- the read-only role


@pytest.fixture(scope="module")
def analyst(pg):
    db = pg[0]
    role = db.create_app_role()
    migrate(db.owner_dsn, readers=(role.name,))
    with psycopg.connect(db.owner_dsn, autocommit=True) as con:
        con.execute("INSERT INTO forge_tenant_role VALUES (%s, 'a')", [role.name])
    return role


def test_the_read_only_role_reads_its_tenant_in_psql(history, analyst):
    store, _, session, _, _ = history
    done = psql(analyst.dsn, f"SELECT count(*) FROM parts WHERE session_id = '{session.id}';\n"
                f"SELECT round(sum(cost)::numeric, 4) FROM costs WHERE session_id = '{session.id}';")
    assert done.returncode == 0 and done.stdout.split() == ["5", "0.0125"], done.stderr


@pytest.mark.parametrize("attempt", [
    "INSERT INTO event (tenant_id, id, type, actor, created_at) VALUES ('a', 'evt_x', 'n', 'x', now())",
    "UPDATE session SET title = 'mine'",
    "DELETE FROM memory_file",
    "SELECT forge_delete_session('{sid}')",
    "TRUNCATE event",
])
def test_the_read_only_role_writes_nothing(history, analyst, attempt):
    _, _, session, _, _ = history
    done = psql(analyst.dsn, attempt.format(sid=session.id) + ";")
    assert done.returncode != 0 and "permission denied" in done.stderr


def test_forge_on_the_read_only_role_reads_and_says_why_it_cannot_write(history, analyst):
    _, _, session, _, before = history
    reader = PostgresStore(analyst.dsn)
    try:
        assert snapshot(reader, session.id) == before[0]
        with pytest.raises(AccessRefused, match="read-only role only reads") as refused:
            reader.create_session(SessionInfo())
        assert "\n" not in str(refused.value)
    finally:
        reader.close()


# -------------------------------------------------------------------- 14: one-line errors


def test_a_pinned_role_asked_for_another_tenant_is_refused_at_once(pg):
    with pytest.raises(AccessRefused) as refused:
        PostgresStore(pg[2].dsn, tenant_id="b")
    message = str(refused.value)
    assert "may act only for tenant 'a', not 'b'" in message and "FORGE_TENANT" in message
    assert "\n" not in message and "psycopg" not in message


def test_a_write_the_policy_refuses_is_one_line(pg):
    db = pg[0]
    dave = db.create_app_role()
    migrate(db.owner_dsn, (dave.name,))
    with psycopg.connect(db.owner_dsn, autocommit=True) as con:
        con.execute("INSERT INTO forge_tenant_role VALUES (%s, 'd')", [dave.name])
        store = PostgresStore(dave.dsn)
        try:  # the DBA moves the role to another tenant while a kernel has it open
            con.execute("UPDATE forge_tenant_role SET tenant_id = 'e' WHERE role_name = %s",
                        [dave.name])
            with pytest.raises(AccessRefused, match="pinned to another tenant") as refused:
                store.create_session(SessionInfo())
            assert "\n" not in str(refused.value)
        finally:
            store.close()


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run([sys.executable, "-m", "forge_jupyter", "copy", *args],
                          capture_output=True, text=True, env=env, timeout=120)


def test_copy_into_a_pinned_role(pg, tmp_path):
    from forge_jupyter.store.duckdb.store import DuckDBStore

    alice = pg[2]
    source = tmp_path / "mine.duckdb"
    with DuckDBStore(source) as local:
        session = local.create_session(SessionInfo(name=f"copied-{time.time_ns()}"))
        finished_turn(local, session)
    refused = cli(str(source), alice.dsn, "--dst-tenant", "b")
    assert refused.returncode == 1
    assert "Traceback" not in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert "may act only for tenant 'a', not 'b'" in refused.stderr
    assert alice.password not in refused.stderr
    done = cli(str(source), alice.dsn)  # left at default: the role's own tenant
    assert done.returncode == 0, done.stderr
    assert "copied and verified 1 session(s): 2 messages, 5 parts" in done.stdout
    with PostgresStore(alice.dsn) as there:
        assert there.get_session(session.id).name == session.name


# --------------------------------------------------------------- upgrading a database


def test_a_database_of_schema_6_upgrades_and_keeps_its_roles_working(pg_database):
    db = pg_database
    app = db.create_app_role()
    migrate(db.owner_dsn, (app.name,), target=6)
    # history written the way forge 6 wrote it, by the same shared write code
    info = SessionInfo(name="from-before")
    with psycopg.connect(app.dsn) as conn:
        prepare(conn)
        conn.execute("SELECT set_config('forge.tenant', 'team', false)")
        con = PgConnection(conn)
        writes.insert_session(con, "team", info)

        class _Raw:
            def write(self, ops):
                writes.write_batch(con, "team", ops, time.time())

        finished_turn(_Raw(), info)
        conn.commit()
    assert psql(app.dsn, "SET forge.tenant = 'team'; DELETE FROM part;").returncode == 0
    migrate(db.owner_dsn)  # the DBA upgrades without naming the roles again
    # (the DELETE above was schema 6's gap; from now on nothing like it lands)
    with PostgresStore(app.dsn, tenant_id="team") as store:
        second = store.create_session(SessionInfo(name="after"))
        finished_turn(store, second)
        assert psql(app.dsn, "SET forge.tenant = 'team'; DELETE FROM part;").returncode != 0
        store.delete_session(info.id)  # retention works for a role granted before step 7
        with pytest.raises(SessionDeleted):
            store.get_session(info.id)
        assert len(list(store.iter_timeline(second.id))) == 2
