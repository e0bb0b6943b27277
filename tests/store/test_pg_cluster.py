"""The throwaway PostgreSQL cluster the PostgreSQL tests stand on (tests/pg_cluster.py)."""

from __future__ import annotations

import psycopg
import pytest

from tests.pg_cluster import PgCluster, PgDatabase, _alive

RLS_SETUP = [
    "CREATE SCHEMA forge",
    "CREATE TABLE forge.t (tenant_id text NOT NULL, body text NOT NULL)",
    "INSERT INTO forge.t VALUES ('a', 'mine'), ('b', 'theirs')",  # before RLS: the owner is bound too
    "ALTER TABLE forge.t ENABLE ROW LEVEL SECURITY",
    "ALTER TABLE forge.t FORCE ROW LEVEL SECURITY",
    "CREATE POLICY tenant ON forge.t USING (tenant_id = current_setting('forge.tenant', true))"
    " WITH CHECK (tenant_id = current_setting('forge.tenant', true))",
]


def owner_sets_up_rls(db: PgDatabase, app: str) -> None:
    with psycopg.connect(db.owner_dsn, autocommit=True) as conn:
        for sql in RLS_SETUP:
            conn.execute(sql)  # type: ignore[arg-type]
        conn.execute(f'GRANT USAGE ON SCHEMA forge TO "{app}"')  # type: ignore[arg-type]
        conn.execute(f'GRANT SELECT, INSERT, UPDATE, DELETE ON forge.t TO "{app}"')  # type: ignore[arg-type]


def test_cluster_runs_on_loopback_with_its_socket_in_the_temp_dir(pg_cluster: PgCluster) -> None:
    with psycopg.connect(pg_cluster.admin_dsn()) as conn:
        row = conn.execute(
            "SELECT current_setting('listen_addresses'), current_setting('unix_socket_directories'),"
            " current_setting('fsync'), current_setting('synchronous_commit'), inet_server_addr()::text"
        ).fetchone()
    assert row is not None
    assert row[0] == "127.0.0.1"
    assert row[1] == str(pg_cluster.socket_dir)
    assert (row[2], row[3]) == ("off", "on")
    assert row[4].startswith("127.0.0.1")
    assert (pg_cluster.socket_dir / f".s.PGSQL.{pg_cluster.port}").exists()


def test_app_role_is_not_superuser_cannot_bypass_rls_and_owns_nothing(pg_database: PgDatabase) -> None:
    app = pg_database.create_app_role()
    owner_sets_up_rls(pg_database, app.name)
    with psycopg.connect(app.dsn, autocommit=True) as conn:
        flags = conn.execute(
            "SELECT rolsuper, rolbypassrls, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
        assert flags == (False, False, False, False)
        owned = conn.execute(
            "SELECT count(*) FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner WHERE r.rolname = current_user"
        ).fetchone()
        assert owned == (0,)

        # No tenant set: no rows at all; tenant a: only a's.
        assert conn.execute("SELECT body FROM forge.t").fetchall() == []
        conn.execute("SELECT set_config('forge.tenant', 'a', false)")
        assert conn.execute("SELECT body FROM forge.t").fetchall() == [("mine",)]
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO forge.t VALUES ('b', 'forged')")
        assert conn.execute("DELETE FROM forge.t WHERE tenant_id = 'b'").rowcount == 0

        # Ways out that must all be closed to a role like this one.
        for escape in (
            "SET row_security = off; SELECT * FROM forge.t",
            f'SET ROLE "{pg_database.owner}"',
            "SET ROLE forge_admin",
            "ALTER TABLE forge.t DISABLE ROW LEVEL SECURITY",
            "DROP POLICY tenant ON forge.t",
            "ALTER ROLE CURRENT_USER BYPASSRLS",
        ):
            with pytest.raises(psycopg.errors.Error):
                conn.execute(escape)  # type: ignore[arg-type]
    with psycopg.connect(pg_database.owner_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM forge.t WHERE tenant_id = 'b'").fetchone() == (0,)  # FORCE RLS
    with psycopg.connect(pg_database.admin_dsn) as conn:
        assert sorted(conn.execute("SELECT body FROM forge.t").fetchall()) == [("mine",), ("theirs",)]


def test_each_database_is_fresh_and_closed_to_other_roles(pg_cluster: PgCluster) -> None:
    one, two = pg_cluster.create_database(), pg_cluster.create_database()
    try:
        app_one = one.create_app_role()
        with psycopg.connect(two.owner_dsn) as conn:
            assert conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname = 'forge'").fetchone() == (0,)
        bad = app_one.dsn.rsplit("/", 1)[0] + "/" + two.name
        with pytest.raises(psycopg.OperationalError, match="permission denied|CONNECT"):
            psycopg.connect(bad).close()
        with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
            psycopg.connect(app_one.dsn.replace(app_one.password, "wrong")).close()
    finally:
        pg_cluster.drop_database(one)
        pg_cluster.drop_database(two)


def test_immediate_restart_keeps_committed_rows(pg_database: PgDatabase) -> None:
    with psycopg.connect(pg_database.owner_dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE kept (n int)")
        conn.execute("INSERT INTO kept SELECT generate_series(1, 100)")
    pg_database.cluster.restart("immediate")
    with psycopg.connect(pg_database.owner_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM kept").fetchone() == (100,)


def test_stop_leaves_no_process_and_no_files() -> None:
    cluster = PgCluster()
    pid = cluster.postmaster_pid()
    root = cluster.root
    assert pid is not None and _alive(pid)
    with psycopg.connect(cluster.admin_dsn()) as conn:
        backends = [r[0] for r in conn.execute("SELECT pid FROM pg_stat_activity WHERE pid IS NOT NULL").fetchall()]
    cluster.stop()
    assert not _alive(pid)
    assert [b for b in backends if _alive(b)] == []
    assert not root.exists()
    cluster.stop()  # idempotent


def test_a_failed_start_cleans_up(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[PgCluster] = []
    real_init = PgCluster._initdb

    def init_then_break(self: PgCluster) -> None:
        made.append(self)
        real_init(self)
        with open(self.datadir / "postgresql.conf", "a") as conf:
            conf.write("no_such_setting_at_all = 1\n")

    monkeypatch.setattr(PgCluster, "_initdb", init_then_break)
    with pytest.raises(RuntimeError, match="pg_ctl start failed"):
        PgCluster()
    assert made and not made[0].root.exists()


def test_missing_binaries_say_how_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    from tests import pg_cluster
    monkeypatch.setenv("FORGE_PG_BINDIR", str(tmp_path))
    monkeypatch.setattr(pg_cluster.glob, "glob", lambda pattern: [])
    with pytest.raises(pg_cluster.PgClusterError, match="apt-get install postgresql"):
        pg_cluster.find_bindir()
