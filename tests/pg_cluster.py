"""A throwaway PostgreSQL cluster for the tests, from Debian's ``postgresql`` package.

Nothing here assumes a server that is already running: ``initdb`` makes a cluster in a fresh
temp dir, ``pg_ctl`` starts it on a free loopback port (its unix socket stays in the temp dir
too), and it is stopped and deleted at the end, also when a test fails.

Three kinds of role, as a DBA would set them up (docs/schema.md):

- the *admin*: the cluster's bootstrap superuser. Only makes databases and roles.
- a database's *owner*: NOSUPERUSER, owns the database, so it creates the schema, the tables
  and the row-level security policies (the store's migrations run as it).
- an *application role*: NOSUPERUSER, NOBYPASSRLS, NOINHERIT, owns nothing, member of nothing;
  the store connects as it, so every policy applies to every query it sends.

Settings are for speed, not durability: ``fsync=off`` and ``full_page_writes=off`` only matter
when the *operating system* crashes (a killed or restarted ``postgres`` loses nothing: its WAL
writes are already in the kernel). ``synchronous_commit`` stays on, so a commit the store saw
succeed survives ``restart(mode="immediate")`` — the restart tests depend on that.

initdb and postgres refuse to run as root: as root they run as an unprivileged OS user
(``forge-pg``, created with ``useradd --system`` when missing, else ``nobody``).

Used from any test folder through the root conftest (``pytest_plugins``)::

    def test_x(pg_database):                      # a fresh database for this test
        app = pg_database.create_app_role()       # the store's login role
        store = PostgresStore(app.dsn, ...)       # after the owner made the schema

or session-wide ``pg_cluster.create_database()`` for a module's own database. A test that only
needs a migrated, empty database takes ``pg_empty`` — ``(db, app)`` of the run's one database,
its tables emptied before the test — instead of paying a ``CREATE DATABASE`` and a migration.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest

OS_USER = "forge-pg"
INSTALL_HINT = (
    "PostgreSQL's server binaries (initdb, pg_ctl, postgres) were not found under "
    "/usr/lib/postgresql/<version>/bin. Install Debian's package: `apt-get install postgresql` "
    "(.ci/run does), or point FORGE_PG_BINDIR at a directory holding them."
)

# Fast, test-only server settings (see the module docstring for why each is safe here).
FAST_SETTINGS: dict[str, str] = {
    "fsync": "off",
    "full_page_writes": "off",
    "synchronous_commit": "on",
    "max_connections": "200",
    "shared_buffers": "64MB",
    "listen_addresses": "'127.0.0.1'",
    "log_min_messages": "warning",
    "logging_collector": "off",
}


class PgClusterError(RuntimeError):
    """The throwaway cluster could not be made or started (the message says what to do)."""


def find_bindir() -> Path:
    """The newest Debian PostgreSQL server bin dir (or ``$FORGE_PG_BINDIR``); fails clearly."""
    env = os.environ.get("FORGE_PG_BINDIR")
    candidates = [Path(env)] if env else []

    def version(p: str) -> tuple[int, ...]:
        name = Path(p).parent.name
        return tuple(int(x) for x in name.split(".") if x.isdigit())

    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version, reverse=True)]
    for bindir in candidates:
        if all((bindir / exe).is_file() for exe in ("initdb", "pg_ctl", "postgres")):
            return bindir
    raise PgClusterError(INSTALL_HINT)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _unprivileged_user() -> pwd.struct_passwd | None:
    """None when not root; else the OS user postgres runs as (made once if missing)."""
    if os.geteuid() != 0:
        return None
    with contextlib.suppress(KeyError):
        return pwd.getpwnam(OS_USER)
    if shutil.which("useradd"):
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", OS_USER],
            capture_output=True,
            check=False,
        )
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(OS_USER)
    return pwd.getpwnam("nobody")


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


@dataclass(frozen=True)
class AppRole:
    """A login role that is not superuser, cannot bypass RLS and owns nothing."""

    name: str
    password: str
    dsn: str


@dataclass
class PgDatabase:
    """One fresh database of the cluster, owned by its own non-superuser owner role."""

    cluster: PgCluster
    name: str
    owner: str
    owner_password: str

    @property
    def owner_dsn(self) -> str:
        """Connects as the database's owner: creates the schema, tables and policies."""
        return self.cluster.dsn(self.owner, self.owner_password, self.name)

    @property
    def admin_dsn(self) -> str:
        """Connects as the cluster superuser (RLS never applies to it: not for the store)."""
        return self.cluster.admin_dsn(self.name)

    def create_app_role(self, name: str | None = None) -> AppRole:
        """A fresh application role allowed to CONNECT here; table grants are the schema's job."""
        role = name or f"forge_app_{secrets.token_hex(4)}"
        password = secrets.token_urlsafe(16)
        self.cluster.admin_sql(
            f"CREATE ROLE {_ident(role)} LOGIN PASSWORD {_literal(password)} "
            "NOSUPERUSER NOBYPASSRLS NOINHERIT NOCREATEDB NOCREATEROLE NOREPLICATION",
            f"GRANT CONNECT ON DATABASE {_ident(self.name)} TO {_ident(role)}",
        )
        return AppRole(role, password, self.cluster.dsn(role, password, self.name))


