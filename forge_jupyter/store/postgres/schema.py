"""The PostgreSQL schema of a forge-jupyter database, as numbered migration steps (DESIGN §3).

The same tables, columns and versions as the DuckDB file (``schema.py``), written for
PostgreSQL: ``text`` for VARCHAR (ids in the ``"C"`` collation, so that they sort by their
bytes as in DuckDB, whatever the database's locale), ``double precision`` for DOUBLE, ``json``
(kept as written) for JSON, and ``epoch_us`` — a DuckDB builtin the shared queries call —
defined as a function.

Tenancy is the database's job, not only the queries': every tenant table has row-level
security enabled and FORCEd, with one policy — a row is visible, and may be written, only
when its ``tenant_id`` equals the connection's ``forge.tenant`` setting, which the store sets
at the start of each transaction (unset or empty: no row at all). The tables belong to the
*owner* role that runs the migrations; the store connects as an *application* role that owns
nothing, is no superuser, has no BYPASSRLS and is a member of no role that has (``postgres.py``
refuses to run otherwise), so a query that forgot its tenant predicate — or SQL a person or
the model wrote — still sees one tenant's rows.

How a DBA sets it up (once; the tests do exactly this in their throwaway cluster)::

    CREATE ROLE forge_owner LOGIN PASSWORD '…' NOSUPERUSER NOBYPASSRLS;
    CREATE ROLE forge_app   LOGIN PASSWORD '…' NOSUPERUSER NOBYPASSRLS NOINHERIT;
    CREATE DATABASE forge OWNER forge_owner;
    REVOKE ALL ON DATABASE forge FROM PUBLIC;
    GRANT CONNECT ON DATABASE forge TO forge_app;
    -- then, as the owner (creates or upgrades the schema, grants the app role its rows):
    python -m forge_jupyter.store.postgres.schema postgresql://forge_owner@host/forge forge_app

and every kernel sets ``Forge.db = "postgresql://forge_app@host/forge"`` (the password in
``~/.pgpass`` or ``PGPASSWORD``, not in the URL).

One shared application role keeps tenants apart from every query the package sends, but SQL
run on its connections can change the ``forge.tenant`` setting like any setting. Where users
must be kept apart from each other's SQL (JupyterHub: code in a kernel can send any SQL), give
each user a login role of their own and pin it to its tenant, as the owner::

    CREATE ROLE forge_alice LOGIN PASSWORD '…' NOSUPERUSER NOBYPASSRLS NOINHERIT;
    GRANT CONNECT ON DATABASE forge TO forge_alice;
    INSERT INTO forge_tenant_role VALUES ('forge_alice', 'alice');   -- may act for 'alice' only
    python -m forge_jupyter.store.postgres.schema postgresql://forge_owner@host/forge forge_alice

A pinned role sees no row of any other tenant, whatever its SQL sets (the policy checks
``session_user``, which ``SET ROLE`` does not change); pinned to one tenant, that tenant is
its default (psql needs no ``SET forge.tenant``). For analysts, ``--read-only ROLE`` grants
a role that reads only. Whatever a role is granted, finished history is immutable and only
retention's ``forge_delete_session()`` removes a session (step 7, history_guard.py).

The documented views (sql/views.py) exist here too, rendered in this dialect and created
``security_invoker`` so the policies scope them to whoever reads them; the migrate command
grants the application roles SELECT on them. SQL a person writes through the package
(``forge.sql``, ``%forge sql``) never runs on these connections (sandbox.py).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ...errors import ForgeError, SchemaTooNew, StoreUnreadable
from ..base import DEFAULT_TENANT
from ..location import POSTGRES_SCHEMES, is_postgres_url  # noqa: F401 - re-exported
from ..sql.tables import LATEST, MEMORY_TABLES, TENANT_TABLES, TYPES, Migration, ddl
from ..sql.views import VIEW_NAMES as PG_VIEW_NAMES
from ..sql.views import create_views
from .history_guard import APP_FUNCTIONS, HISTORY_GUARD, READER_FUNCTIONS

if TYPE_CHECKING:
    import psycopg

URL_SCHEMES = tuple(f"{s}://" for s in POSTGRES_SCHEMES)


def tenant_for(configured: str) -> str:
    """The tenant of a PostgreSQL store: the one configured; left at ``default`` under
    JupyterHub, the hub's user the kernel runs for (``JUPYTERHUB_USER``) — never one tenant
    shared by every user of a hub by accident."""
    if configured == DEFAULT_TENANT and os.environ.get("JUPYTERHUB_USER"):
        return os.environ["JUPYTERHUB_USER"]
    return configured


ID = TYPES["postgresql"]["id"]

# DuckDB's builtin, which the shared queries call: microseconds since the epoch, as a double
# (exact below 2**53), so that ``epoch_us(x) / 1e6`` is the float DuckDB gives
_EPOCH_US = """
    CREATE FUNCTION epoch_us(t timestamptz) RETURNS double precision
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    AS $$ SELECT (extract(epoch FROM t) * 1000000)::double precision $$
    """

# what DuckDB's TRY_CAST does for the views (sql/dialect.py), and for the DataFrames' SQL
# (translate.py); owned by the schema's owner, run by anyone
_TRY_FUNCTIONS = (
    """
    CREATE FUNCTION forge_try_bigint(t text) RETURNS bigint
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog AS $$
    BEGIN RETURN t::bigint; EXCEPTION WHEN others THEN RETURN NULL; END $$
    """,
    """
    CREATE FUNCTION forge_try_boolean(t text) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog AS $$
    BEGIN RETURN t::boolean; EXCEPTION WHEN others THEN RETURN NULL; END $$
    """,
)

# The policy: a row belongs to the tenant ``forge_tenant()`` names — the transaction's
# ``forge.tenant`` setting (unset, RESET or '' match no row), provided the login role may
# act for it. A DBA may pin a login role to its tenants (``forge_tenant_role``): then SQL on
# that role's connections cannot reach another tenant's rows even by changing the setting
# (``set_config`` is any role's right), since ``session_user`` cannot be changed by SET ROLE.
# A role with no pinned tenant may act for any (one shared application role for a team).
# Called once per query (an InitPlan), as the owner, with a fixed search_path.
TENANT_SETTING = "forge.tenant"
_TENANT_FUNCTION = (
    "CREATE TABLE forge_tenant_role (role_name text NOT NULL, tenant_id {id} NOT NULL, "
    "PRIMARY KEY (role_name, tenant_id))",
    "REVOKE ALL ON forge_tenant_role FROM PUBLIC",
    f"""
    CREATE FUNCTION forge_tenant() RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
        SELECT s.t FROM (SELECT nullif(current_setting('{TENANT_SETTING}', true), '') AS t) s
        WHERE NOT EXISTS (SELECT 1 FROM {{schema}}.forge_tenant_role r
                          WHERE r.role_name = session_user)
           OR EXISTS (SELECT 1 FROM {{schema}}.forge_tenant_role r
                      WHERE r.role_name = session_user AND r.tenant_id = s.t)
    $$
    """,
    "REVOKE ALL ON FUNCTION forge_tenant() FROM PUBLIC",
)
_POLICY = "tenant_id = (SELECT forge_tenant())"
_TENANCY = _TENANT_FUNCTION + tuple(
    statement
    for table in TENANT_TABLES
    for statement in (
        f"REVOKE ALL ON {table} FROM PUBLIC",
        f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
        f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY",
        f"CREATE POLICY tenant_rows ON {table} USING ({_POLICY}) WITH CHECK ({_POLICY})",
    )
) + ("REVOKE ALL ON forge_schema FROM PUBLIC",)

# The long-term memory index (sql/tables.py step 5; its SQL in store/sql/memory_index.py), under
# the same tenancy policy, and DuckDB's ``array_cosine_similarity`` — which the vector query
# calls — defined as a function (a ``real[N]`` cast is DuckDB's fixed-size array, a plain array
# here).
_MEMORY_INDEX = ddl("postgresql", 5) + (
    """
    CREATE FUNCTION array_cosine_similarity(a real[], b real[]) RETURNS double precision
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT sum(x::float8 * y) / nullif(sqrt(sum(x::float8 * x)) * sqrt(sum(y::float8 * y)), 0)
          FROM unnest(a, b) AS t(x, y) $$
    """,
) + tuple(
    statement
    for table in MEMORY_TABLES
    for statement in (
        f"REVOKE ALL ON {table} FROM PUBLIC",
        f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
        f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY",
        f"CREATE POLICY tenant_rows ON {table} USING ({_POLICY}) WITH CHECK ({_POLICY})",
    )
)

# Version for version with the DuckDB file's (schema.LATEST): step 3 there is the views
# (store/sql/views.py, DuckDB SQL); here it puts the tenancy in place, and step 4 the same views
# in PostgreSQL's dialect, security_invoker so the policies apply (sql/views.py).
MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "tables", ddl("postgresql", 1) + (_EPOCH_US,)),
    Migration(2, "indexes", ddl("postgresql", 2)),
    Migration(3, "row-level security on every tenant table", _TENANCY),
    Migration(4, "the documented views, for psql", _TRY_FUNCTIONS + create_views("postgresql")),
    Migration(5, "the long-term memory index, row-level security on it", _MEMORY_INDEX),
    # a new column of a table already under row-level security: the policy and the grants
    # (whole tables) cover it
    Migration(6, "message.replay_of", ddl("postgresql", 6)),
    # nothing in sql/tables.py: the owner's triggers make finished history immutable, the
    # one path that deletes it, a pinned role's default tenant (postgres/history_guard.py)
    Migration(7, "finished history immutable; a pinned role's own tenant by default",
              HISTORY_GUARD),
)
assert MIGRATIONS[-1].version == LATEST, "a step of sql/tables.py has no PostgreSQL migration"
_MIGRATE_LOCK = 0x666F726765  # pg_advisory_xact_lock key: one migration at a time


def schema_version(con: psycopg.Connection, where: str) -> int:
    """The database's schema version; 0 when it has no forge_schema table yet."""
    row = con.execute("SELECT to_regclass('forge_schema') IS NOT NULL").fetchone()
    if not row or not row[0]:
        return 0
    found = con.execute("SELECT max(version) FROM forge_schema").fetchone()
    if found is None or found[0] is None:
        raise StoreUnreadable(f"{where}: the forge_schema table is empty; the schema is damaged")
    return int(found[0])


