"""PostgreSQL schema step 7: finished history is immutable in the database itself, a pinned
login role's own tenant is its default, and a read-only role for analysts.

The store's own writes already keep DESIGN §3's first invariant (``plan.plan_write``): a
finished message and its parts never change. But a person holding the application role's
password in psql can send any SQL, and ``DELETE FROM part`` there removed a tenant's finished
history with nothing to say so. So the owner's triggers refuse it for every role but the
tables' owner (and whoever the owner runs as, which is how ``forge_delete_session`` works):

- ``message``: a finished row (a terminal status) is never updated or deleted;
- ``part``: a finished row (``rows.PART_TERMINAL_SQL``) is never updated or deleted, and no
  part is written, changed or removed in a message that has finished (the store writes a
  batch's parts before its messages, sql/writes.py, so a batch that finishes a message lands
  its last parts while the stored message still runs);
- ``session_message`` (the timelines) and ``event`` (the audit record): append-only;
- ``session``: never deleted (a deletion is a tombstone); its id, creation, fork origin and
  tombstone never change, and its timeline never shrinks;
- ``TRUNCATE`` of any of them, should a DBA ever grant it.

The one way to remove finished rows is retention's: ``forge_delete_session(id)``, SECURITY
DEFINER as the owner, which deletes a whole session of the caller's tenant exactly as the
DuckDB store does (the same SQL, ``writes.DOOMED_MESSAGES``) — never single messages or
parts. A non-owner cannot ``ALTER TABLE … DISABLE TRIGGER`` or ``DROP TRIGGER``, and
``session_replication_role`` (which skips triggers) is a superuser's setting.

Each refusal is SQLSTATE ``FG001`` with a message that says what to do (the store turns it
into ``Immutable``, postgres/errors.py).
"""

from __future__ import annotations

from ...message import TERMINAL_STATUSES
from ..rows import PART_TERMINAL_SQL
from ..sql.tables import TENANT_TABLES
from ..sql.writes import DOOMED_MESSAGES

IMMUTABLE_STATE = "FG001"  # a custom SQLSTATE: ours, never one PostgreSQL raises
_TERMINAL = ", ".join(f"'{s}'" for s in sorted(TERMINAL_STATUSES))
_HINT = ("finished history is kept as it was written; delete a whole session with "
         "SELECT forge_delete_session('ses_…') (docs/schema.md)")

# The owner (or a member of it: the migration role) may do anything: TRUNCATE in a test
# fixture, a DBA's repair. ``current_user`` is the owner inside a SECURITY DEFINER function
# of the owner's, and a login role the store accepts is never a member (store.UnsafeRole).
_IS_OWNER = ("pg_has_role(current_user, (SELECT c.relowner FROM pg_catalog.pg_class c "
             "WHERE c.oid = TG_RELID), 'MEMBER')")


def _refuse(what: str) -> str:
    """Refuse with ``what`` (a SQL expression) unless the caller is the owner: the catalogue
    is read only on the way to a refusal, never on the store's own path."""
    hint = _HINT.replace("'", "''")
    return (f"IF NOT {_IS_OWNER} THEN RAISE EXCEPTION USING ERRCODE = '{IMMUTABLE_STATE}', "
            f"MESSAGE = {what}, HINT = '{hint}'; END IF;")


_GUARD = f"""
    CREATE FUNCTION forge_guard_history() RETURNS trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
    DECLARE
        finished boolean;
    BEGIN
        IF TG_OP = 'TRUNCATE' THEN
            {_refuse("format('TRUNCATE %I is refused: finished history cannot be removed', TG_TABLE_NAME)")}
        END IF;
        IF TG_TABLE_NAME = 'message' THEN
            IF TG_OP <> 'INSERT' AND OLD.status IN ({_TERMINAL}) THEN
                {_refuse("format('message %s has finished (%s): it cannot be %s', OLD.id, OLD.status, lower(TG_OP) || 'd')")}
            END IF;
        ELSIF TG_TABLE_NAME = 'part' THEN
            IF TG_OP <> 'INSERT' THEN
                SELECT {PART_TERMINAL_SQL} INTO finished
                FROM (VALUES (OLD.type, OLD.tool_state, OLD.time_end)) AS p(type, tool_state, time_end);
                IF finished THEN
                    {_refuse("format('part %s has finished: it cannot be %s', OLD.id, lower(TG_OP) || 'd')")}
                END IF;
            END IF;
            IF EXISTS (SELECT 1 FROM {{schema}}.message m
                       WHERE m.id IN (CASE WHEN TG_OP = 'DELETE' THEN OLD.message_id ELSE NEW.message_id END,
                                      CASE WHEN TG_OP = 'INSERT' THEN NULL ELSE OLD.message_id END)
                         AND m.status IN ({_TERMINAL})) THEN
                {_refuse("format('the message of part %s has finished: its parts cannot change', coalesce(NEW.id, OLD.id))")}
            END IF;
        ELSIF TG_TABLE_NAME IN ('session_message', 'event') THEN
            IF TG_OP <> 'INSERT' THEN
                {_refuse("format('%s is append-only: a row cannot be %s', TG_TABLE_NAME, lower(TG_OP) || 'd')")}
            END IF;
        ELSIF TG_TABLE_NAME = 'session' THEN
            IF TG_OP = 'DELETE' THEN
                {_refuse("format('session %s cannot be deleted row by row', OLD.id)")}
            ELSIF TG_OP = 'UPDATE' AND (
                    NEW.id IS DISTINCT FROM OLD.id
                 OR NEW.created_at IS DISTINCT FROM OLD.created_at
                 OR NEW.parent_id IS DISTINCT FROM OLD.parent_id
                 OR NEW.forked_from_session IS DISTINCT FROM OLD.forked_from_session
                 OR NEW.forked_from_message IS DISTINCT FROM OLD.forked_from_message
                 OR NEW.deleted_at IS DISTINCT FROM OLD.deleted_at
                 OR NEW.timeline_length < OLD.timeline_length) THEN
                {_refuse("format('session %s: its id, origin, tombstone and timeline cannot be rewritten', OLD.id)")}
            END IF;
        END IF;
        RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
    END $$
    """

