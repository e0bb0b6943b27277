"""One DuckDB file shared by several processes (DESIGN §3, "Several kernels, one file").

DuckDB lets one process at a time open a file read-write, so nobody may keep it open while
idle. Every operation:

1. takes this process's per-file ``threading.RLock`` (threads share one connection);
2. on the outermost entry, takes an exclusive ``fcntl.flock`` on the sidecar ``<file>.lock`` —
   our processes queue in the kernel instead of spinning on DuckDB's lock errors — and then
   attaches the file to a private in-memory DuckDB instance (``ATTACH … AS forge``),
   retrying with jittered exponential backoff while a program that is not ours (the DuckDB
   CLI, say) holds the file;
3. runs in one transaction; on the outermost exit, detaches the file (DuckDB checkpoints
   and lets go of it) and releases the flock.

A program that is not ours and keeps the file open (a DuckDB CLI session, DBeaver, a
``duckdb.connect()`` in a cell) is waited for only briefly (``FOREIGN_WAIT``): then every
forge process works on a copy beside the file until it is free, and the copy lands in its
place then (pending.py) — the agent never stalls on someone reading its history.

Why attach rather than ``duckdb.connect(path)``: creating a DuckDB instance costs ~18 ms here
(it registers every builtin function), attaching a file ~1.5 ms; detaching releases the file
exactly as closing does. The in-memory instance holds no file, so an idle process holds nothing.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import duckdb

from ...errors import StoreLocked, StoreUnreadable
from .errors import check_header, path_error, translated
from .flock import QueueLock
from .pending import DUCKDB_CONFIG, Pending, say
from .schema import migrate, schema_version

CATALOG = "forge"  # the name the attached file goes by inside our instance
# A new file is written in the storage format DuckDB 1.0 reads, so the DuckDB CLI, DBeaver/JDBC
# and 1.x Python or Node clients people have open it too (2.x writes version 69, which 1.x
# refuses). An existing file keeps the format it has: DuckDB cannot lower it (a 1.x-readable
# copy of an older store: ``forge-jupyter copy old.duckdb new.duckdb``, docs/storage.md).
STORAGE_VERSION = "v1.0.0"
_BACKOFF_FIRST = 0.005
_BACKOFF_MAX = 0.25
# How long a program outside forge may hold the file before forge's writes go to the pending
# copy instead: long enough for a reader that connects, queries and closes, short enough that
# nobody notices the wait.
FOREIGN_WAIT = 0.5
# How often a process whose writes wait beside the file looks whether it is free again.
LAND_EVERY = 1.0



def _is_lock_error(error: duckdb.Error) -> bool:
    text = str(error)
    return "Could not set lock" in text or "Conflicting lock" in text


class DuckDBFile:
    """A database file as this process sees it: the queue lock, the attachment, one connection."""

    def __init__(self, path: Path):
        self.path = path
        self.lock_path = path.with_name(path.name + ".lock")
        self._mutex = threading.RLock()
        self._depth = 0
        self._open_now = False  # attached, flock held
        self._waiting = 0  # threads queued on _mutex
        self._waiting_guard = threading.Lock()
        self._queue = QueueLock(path, self.lock_path)
        self._con: duckdb.DuckDBPyConnection | None = None  # in-memory instance, kept
        self._in_tx = False
        self.pending = Pending(path)
        self.diverted = False  # the attached file is the pending copy (pending.py)
        self._lander: threading.Timer | None = None

    # -- the outermost entry ----------------------------------------------------------------

    @contextmanager
    def opened(self, timeout: float) -> Iterator[duckdb.DuckDBPyConnection]:
        """The connection with the file attached; reentrant, shared by this process's threads.

        The outermost exit closes the file — unless another thread of this process is already
        queued for it, which then goes on with the file as it is (a hand-over, not idling).
        """
        with self._waiting_guard:
            self._waiting += 1
        try:
            got = self._mutex.acquire(timeout=max(timeout, 0.001))
        finally:
            with self._waiting_guard:
                self._waiting -= 1
        if not got:
            self._close_if_idle()
            raise StoreLocked(
                f"{self.path}: another thread of this process kept the store busy for "
                f"{timeout:g} s (a long `with store.hold():` block?); finish it and retry"
            )
        try:
            if not self._open_now:
                try:
                    self._open(timeout)
                except duckdb.Error as error:
                    if (ours := translated(self.path, error)) is None:
                        raise
                    raise ours from error
                self._open_now = True
            self._depth += 1
            failed = False
            try:
                assert self._con is not None
                yield self._con
            except duckdb.Error as error:
                failed = True
                if (ours := translated(self.path, error)) is None:
                    raise
                raise ours from error
            except BaseException:
                failed = True  # hand nothing over in a state we did not check
                raise
            finally:
                self._depth -= 1
                if self._depth == 0 and (failed or not self._waiting):
                    self._open_now = False
                    self._close()
        finally:
            self._mutex.release()

    @contextmanager
    def settled(self, timeout: float) -> Iterator[Path]:
        """No forge process using the file, and nothing attached: the path of the store's
        whole state as it stands (the pending copy while one waits), to be read as bytes."""
        if not self._mutex.acquire(timeout=max(timeout, 0.001)):
            raise StoreLocked(f"{self.path}: another thread of this process kept the store "
                              f"busy for {timeout:g} s; finish it and retry")
        try:
            if self._open_now:
                raise RuntimeError("the store is open in this thread (inside store.hold()?)")
            self._queue.take(time.monotonic() + timeout, timeout)
            try:
                if self.pending.exists():
                    if self._con is None:
                        self._con = duckdb.connect(":memory:", config=DUCKDB_CONFIG)
                    self._land_if_free()
                yield self.pending.path if self.pending.exists() else self.path
            finally:
                self._queue.release()
        finally:
            self._mutex.release()

    def _close_if_idle(self) -> None:
        """A thread that gave up waiting may have been handed an open file nobody will close."""
        if self._mutex.acquire(blocking=False):
            try:
                if self._open_now and self._depth == 0 and not self._waiting:
                    self._open_now = False
                    self._close()
            finally:
                self._mutex.release()

    @contextmanager
    def transaction(self, timeout: float) -> Iterator[duckdb.DuckDBPyConnection]:
        """One transaction around the outermost call; nested calls join it."""
        with self.opened(timeout) as con:
            if self._in_tx:
                yield con
                return
            con.execute("BEGIN TRANSACTION")
            self._in_tx = True
            try:
                yield con
            except BaseException:
                self._in_tx = False
                with suppress(duckdb.Error):
                    con.execute("ROLLBACK")
                raise
            self._in_tx = False
            try:
                con.execute("COMMIT")
            except BaseException:
                with suppress(duckdb.Error):
                    con.execute("ROLLBACK")
                raise

    @contextmanager
    def rolled_back(self, timeout: float) -> Iterator[duckdb.DuckDBPyConnection]:
        """A transaction that is always rolled back: whatever runs in it leaves no trace."""
        with self.opened(timeout) as con:
            if self._in_tx:
                raise RuntimeError("a read-only query cannot run inside a store write")
            con.execute("BEGIN TRANSACTION")
            self._in_tx = True
            try:
                yield con
            finally:
                self._in_tx = False
                with suppress(duckdb.Error):
                    con.execute("ROLLBACK")

    # -- open / close -------------------------------------------------------------------------

    def _open(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        try:
            self._queue.take(deadline, timeout)
        except OSError as error:  # no lock file beside it: a name too long, a read-only folder
            raise path_error(self.lock_path, error, f"the lock file of {self.path}") from error
        try:
            check_header(self.path)
            if self._con is None:
                self._con = duckdb.connect(":memory:", config=DUCKDB_CONFIG)
            self._attach_store(timeout)
            try:
                self._con.execute(f"USE {CATALOG}")
                migrate(self._con, str(self.path))
            except BaseException:
                self._detach()
                raise
        except BaseException:
            self._queue.release()
            raise

    def _close(self) -> None:
        try:
            self._detach()
        finally:
            self._in_tx = False
            self._queue.release()
            if self.diverted:
                self._land_later()

    def _land_later(self) -> None:
        """Look again soon whether the file is free, so the pending copy lands even when this
        process writes nothing more (a turn that ended, a kernel left idle)."""
        if self._lander is not None and self._lander.is_alive():
            return
        self._lander = threading.Timer(LAND_EVERY, self._try_landing)
        self._lander.daemon = True
        self._lander.start()

    def _try_landing(self) -> None:
        self._lander = None
        if not self.pending.exists():
            return
        try:
            with self.opened(5.0):  # lands it if the file is free (``_attach_store``)
                pass
        except Exception:  # noqa: BLE001 - tried again; every caller still gets its own error
            self._land_later()

    def _attach_store(self, timeout: float) -> None:
        """Attach the file — or, while a program outside forge holds it, the pending copy."""
        pending = self.pending
        self.diverted = False
        if pending.exists() and not self._land_if_free():
            self._attach(pending.path, time.monotonic() + timeout, timeout)
            self.diverted = True
            return
        if self._attach(self.path, time.monotonic() + FOREIGN_WAIT, timeout, final=False):
            return
        try:
            pending.make()
        except OSError as error:
            raise StoreLocked(
                f"{self.path} is held open by a program outside forge-jupyter, and the copy "
                f"forge-jupyter works on meanwhile could not be made beside it ({error}). "
                "Close that program's connection to the file (quit the duckdb CLI, or call "
                ".close() on the connection) and try again."
            ) from error
        say(f"{self.path} is held open by another program; forge-jupyter goes on with a "
             f"copy beside it ({pending.path.name}), which takes the file's place as soon as "
             "that program lets go. To look at the history without holding the file, read a "
             "snapshot: forge-jupyter snapshot (docs/storage.md).")
        self._attach(pending.path, time.monotonic() + timeout, timeout)
        self.diverted = True

    def _land_if_free(self) -> bool:
        """Land the pending copy if nothing holds the file now; False while something does."""
        fd = self.pending.hold_free()
        if fd is None:
            return False
        try:
            if not self.pending.usable():
                self.pending.set_aside("not a plain file of this user's")
                return True
            try:  # whole and ours? (attaching also replays and folds its write-ahead log)
                self._attach(self.pending.path, time.monotonic() + 1.0, 1.0)
                assert self._con is not None
                self._con.execute(f"USE {CATALOG}")
                schema_version(self._con, str(self.pending.path))
            except (duckdb.Error, StoreUnreadable, StoreLocked) as error:
                with suppress(duckdb.Error):
                    self._detach()
                self.pending.set_aside(str(error))
                return True
            self._detach()
            landed = self.pending.land()
            if landed.kept_changes is not None:
                say(f"{self.path}: forge-jupyter's writes that waited beside the file are "
                     f"in it now; the other program had changed it meanwhile, and its version "
                     f"is kept as {landed.kept_changes.name}.")
            return True
        finally:
            if fd >= 0:
                os.close(fd)

    def _attach(self, path: Path, deadline: float, timeout: float, *, final: bool = True) -> bool:
        """Attach ``path`` as the catalog, retrying while another program holds it; at the
        deadline, False (or, when ``final``, ``StoreLocked``)."""
        assert self._con is not None
        target = str(path).replace("'", "''")
        delay = _BACKOFF_FIRST
        while True:
            # asked only of a file not made yet (our flock is held: no other forge process
            # makes it meanwhile); of an existing one DuckDB refuses a lower version
            new = not path.exists() or path.stat().st_size == 0
            version = f", STORAGE_VERSION '{STORAGE_VERSION}'" if new else ""
            try:
                self._con.execute(f"ATTACH '{target}' AS {CATALOG} (TYPE DUCKDB{version})")
                return True
            except duckdb.Error as error:
                if not _is_lock_error(error):
                    raise StoreUnreadable(
                        f"{path} could not be opened as a forge-jupyter database ({error}). "
                        "It was left as it is; move it away or point forge-jupyter at another "
                        "file (the FORGE_DB variable or the store's path)."
                    ) from error
                left = deadline - time.monotonic()
                if left <= 0:
                    if not final:
                        return False
                    raise StoreLocked(
                        f"{path} is held open by a program outside forge-jupyter "
                        f"({error}). Close that program's connection to the file (quit the "
                        f"duckdb CLI, or call .close() on the connection) and try again, or "
                        f"give the store a longer lock_timeout (now {timeout:g} s)."
                    ) from error
                time.sleep(min(left, delay * random.uniform(0.5, 1.0)))
                delay = min(delay * 2, _BACKOFF_MAX)

    def _detach(self) -> None:
        if self._con is None:
            return
        try:
            self._con.execute("USE memory")
            self._con.execute(f"DETACH DATABASE IF EXISTS {CATALOG}")
        except BaseException:
            # the instance is in a state we cannot reason about: drop it, which lets go of
            # the file as surely as a detach
            con, self._con = self._con, None
            with suppress(duckdb.Error):
                con.close()
            raise

# ----------------------------------------------------------------- one object per file per process

_files: dict[str, DuckDBFile] = {}
_files_guard = threading.Lock()
# Objects inherited through fork(): DuckDB is not fork-safe, so a child never uses nor
# destroys them (destroying one could write to the parent's file).
_inherited: list[DuckDBFile] = []


def shared_file(path: Path) -> DuckDBFile:
    """This process's one ``DuckDBFile`` for ``path`` (every store object on it shares it)."""
    key = os.path.realpath(path)
    with _files_guard:
        found = _files.get(key)
        if found is None:
            found = _files[key] = DuckDBFile(Path(key))
        return found


def _after_fork_in_child() -> None:
    global _files_guard
    _inherited.extend(_files.values())
    _files.clear()
    _files_guard = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)