def too_new(found: int, where: str) -> SchemaTooNew:
    return SchemaTooNew(
        f"{where} was written by a newer forge-jupyter (schema version {found}); this "
        f"forge-jupyter understands schema version {LATEST} at most. Upgrade forge-jupyter "
        "(pip install -U forge-jupyter) to use it."
    )


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def migrate(owner_dsn: str, app_roles: tuple[str, ...] = (), *, target: int = LATEST,
            readers: tuple[str, ...] = ()) -> int:
    """As the schema's owner, bring the database to ``target`` (one transaction, one
    migration at a time across hosts), let each of ``app_roles`` read and write the rows of
    its tenant and each of ``readers`` read them only; returns the version found before."""
    import psycopg

    where = "the PostgreSQL database"
    with psycopg.connect(owner_dsn) as con, con.transaction():
        con.execute("SELECT pg_advisory_xact_lock(%s)", [_MIGRATE_LOCK])
        found = schema_version(con, where)
        if found > LATEST:
            raise too_new(found, where)
        row = con.execute("SELECT quote_ident(current_schema())").fetchone()
        if row is None or row[0] is None:
            raise StoreUnreadable(f"{where}: the owner has no schema to create the tables in "
                                  "(its search_path names none that exists)")
        names = {"schema": row[0], "id": ID}
        for step in MIGRATIONS:
            if found < step.version <= target:
                for statement in step.statements:
                    # our own SQL; {schema}: where the SECURITY DEFINER function finds its table
                    con.execute(statement.format(**names) if "{" in statement else statement)  # type: ignore[arg-type]
        if found < target:
            con.execute("DELETE FROM forge_schema")
            con.execute("INSERT INTO forge_schema VALUES (%s)", [target])
        for role in app_roles:
            _grant(con, _ident(role), target, write=True)
        for role in readers:
            _grant(con, _ident(role), target, write=False)
    return found