class PgCluster:
    """initdb + pg_ctl in a temp dir; ``stop()`` (or the context manager) removes everything."""

    def __init__(self, settings: dict[str, str] | None = None) -> None:
        self.bindir = find_bindir()
        self.settings = {**FAST_SETTINGS, **(settings or {})}
        self.user = _unprivileged_user()
        self.admin = "forge_admin"
        self.admin_password = secrets.token_urlsafe(16)
        self.root = Path(tempfile.mkdtemp(prefix="forge-pg-"))
        self.datadir = self.root / "data"
        self.socket_dir = self.root / "sock"
        self.logfile = self.root / "server.log"
        self.port = 0
        self._running = False
        self._databases = 0
        atexit.register(self.stop)
        try:
            self._initdb()
            self.start()
        except BaseException:
            self.stop()
            raise

    # -- processes -------------------------------------------------------------------------
    def _run(self, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        kw: dict = {}
        if self.user is not None:
            kw = {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}
        env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PGTZ": "UTC", "TZ": "UTC"}
        proc = subprocess.run(list(args), capture_output=True, text=True, env=env, timeout=timeout, cwd=self.root, **kw)
        if check and proc.returncode != 0:
            raise PgClusterError(f"{' '.join(args[:2])} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}\n{self.log_tail()}")
        return proc

    def _initdb(self) -> None:
        pwfile = self.root / "pwfile"
        pwfile.write_text(self.admin_password + "\n")
        self.socket_dir.mkdir()
        if self.user is not None:
            for p in (self.root, self.socket_dir, pwfile):
                os.chown(p, self.user.pw_uid, self.user.pw_gid)
        # scram on every connection: DSNs carry a password, as they would against a real server.
        self._run(
            str(self.bindir / "initdb"), "-D", str(self.datadir), "-U", self.admin, f"--pwfile={pwfile}",
            "--auth=scram-sha-256", "--encoding=UTF8", "--no-locale", "--no-sync",
        )
        pwfile.unlink()
        with open(self.datadir / "postgresql.conf", "a") as conf:
            conf.write("\n# forge-jupyter tests (tests/pg_cluster.py): speed, not durability\n")
            for key, value in self.settings.items():
                conf.write(f"{key} = {value}\n")
            conf.write(f"unix_socket_directories = {_literal(str(self.socket_dir))}\n")

    def start(self) -> None:
        """Start on a free port (tried again on another when one is taken meanwhile)."""
        last = ""
        for _ in range(5):
            self.port = free_port()
            proc = self._run(
                str(self.bindir / "pg_ctl"), "-D", str(self.datadir), "-l", str(self.logfile),
                "-o", f"-p {self.port}", "-w", "-t", "60", "start", check=False,
            )
            if proc.returncode == 0:
                self._running = True
                return
            last = proc.stdout + proc.stderr + self.log_tail()
            if "could not bind" not in last and "already in use" not in last:
                break
        raise PgClusterError(f"pg_ctl start failed:\n{last}")

    def restart(self, mode: str = "fast") -> None:
        """Stop (``fast`` or ``immediate``: as a crash) and start again on the same port."""
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.datadir), "-m", mode, "-w", "stop")
        self._run(
            str(self.bindir / "pg_ctl"), "-D", str(self.datadir), "-l", str(self.logfile),
            "-o", f"-p {self.port}", "-w", "-t", "60", "start",
        )

    def postmaster_pid(self) -> int | None:
        with contextlib.suppress(OSError, ValueError, IndexError):
            return int((self.datadir / "postmaster.pid").read_text().split()[0])
        return None

    def stop(self) -> None:
        """Stop the server (killing it if it will not stop) and delete the temp dir. Idempotent."""
        with contextlib.suppress(ValueError):
            atexit.unregister(self.stop)
        pid = self.postmaster_pid()
        if self.datadir.exists() and pid is not None:
            with contextlib.suppress(Exception):
                self._run(str(self.bindir / "pg_ctl"), "-D", str(self.datadir), "-m", "fast", "-w", "-t", "30", "stop", check=False, timeout=40)
            if _alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)  # children exit when the postmaster is gone
                _wait_gone(pid, 10)
        self._running = False
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PgCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def log_tail(self, lines: int = 30) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.logfile.read_text(errors="replace").splitlines()[-lines:])
        return ""

    # -- connections -----------------------------------------------------------------------
    def dsn(self, user: str, password: str, dbname: str) -> str:
        return f"postgresql://{quote(user, safe='')}:{quote(password, safe='')}@127.0.0.1:{self.port}/{quote(dbname, safe='')}"

    def admin_dsn(self, dbname: str = "postgres") -> str:
        return self.dsn(self.admin, self.admin_password, dbname)

    def admin_sql(self, *statements: str, dbname: str = "postgres") -> None:
        """Run statements as the superuser, each on its own (CREATE DATABASE is not transactional)."""
        import psycopg

        with psycopg.connect(self.admin_dsn(dbname), autocommit=True) as conn:
            for sql in statements:
                conn.execute(sql)  # type: ignore[arg-type]  # our own literal SQL

    def create_database(self, name: str | None = None) -> PgDatabase:
        """A fresh, empty database owned by a fresh non-superuser owner role."""
        self._databases += 1
        name = name or f"forge_{self._databases}_{secrets.token_hex(3)}"
        owner = f"{name}_owner"
        password = secrets.token_urlsafe(16)
        self.admin_sql(
            f"CREATE ROLE {_ident(owner)} LOGIN PASSWORD {_literal(password)} "
            "NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOREPLICATION",
            f"CREATE DATABASE {_ident(name)} OWNER {_ident(owner)} TEMPLATE template0 ENCODING 'UTF8'",
            f"REVOKE ALL ON DATABASE {_ident(name)} FROM PUBLIC",
        )
        return PgDatabase(self, name, owner, password)

    def drop_database(self, db: PgDatabase) -> None:
        self.admin_sql(
            f"DROP DATABASE IF EXISTS {_ident(db.name)} WITH (FORCE)",
            f"DROP ROLE IF EXISTS {_ident(db.owner)}",
        )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours counts as gone.
    with contextlib.suppress(OSError):
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    return True


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


