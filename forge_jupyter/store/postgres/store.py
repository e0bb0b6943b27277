"""The PostgreSQL backend: one database, many kernels on many hosts, tenancy the database
enforces (DESIGN §3; schema and DBA setup in ``postgres.schema``).

``PostgresStore("postgresql://forge_app@host/forge", tenant_id=…)`` — selected by
``Forge.db`` / ``FORGE_DB`` holding a ``postgresql://`` URL (``forge.open_store``). It is a
``SQLStore``: the same methods, queries and invariants (``plan.plan_write``) as the DuckDB
store; what differs is how a transaction is opened:

- a ``psycopg_pool`` pool of connections (``pool_size``), one transaction per call or per
  write batch (the projection flushes one per model step); a pooled connection the server
  dropped (a restart) is replaced before the call runs on it;
- at the start of every transaction ``forge.tenant`` is set, transaction-local, to the
  store's tenant: the row-level security policies show and accept that tenant's rows only,
  whatever a query says (``SET``/``RESET`` on a connection later returned to the pool cannot
  leak into the next transaction);
- the writers of one session queue on its row (``SELECT … FOR UPDATE``, in id order, so two
  batches never deadlock); writers of different sessions go on side by side;
- the runner lease is one compare-and-swap ``UPDATE`` on the session row, on the database's
  clock (hosts' clocks may disagree);
- ``reading()`` is a read-only transaction with a statement timeout, always rolled back.

Opening refuses a login role that could see past the policies: a superuser, a role with
BYPASSRLS, or a member of the tables' owner (``UnsafeRole``), a database whose schema is
missing or out of date (the DBA runs the migration as the owner), and a role pinned to other
tenants than the one asked for (``AccessRefused``; left at ``default``, a role pinned to one
tenant acts for it). The database's later refusals arrive as ``AccessRefused`` and
``Immutable`` too (refusals.py), never as a psycopg error; deleting a session is the
owner's ``forge_delete_session`` (history_guard.py), the one path to finished rows.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool, PoolTimeout

from ...errors import DuplicateId, ForgeError, StoreUnavailable, StoreUnreadable
from ..base import DEFAULT_TENANT
from ..sql import reads
from ..sql.store import SQLStore
from ..sql.tables import MEMORY_TABLES, TENANT_TABLES
from .connection import PgConnection, prepare
from .refusals import said_plainly, tenant_refused
from .schema import (  # noqa: F401 - is_postgres_url, tenant_for: re-exported
    LATEST,
    TENANT_SETTING,
    is_postgres_url,
    schema_version,
    tenant_for,
    too_new,
)

DEFAULT_POOL_SIZE = 4
DEFAULT_STATEMENT_TIMEOUT = 30.0
_SET_TENANT = f"SELECT set_config('{TENANT_SETTING}', %s, true)"
_MIGRATE_HINT = ("A DBA creates or upgrades it as the tables' owner: "
                 "python -m forge_jupyter.store.postgres.schema OWNER_URL APP_ROLE "
                 "(see docs/schema.md)")


class UnsafeRole(ForgeError):
    """The store's login role could read past the row-level security policies."""


def describe(dsn: str) -> str:
    """Where a DSN points, without its password."""
    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "PostgreSQL (an unreadable connection string)"
    host = parts.get("host") or "localhost"
    return (f"PostgreSQL database {parts.get('dbname') or '?'!s} on {host}:"
            f"{parts.get('port') or 5432} as {parts.get('user') or '(default user)'}")


