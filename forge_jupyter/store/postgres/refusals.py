"""What PostgreSQL refuses a login role, said to a person in one line (not a psycopg error).

The database is the last word on tenancy and on finished history (row-level security, the
owner's triggers: postgres/schema.py, history_guard.py); a refusal there reaches a person as
a ``ForgeError`` that names the role, the tenant and what to do — ``forge-jupyter copy``, a
magic and a script all print it as one line.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg import errors as pg_errors

from ...errors import AccessRefused, Immutable
from .history_guard import IMMUTABLE_STATE

_GRANT_HINT = ("A DBA grants an application role with: python -m "
               "forge_jupyter.store.postgres.schema OWNER_URL ROLE (docs/schema.md)")


def tenant_refused(role: str, tenant: str, pinned: list[str], where: str) -> AccessRefused:
    """A pinned role asked to act for a tenant it may not."""
    options = ", ".join(repr(t) for t in pinned)
    return AccessRefused(
        f"{where}: the role {role!r} may act only for tenant {options}, not {tenant!r}. "
        f"Set Forge.tenant / FORGE_TENANT (forge-jupyter copy: --tenant / --dst-tenant) to "
        f"{options if len(pinned) == 1 else 'one of them'}, or ask the DBA to pin the role "
        f"to {tenant!r} (INSERT INTO forge_tenant_role).")


@contextmanager
def said_plainly(role: str, tenant: str, where: str) -> Iterator[None]:
    """Refusals of the database inside the block, as ``AccessRefused`` / ``Immutable``."""
    try:
        yield
    except pg_errors.InsufficientPrivilege as error:
        text = (error.diag.message_primary or str(error)).strip()
        if "row-level security" in text:
            raise AccessRefused(
                f"{where}: the database refused a row of tenant {tenant!r} for the role "
                f"{role!r} ({text}): the role is pinned to another tenant. Set Forge.tenant / "
                "FORGE_TENANT to the role's own tenant, or log in as a role pinned to "
                f"{tenant!r}.") from error
        raise AccessRefused(
            f"{where}: the role {role!r} may not do this ({text}); a read-only role only "
            f"reads. {_GRANT_HINT}.") from error
    except psycopg.Error as error:
        if error.sqlstate != IMMUTABLE_STATE:
            raise
        raise Immutable(
            f"{where}: {(error.diag.message_primary or str(error)).strip()}. "
            f"{(error.diag.message_hint or '').strip()}".rstrip()) from error