@contextlib.contextmanager
def pg_cluster_running(settings: dict[str, str] | None = None) -> Iterator[PgCluster]:
    """For scripts and benchmarks outside pytest."""
    cluster = PgCluster(settings)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    """One throwaway cluster for the whole session, started on first use; fails (never skips)
    with the install command when PostgreSQL's binaries are missing."""
    try:
        cluster = PgCluster()
    except PgClusterError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield cluster
    finally:
        cluster.stop()


def empty_tables(owner_dsn: str) -> None:
    """Every table of the database's schema emptied but ``forge_schema`` (the migration stays
    applied); a lock left by a store that did not close fails here in seconds, not hangs."""
    import psycopg

    with psycopg.connect(owner_dsn, autocommit=True) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = current_schema() "
            "AND tablename <> 'forge_schema' ORDER BY tablename")]
        conn.execute("SET lock_timeout = '10s'")
        conn.execute(f"TRUNCATE {', '.join(tables)}")  # type: ignore[arg-type]  # catalogue names


@pytest.fixture(scope="session")
def pg_shared(pg_cluster: PgCluster) -> tuple[PgDatabase, AppRole]:
    """The run's one migrated database and the application role its stores log in as."""
    from forge_jupyter.store.postgres.schema import migrate

    db = pg_cluster.create_database("forge_shared")
    app = db.create_app_role("forge_shared_app")
    migrate(db.owner_dsn, (app.name,))
    return db, app


@pytest.fixture
def pg_empty(pg_shared: tuple[PgDatabase, AppRole]) -> tuple[PgDatabase, AppRole]:
    """The run's migrated database with every table empty, as a fresh one would be (TRUNCATE
    takes milliseconds; ``CREATE DATABASE`` and the migration took a second or more)."""
    empty_tables(pg_shared[0].owner_dsn)
    return pg_shared


@pytest.fixture
def pg_database(pg_cluster: PgCluster) -> Iterator[PgDatabase]:
    """A fresh database for one test, dropped after it."""
    db = pg_cluster.create_database()
    yield db
    with contextlib.suppress(Exception):
        pg_cluster.drop_database(db)