def _grant(con: psycopg.Connection, r: str, target: int, *, write: bool) -> None:
    """What an application role (``write``) or a read-only one may do at schema ``target``.
    A reader loses any write it was given before; TRUNCATE is nobody's (step 7 refuses it
    anyway, as it refuses changes to finished rows whatever the grants)."""
    tables = ", ".join(TENANT_TABLES + (MEMORY_TABLES if target >= 5 else ()))
    if write:
        con.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON {tables} TO {r}")  # type: ignore[arg-type]
    else:
        con.execute(f"REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON {tables} FROM {r}")  # type: ignore[arg-type]
        con.execute(f"GRANT SELECT ON {tables} TO {r}")  # type: ignore[arg-type]
    con.execute(f"GRANT SELECT ON forge_schema TO {r}")  # type: ignore[arg-type]
    functions = (APP_FUNCTIONS if write else READER_FUNCTIONS) if target >= 7 else ("forge_tenant()",)
    for function in functions:
        con.execute(f"GRANT EXECUTE ON FUNCTION {function} TO {r}")  # type: ignore[arg-type]
    if target >= 4:
        con.execute(f"GRANT SELECT ON {', '.join(PG_VIEW_NAMES)} TO {r}")  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> int:
    """``python -m forge_jupyter.store.postgres.schema OWNER_DSN [APP_ROLE …] [--read-only ROLE …]``"""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m forge_jupyter.store.postgres.schema",
        description="Creates or upgrades the forge-jupyter schema as its owner and grants each "
        "application role its tenant's rows, each --read-only role read access to them "
        "(see docs/schema.md).")
    parser.add_argument("owner_dsn", metavar="OWNER_DSN", help="connects as the tables' owner")
    parser.add_argument("app_roles", metavar="APP_ROLE", nargs="*",
                        help="a role kernels log in as: reads and writes its tenant's rows")
    parser.add_argument("--read-only", metavar="ROLE", action="append", default=[],
                        help="a role for analysts (psql, a BI tool): reads only; repeat for more")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    import psycopg

    try:
        found = migrate(args.owner_dsn, tuple(args.app_roles), readers=tuple(args.read_only))
    except (psycopg.Error, ForgeError) as error:  # a DBA's typo is a line, not a traceback
        text = " ".join(str(error).split())
        print(f"{parser.prog}: {text}; nothing was changed", file=sys.stderr)
        return 1
    granted = [*args.app_roles, *(f"{r} (read-only)" for r in args.read_only)]
    print(f"schema version {found} -> {LATEST}; granted to {', '.join(granted) or 'no role'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
