"""Every SQL block of docs/schema.md, run in psql as the page says to run it.

The example queries (each followed by the output the generator got from DuckDB) run in psql
as a login role pinned to one tenant — no ``SET forge.tenant`` — over the generator's own
fixed history written into PostgreSQL through the store, and must print the same table. A
block that needs one engine says so on its first line (``-- PostgreSQL only, as …``): the
DBA's statements run in psql as the role named there, in the order of the page, and the
setup they make must work (the migrate command, a pinned user, retention's function).
"""

from __future__ import annotations

import csv
import io
import re
import secrets
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from forge_jupyter.message import SessionInfo
from forge_jupyter.store.postgres.schema import migrate
from forge_jupyter.store.postgres.store import PostgresStore
from tests.frames.test_schema_docs import load_generator
from tests.psql import psql

DOCS = Path(__file__).resolve().parents[2] / "docs" / "schema.md"
_BLOCK = re.compile(r"```sql\n(.*?)\n```(?:\n\n(\|.*?)(?:\n\n|\Z))?", re.S)


def blocks() -> list[tuple[str, str | None]]:
    """(SQL, the markdown output table shown after it, or None) for every ```sql block."""
    return [(m.group(1), m.group(2)) for m in _BLOCK.finditer(DOCS.read_text())]


def examples() -> list[tuple[str, str]]:
    return [(sql, out) for sql, out in blocks() if out is not None]


def shown(table: str) -> list[list[str]]:
    """The doc's markdown table as rows of cells (the header first)."""
    lines = [line for line in table.strip().splitlines() if not line.startswith("|---")]
    return [[c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            for line in lines]


def as_shown(value: str) -> str:
    """A psql CSV value as the generator renders DuckDB's (scripts/gen_schema_docs._cell)."""
    if value == "":
        return "NULL"
    if value in ("t", "f"):
        return "True" if value == "t" else "False"
    if re.fullmatch(r"-?\d+", value):
        return value
    if re.fullmatch(r"-?\d*\.\d+(e-?\d+)?|-?\d+e-?\d+", value):
        number = float(value)
        return str(int(number)) if number.is_integer() and "." not in f"{number:.6g}" \
            else f"{number:.6g}"
    stamp = re.fullmatch(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(\.\d+)?\+00", value)
    if stamp:
        return stamp.group(1)
    return value.replace("\n", "\\n")


def test_the_page_has_its_examples_and_marks_every_other_block():
    found = blocks()
    assert len(examples()) >= 16
    for sql, out in found:
        if out is None:
            assert re.match(r"-- (PostgreSQL|DuckDB) only", sql), sql


@pytest.fixture(scope="module")
def documented(pg_cluster):
    """The generator's history in PostgreSQL, read by a role pinned to its tenant."""
    db = pg_cluster.create_database()
    analyst = db.create_app_role()
    app = db.create_app_role()
    migrate(db.owner_dsn, (app.name,), readers=(analyst.name,))
    with psycopg.connect(db.owner_dsn, autocommit=True) as con:
        con.execute("INSERT INTO forge_tenant_role VALUES (%s, 'default'), (%s, 'default')",
                    [app.name, analyst.name])
    with PostgresStore(app.dsn) as store:
        load_generator().write_history(store)
    yield analyst
    pg_cluster.drop_database(db)


@pytest.mark.parametrize("sql, output", examples(), ids=lambda v: v.split("\n")[0][:40])
def test_each_example_prints_in_psql_what_the_page_shows(documented, sql, output):
    done = psql(documented.dsn, sql + ";", csv=True)
    assert done.returncode == 0, done.stderr
    got = list(csv.reader(io.StringIO(done.stdout)))
    want = shown(output)
    assert got[0] == want[0]  # the same columns, by name
    assert [[as_shown(v) for v in row] for row in got[1:]] == want[1:]


def migrate_command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "forge_jupyter.store.postgres.schema", *args],
                          capture_output=True, text=True, timeout=120)


def test_the_migrate_command_says_in_one_line_what_is_wrong(pg_database):
    done = migrate_command(pg_database.owner_dsn, "forge_nobody_here")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert 'role "forge_nobody_here" does not exist' in done.stderr
    assert pg_database.owner_password not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_dba_blocks_run_as_written(pg_cluster, tmp_path):
    """The PostgreSQL section's setup, in psql as the roles it names, in its order."""
    password = secrets.token_urlsafe(12)
    owner = pg_cluster.dsn("forge_owner", password, "forge")
    dsns = {"the cluster's superuser": pg_cluster.admin_dsn("postgres"), "the owner": owner}
    dba = [sql for sql, out in blocks() if out is None and sql.startswith("-- PostgreSQL only, as")]
    assert len(dba) >= 4
    store: PostgresStore | None = None  # forge on the pinned user, once the page made it
    try:
        for sql in dba:
            who = re.match(r"-- PostgreSQL only, as (the cluster's superuser|the owner|an "
                           r"application role)", sql)
            assert who, sql.splitlines()[0]
            text = sql.replace("'…'", f"'{password}'")
            if who.group(1) == "an application role":
                assert store is not None, "the page deletes a session before making the user"
                session = store.create_session(SessionInfo(name="gone"))
                done = psql(pg_cluster.dsn("forge_alice", password, "forge"),
                            text.replace("ses_…", session.id))
                assert done.returncode == 0 and done.stdout.split() == ["0"], done.stderr
                continue
            done = psql(dsns[who.group(1)], text)
            assert done.returncode == 0, (sql, done.stderr)
            if "CREATE DATABASE forge" in sql:  # then the page's migrate command, as the owner
                assert migrate_command(owner, "forge_app").returncode == 0
            if "INSERT INTO forge_tenant_role" in sql:  # "and grant it like forge_app"
                assert migrate_command(owner, "forge_alice").returncode == 0
                store = PostgresStore(pg_cluster.dsn("forge_alice", password, "forge"))
                assert store.tenant_id == "alice"
        policies = psql(owner, "SELECT count(*) FROM pg_policies WHERE policyname = 'tenant_rows'")
        assert int(policies.stdout) >= 5  # the CREATE POLICY block shows what the migration made
    finally:
        if store is not None:
            store.close()
        pg_cluster.admin_sql("DROP DATABASE IF EXISTS forge WITH (FORCE)",
                             *(f"DROP ROLE IF EXISTS {r}"
                               for r in ("forge_alice", "forge_app", "forge_owner")))
