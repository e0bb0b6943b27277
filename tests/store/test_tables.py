"""The tables are declared once (store/sql/tables.py) and both engines' DDL is rendered from
that declaration: a column added there reaches the DuckDB file and PostgreSQL alike."""

from __future__ import annotations

import dataclasses

import duckdb

from forge_jupyter.store.duckdb import schema as duckdb_schema
from forge_jupyter.store.postgres import schema as postgres_schema
from forge_jupyter.store.sql.tables import (
    BY_NAME,
    INDEXES,
    LATEST,
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    TABLES,
    Column,
    Table,
    ddl,
    declared_steps,
)

NEXT = LATEST + 1


def _with_column(table: str, column: Column) -> tuple[Table, ...]:
    return tuple(dataclasses.replace(t, columns=t.columns + (column,)) if t.name == table else t
                 for t in TABLES)


def test_a_column_added_to_the_declaration_reaches_both_dialects(tmp_path):
    tables = _with_column("part", Column("label", "text", since=NEXT))
    duck = ddl("duckdb", NEXT, tables=tables)
    pg = ddl("postgresql", NEXT, tables=tables)
    assert duck == ("ALTER TABLE part ADD COLUMN label VARCHAR",)
    assert pg == ("ALTER TABLE part ADD COLUMN label text",)
    # and the DuckDB statement really adds it to a file of the latest schema
    con = duckdb.connect(str(tmp_path / "f.duckdb"))
    duckdb_schema.migrate(con, "f.duckdb")
    for statement in duck:
        con.execute(statement)
    names = [r[0] for r in con.execute("SELECT column_name FROM duckdb_columns() "
                                       "WHERE table_name = 'part' ORDER BY column_index").fetchall()]
    assert names[-1] == "label"
    # nothing else changes at that step: no other table, no index
    assert ddl("duckdb", NEXT) == () and ddl("postgresql", NEXT) == ()


def test_a_table_added_to_the_declaration_is_created_in_both_dialects():
    extra = Table("note", (Column("tenant_id", "id", not_null=True),
                           Column("id", "id", primary_key=True),
                           Column("body", "json")), since=NEXT)
    duck, = ddl("duckdb", NEXT, tables=TABLES + (extra,))
    pg, = ddl("postgresql", NEXT, tables=TABLES + (extra,))
    assert duck.startswith("CREATE TABLE note (") and "id VARCHAR PRIMARY KEY" in duck
    assert "body JSON" in duck
    assert pg.startswith("CREATE TABLE note (") and 'id text COLLATE "C" PRIMARY KEY' in pg
    assert "body json" in pg


def test_a_fresh_file_holds_exactly_the_declared_columns(tmp_path):
    con = duckdb.connect(str(tmp_path / "f.duckdb"))
    duckdb_schema.migrate(con, "f.duckdb")
    rows = con.execute(
        "SELECT table_name, column_name, data_type, is_nullable FROM duckdb_columns() "
        "WHERE database_name = current_database() AND table_name IN (SELECT table_name "
        "FROM duckdb_tables()) ORDER BY table_name, column_index").fetchall()
    spelled = {"VARCHAR": "VARCHAR", "INTEGER": "INTEGER", "BIGINT": "BIGINT",
               "BOOLEAN": "BOOLEAN", "DOUBLE": "DOUBLE", "TIMESTAMPTZ": "TIMESTAMP WITH TIME ZONE",
               "JSON": "JSON", "DATE": "DATE", "REAL[]": "FLOAT[]"}
    from forge_jupyter.store.sql.tables import TYPES

    declared = sorted(
        (t.name, c.name, spelled[TYPES["duckdb"][c.type]], not (c.not_null or c.primary_key))
        for t in TABLES for c in t.columns)
    found = sorted((t, c, d, bool(n)) for t, c, d, n in rows)
    assert found == declared


def test_every_declared_step_has_a_migration_in_both_dialects():
    steps = declared_steps()
    assert steps <= {m.version for m in duckdb_schema.MIGRATIONS}
    assert steps <= {m.version for m in postgres_schema.MIGRATIONS}
    assert duckdb_schema.MIGRATIONS[-1].version == postgres_schema.MIGRATIONS[-1].version == LATEST
    # each index the declaration names is made by the step it says, where its engine has it
    for index in INDEXES:
        for dialect, migrations in (("duckdb", duckdb_schema.MIGRATIONS),
                                    ("postgresql", postgres_schema.MIGRATIONS)):
            made = index.create(dialect)
            if made is not None:
                assert made in migrations[index.since - 1].statements


def test_the_bulk_insert_columns_come_from_the_declaration():
    assert SESSION_COLUMNS == tuple(c.name for c in BY_NAME["session"].columns
                                    if c.name not in ("deleted_at", "lease_owner",
                                                      "lease_expires"))
    assert MESSAGE_COLUMNS[-1] == "replay_of"  # added at step 6, the table's last column
