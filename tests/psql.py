"""Debian's ``psql``, run as a subprocess against the throwaway cluster: what a person on a
team sees when they open the database themselves (the tests of docs/schema.md's examples,
pinned roles, the read-only role, finished history)."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from tests.pg_cluster import PgClusterError, find_bindir


def psql_binary() -> str:
    """The cluster's own version's psql, else the one on PATH; fails saying what to install."""
    try:
        own = find_bindir() / "psql"
    except PgClusterError:
        own = Path("/nonexistent")
    found = str(own) if own.is_file() else shutil.which("psql")
    if found is None:
        raise PgClusterError("psql was not found: apt-get install postgresql-client")
    return found


@dataclass(frozen=True)
class Psql:
    """What one psql run printed."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def rows(self) -> list[list[str]]:
        """The rows of an unaligned, tuples-only run (``-At``), fields split on ``|``."""
        return [line.split("|") for line in self.stdout.splitlines() if line]


def psql(dsn: str, sql: str, *, csv: bool = False) -> Psql:
    """Run ``sql`` in psql as the DSN's role (the password through PGPASSWORD, as a person
    would keep it out of the command line); ``-v ON_ERROR_STOP=1``: the first error ends it.
    The output is unaligned rows without a header (``-At``), or with ``csv`` a header and
    the rows as CSV (values holding newlines or ``|`` stay whole)."""
    url = urlsplit(dsn)
    env = {**os.environ, "PGPASSWORD": unquote(url.password or ""), "PGTZ": "UTC",
           "PGOPTIONS": "", "LC_ALL": "C"}
    args = [psql_binary(), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", url.hostname or "",
            "-p", str(url.port), "-U", unquote(url.username or ""), "-d", url.path.lstrip("/")]
    args.append("--csv" if csv else "-At")
    done = subprocess.run(args, input=sql, capture_output=True, text=True, env=env, timeout=60)
    return Psql(done.returncode, done.stdout, done.stderr)