# Retention's path (retention.py → PostgresStore.delete_session): a whole session of the
# caller's tenant (``forge_tenant()``: the policies bind the owner too, FORCE), its bodies
# unless a fork still points at them, the pointers, then the tombstone.
_DELETE_SESSION = """
    CREATE FUNCTION forge_delete_session(target text) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = {schema}, pg_temp AS $$
    DECLARE
        _tenant text := forge_tenant();
        _session text := target;
        doomed text[];
    BEGIN
        PERFORM 1 FROM session WHERE tenant_id = _tenant AND id = _session
            AND deleted_at IS NULL FOR UPDATE;
        IF NOT FOUND THEN
            RAISE EXCEPTION USING ERRCODE = 'no_data_found',
                MESSAGE = format('no live session %s of this tenant (%s) to delete',
                                 _session, coalesce(_tenant, 'none: SET forge.tenant'));
        END IF;
        SELECT coalesce(array_agg(id), '{{}}') INTO doomed FROM (__DOOMED__) AS d;
        DELETE FROM part WHERE tenant_id = _tenant AND message_id = ANY(doomed);
        DELETE FROM message WHERE tenant_id = _tenant AND id = ANY(doomed);
        DELETE FROM session_message WHERE tenant_id = _tenant AND session_id = _session;
        UPDATE session SET deleted_at = now(), lease_owner = NULL, lease_expires = NULL,
            timeline_length = 0, last_message_id = NULL
            WHERE tenant_id = _tenant AND id = _session;
        RETURN cardinality(doomed);
    END $$
    """.replace("__DOOMED__", DOOMED_MESSAGES.replace("$t", "_tenant").replace("$s", "_session"))

# A pinned role (forge_tenant_role) pinned to one tenant acts for it without SET forge.tenant
# (psql, a BI tool); pinned to several, it names one. Same rules otherwise as step 3's.
_TENANT_DEFAULT = """
    CREATE OR REPLACE FUNCTION forge_tenant() RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
        SELECT CASE
            WHEN NOT EXISTS (SELECT 1 FROM {schema}.forge_tenant_role r
                             WHERE r.role_name = session_user) THEN s.t
            WHEN s.t IS NULL THEN (SELECT min(r.tenant_id) FROM {schema}.forge_tenant_role r
                                   WHERE r.role_name = session_user HAVING count(*) = 1)
            WHEN EXISTS (SELECT 1 FROM {schema}.forge_tenant_role r
                         WHERE r.role_name = session_user AND r.tenant_id = s.t) THEN s.t
        END
        FROM (SELECT nullif(current_setting('forge.tenant', true), '') AS t) s
    $$
    """

# What a login role may act for, its own row only (forge_tenant_role stays unreadable): the
# store names them when a tenant is refused, and takes a lone one as its default.
_PINNED = """
    CREATE FUNCTION forge_pinned_tenants() RETURNS SETOF text
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$ SELECT r.tenant_id FROM {schema}.forge_tenant_role r
          WHERE r.role_name = session_user ORDER BY r.tenant_id $$
    """

# An upgraded database keeps working for the roles granted before this step (the DBA need
# not name them again): those that may run forge_tenant() get the new functions — the delete
# path only where they may write history.
_GRANT_EXISTING = """
    DO $$
    DECLARE r name;
    BEGIN
        FOR r IN SELECT rolname FROM pg_catalog.pg_roles
                 WHERE NOT rolsuper AND NOT pg_has_role(oid, current_user, 'MEMBER')
                   AND has_function_privilege(oid, 'forge_tenant()', 'EXECUTE') LOOP
            EXECUTE format('GRANT EXECUTE ON FUNCTION forge_pinned_tenants() TO %I', r);
            IF has_table_privilege(r, 'part', 'DELETE') THEN
                EXECUTE format('GRANT EXECUTE ON FUNCTION forge_delete_session(text) TO %I', r);
            END IF;
        END LOOP;
    END $$
    """

HISTORY_GUARD: tuple[str, ...] = (
    _GUARD,
    # an INSERT is checked only where one can change finished history: a part into a
    # finished message (a new message, pointer, event or session changes nothing written)
    *(f"CREATE TRIGGER forge_guard_history BEFORE UPDATE OR DELETE"
      f"{' OR INSERT' if table == 'part' else ''} ON {table} "
      "FOR EACH ROW EXECUTE FUNCTION forge_guard_history()" for table in TENANT_TABLES),
    *(f"CREATE TRIGGER forge_guard_truncate BEFORE TRUNCATE ON {table} "
      "FOR EACH STATEMENT EXECUTE FUNCTION forge_guard_history()" for table in TENANT_TABLES),
    _DELETE_SESSION,
    "REVOKE ALL ON FUNCTION forge_delete_session(text) FROM PUBLIC",
    _TENANT_DEFAULT,
    _PINNED,
    "REVOKE ALL ON FUNCTION forge_pinned_tenants() FROM PUBLIC",
    _GRANT_EXISTING,
)

# Functions each kind of role is granted (postgres/schema.migrate)
APP_FUNCTIONS = ("forge_tenant()", "forge_pinned_tenants()", "forge_delete_session(text)")
READER_FUNCTIONS = ("forge_tenant()", "forge_pinned_tenants()")