class PostgresStore(SQLStore):
    """Sessions, messages, parts, timeline, events and leases of one tenant in PostgreSQL."""

    # its connections speak PostgreSQL: the DataFrames' own SQL is translated and run here
    # (postgres/select.py); SQL a person writes (forge.sql, %forge sql) never is — it runs
    # on a copy of this tenant's rows in a locked DuckDB (sandbox.py)
    dialect = "postgresql"

    def __init__(
        self,
        dsn: str,
        *,
        tenant_id: str = DEFAULT_TENANT,
        pool_size: int = DEFAULT_POOL_SIZE,
        statement_timeout: float = DEFAULT_STATEMENT_TIMEOUT,
        connect_timeout: float = 10.0,
    ):
        if not isinstance(tenant_id, str) or not tenant_id.strip():
            raise ValueError(f"a PostgreSQL store needs a tenant id, got {tenant_id!r}")
        self.dsn = dsn
        self.where = describe(dsn)
        self.tenant_id = tenant_id
        self.role = "?"  # the login role, once connected (_check)
        self.statement_timeout = statement_timeout
        self.connect_timeout = connect_timeout
        self._local = threading.local()
        # a direct first connection: its failure says why (password, host, database name)
        try:
            with psycopg.connect(dsn, connect_timeout=max(1, int(connect_timeout))) as con:
                prepare(con)
                self._check(con)
        except psycopg.OperationalError as error:
            raise StoreUnavailable(
                f"{self.where} cannot be reached: {str(error).strip()}. Check the URL in "
                "Forge.db / FORGE_DB, that the server runs and that this role may log in."
            ) from error
        self._pool = ConnectionPool(
            dsn, min_size=1, max_size=max(1, pool_size), open=False, configure=prepare,
            kwargs={"autocommit": True, "connect_timeout": max(1, int(connect_timeout))},
            name=f"forge-{tenant_id}",
        )
        self._pool.open(wait=False)

    def __repr__(self) -> str:
        return f"PostgresStore({self.where!r}, tenant_id={self.tenant_id!r})"

    # -- opening ---------------------------------------------------------------------------

    def _check(self, con: psycopg.Connection) -> None:
        """The schema is there and current, and this role cannot see past the policies."""
        found = schema_version(con, self.where)
        if found == 0:
            raise StoreUnreadable(f"{self.where} has no forge-jupyter schema. {_MIGRATE_HINT}.")
        if found > LATEST:
            raise too_new(found, self.where)
        if found < LATEST:
            raise StoreUnreadable(
                f"{self.where} holds schema version {found}; this forge-jupyter needs "
                f"{LATEST}. {_MIGRATE_HINT}.")
        row = con.execute(
            "SELECT current_user, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
        assert row is not None
        user, superuser, bypass = row
        problems = []
        if superuser:
            problems.append("is a superuser")
        if bypass:
            problems.append("has BYPASSRLS")
        owned = [r[0] for r in con.execute(
            "SELECT c.relname FROM unnest(%s::text[]) t(name) "
            "JOIN pg_class c ON c.oid = to_regclass(t.name) "
            "WHERE pg_has_role(current_user, c.relowner, 'MEMBER') "
            "OR NOT (c.relrowsecurity AND c.relforcerowsecurity)",
            [list(TENANT_TABLES + MEMORY_TABLES)],
        ).fetchall()]
        if owned:
            problems.append(f"owns (or may become the owner of) {', '.join(owned)}, or their "
                            "row-level security is off")
        if problems:
            raise UnsafeRole(
                f"{self.where}: the role {user!r} {' and '.join(problems)}, so the row-level "
                "security policies would not keep tenants apart. Connect as an application "
                "role that owns nothing (NOSUPERUSER NOBYPASSRLS, a member of no owner role) "
                f"and grant it the tables. {_MIGRATE_HINT}.")
        self.role = user
        self._pinned_tenant(con)

    def _pinned_tenant(self, con: psycopg.Connection) -> None:
        """A role pinned to tenants (forge_tenant_role) acts for one of them: left at
        ``default``, a role pinned to one acts for it, as it does in psql; any other tenant
        is refused now, in one line, rather than as empty reads and refused writes."""
        with said_plainly(self.role, self.tenant_id, self.where):
            pinned = [r[0] for r in con.execute("SELECT forge_pinned_tenants()").fetchall()]
        if not pinned or self.tenant_id in pinned:
            return
        if self.tenant_id == DEFAULT_TENANT and len(pinned) == 1:
            self.tenant_id = pinned[0]
            return
        raise tenant_refused(self.role, self.tenant_id, pinned, self.where)

    # -- transactions ----------------------------------------------------------------------

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection]:
        held = getattr(self._local, "held", None)
        if held is not None:
            yield held
            return
        try:
            with self._pool.connection(timeout=self.connect_timeout) as conn:
                yield conn
        except PoolTimeout as error:
            raise StoreUnavailable(
                f"{self.where}: no connection within {self.connect_timeout:g} s (the server "
                "is down, or every pooled connection is busy). The rows the session buffered "
                "are kept for the next flush; retry once the server answers."
            ) from error

    @contextmanager
    def _begun(self) -> Iterator[psycopg.Connection]:
        """A connection in a new transaction, the tenant set for it. A pooled connection the
        server dropped meanwhile (a restart) fails at once, before anything of the call ran
        on it: it is discarded and the call goes on with the next (at most every pooled one
        and a new one; a server that is down fails in ``_connection``)."""
        attempts = self._pool.max_size + 1  # every pooled connection may be a dead one
        for attempt in range(attempts):
            with ExitStack() as stack:
                conn = stack.enter_context(self._connection())
                try:
                    stack.enter_context(conn.transaction())
                    conn.execute(_SET_TENANT, [self.tenant_id])
                except psycopg.OperationalError:
                    if attempt == attempts - 1 or getattr(self._local, "held", None) is not None:
                        raise
                    continue  # the pool closes the broken connection as it takes it back
                yield conn
                return

    @contextmanager
    def _tx(self) -> Iterator[PgConnection]:
        """One transaction, the tenant set for it; a nested call joins the outer one."""
        current = getattr(self._local, "tx", None)
        if current is not None:
            yield current
            return
        try:
            with said_plainly(self.role, self.tenant_id, self.where), self._begun() as conn:
                self._local.tx = PgConnection(conn)
                try:
                    yield self._local.tx
                finally:
                    self._local.tx = None
        except pg_errors.UniqueViolation as error:
            detail = error.diag.message_detail or str(error)
            raise DuplicateId(
                f"{detail.strip()} Ids are global: another session or tenant holds this one; "
                "nothing of the batch was written."
            ) from error
        except psycopg.OperationalError as error:
            raise StoreUnavailable(
                f"{self.where} failed mid-transaction ({str(error).strip()}); the transaction "
                "was rolled back, nothing of it was written. Retry once the server answers."
            ) from error

    @contextmanager
    def hold(self) -> Iterator[PostgresStore]:
        """One pooled connection for every call inside the block (each call still its own
        transaction)."""
        if getattr(self._local, "held", None) is not None:
            yield self
            return
        with self._connection() as conn:
            self._local.held = conn
            try:
                yield self
            finally:
                self._local.held = None

    @contextmanager
    def reading(self) -> Iterator[PgConnection]:
        """A read-only, repeatable-read transaction over this tenant's rows (the policies
        scope every table), with a statement timeout, always rolled back. Forge's own SQL
        only: SQL a person writes runs on a copy (``Store.sql``, sandbox.py)."""
        if getattr(self._local, "tx", None) is not None:
            raise RuntimeError("a read-only query cannot run inside a store write")
        with said_plainly(self.role, self.tenant_id, self.where), self._connection() as conn, \
                conn.transaction(force_rollback=True):
            # one snapshot for every statement (the SQL sandbox copies several tables)
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            conn.execute("SELECT set_config('statement_timeout', %s, true)",
                         [f"{int(self.statement_timeout * 1000)}ms"])
            conn.execute(_SET_TENANT, [self.tenant_id])
            yield PgConnection(conn)

    def delete_session(self, session_id: str) -> None:
        """Retention's one path to finished rows: the owner's ``forge_delete_session``
        (postgres/history_guard.py), the same deletion the DuckDB store makes."""
        with self._tx() as con:
            self._lock_sessions(con, {session_id})
            reads.session_flags(con, self.tenant_id, session_id)
            con.execute("SELECT forge_delete_session(?)", [session_id])

    def _lock_sessions(self, con: Any, session_ids: set[str]) -> None:
        if session_ids:
            con.execute("SELECT id FROM session WHERE tenant_id = ? AND id = ANY(?) "
                        "ORDER BY id FOR UPDATE", [self.tenant_id, sorted(session_ids)])

    # -- runner lease: a compare-and-swap on the session row, on the database's clock -----

    def acquire_lease(
        self, session_id: str, owner: str, ttl: float, *, replacing: str | None = None
    ) -> bool:
        with self._tx() as con:
            taken = con.execute(
                "UPDATE session SET lease_owner = ?, "
                "lease_expires = clock_timestamp() + make_interval(secs => ?) "
                "WHERE tenant_id = ? AND id = ? AND deleted_at IS NULL AND ("
                "lease_owner IS NULL OR lease_owner = ? OR lease_owner = ? "
                "OR lease_expires IS NULL OR lease_expires <= clock_timestamp()) RETURNING id",
                [owner, float(ttl), self.tenant_id, session_id, owner, replacing],
            ).fetchone()
            if taken is None:  # missing, deleted (raised here) or held by a live other
                reads.session_flags(con, self.tenant_id, session_id)
            return taken is not None

    def lease(self, session_id: str) -> tuple[str, float] | None:
        with self._tx() as con:
            reads.session_flags(con, self.tenant_id, session_id)
            row = con.execute(
                "SELECT lease_owner, epoch_us(lease_expires) FROM session "
                "WHERE tenant_id = ? AND id = ? AND lease_expires > clock_timestamp()",
                [self.tenant_id, session_id],
            ).fetchone()
        if row is None or row[0] is None:
            return None
        return row[0], row[1] / 1_000_000

    # -- closing ---------------------------------------------------------------------------

    def close(self) -> None:
        pool = getattr(self, "_pool", None)
        if pool is not None and not pool.closed:
            pool.close()
