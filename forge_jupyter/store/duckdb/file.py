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

Why attach rather than ``duckdb.connect(path)``: creating a DuckDB instance costs ~18 ms here
(it registers every builtin function), attaching a file ~1.5 ms; detaching releases the file
exactly as closing does. The in-memory instance holds no file, so an idle process holds nothing.
"""

from __future__ import annotations

import fcntl
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
from .schema import migrate

CATALOG = "forge"  # the name the attached file goes by inside our instance
# A new file is written in the storage format DuckDB 1.0 reads, so the DuckDB CLI, DBeaver/JDBC
# and 1.x Python or Node clients people have open it too (2.x writes version 69, which 1.x
# refuses). An existing file keeps the format it has: DuckDB cannot lower it (a 1.x-readable
# copy of an older store: ``forge-jupyter copy old.duckdb new.duckdb``, docs/storage.md).
STORAGE_VERSION = "v1.0.0"
DUCKDB_CONFIG = {
    # never reach for the network: a file that looks like another format must fail, not
    # make DuckDB download a scanner extension for it
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}
_BACKOFF_FIRST = 0.005
_BACKOFF_MAX = 0.25


def _is_lock_error(error: duckdb.Error) -> bool:
    text = str(error)
    return "Could not set lock" in text or "Conflicting lock" in text


class _FlockWait:
    """A blocking ``flock`` in a helper thread, so that the wait can be bounded.

    The helper owns the descriptor until ``wait`` returns True; when the caller gives up
    (timeout, KeyboardInterrupt) the helper closes it as soon as its ``flock`` returns.
    """

    def __init__(self, fd: int):
        self.fd = fd
        self.got = threading.Event()
        self.cancelled = False
        self.guard = threading.Lock()
        threading.Thread(target=self._wait, name="forge-store-flock", daemon=True).start()

    def _wait(self) -> None:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except OSError:
            pass
        with self.guard:
            if self.cancelled:  # the caller gave up: let the next process have it
                os.close(self.fd)
            else:
                self.got.set()

    def wait(self, timeout: float) -> bool:
        try:
            if self.got.wait(max(0.0, timeout)):
                return True
        except BaseException:
            self._give_up()
            raise
        return not self._give_up()

    def _give_up(self) -> bool:
        """True when the caller gave up in time; False when the lock came through after all."""
        with self.guard:
            if self.got.is_set():
                return False
            self.cancelled = True
            return True


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
        self._lock_fd: int | None = None
        self._con: duckdb.DuckDBPyConnection | None = None  # in-memory instance, kept
        self._in_tx = False

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
            self._lock_fd = self._take_flock(deadline, timeout)
        except OSError as error:  # no lock file beside it: a name too long, a read-only folder
            raise path_error(self.lock_path, error, f"the lock file of {self.path}") from error
        try:
            check_header(self.path)
            if self._con is None:
                self._con = duckdb.connect(":memory:", config=DUCKDB_CONFIG)
            self._attach(deadline, timeout)
            try:
                self._con.execute(f"USE {CATALOG}")
                migrate(self._con, str(self.path))
            except BaseException:
                self._detach()
                raise
        except BaseException:
            self._release_flock()
            raise

    def _close(self) -> None:
        try:
            self._detach()
        finally:
            self._in_tx = False
            self._release_flock()

    def _attach(self, deadline: float, timeout: float) -> None:
        assert self._con is not None
        target = str(self.path).replace("'", "''")
        delay = _BACKOFF_FIRST
        while True:
            # asked only of a file not made yet (our flock is held: no other forge process
            # makes it meanwhile); of an existing one DuckDB refuses a lower version
            new = not self.path.exists() or self.path.stat().st_size == 0
            version = f", STORAGE_VERSION '{STORAGE_VERSION}'" if new else ""
            try:
                self._con.execute(f"ATTACH '{target}' AS {CATALOG} (TYPE DUCKDB{version})")
                return
            except duckdb.Error as error:
                if not _is_lock_error(error):
                    raise StoreUnreadable(
                        f"{self.path} could not be opened as a forge-jupyter database ({error}). "
                        "It was left as it is; move it away or point forge-jupyter at another "
                        "file (the FORGE_DB variable or the store's path)."
                    ) from error
                left = deadline - time.monotonic()
                if left <= 0:
                    raise StoreLocked(
                        f"{self.path} is held open by a program outside forge-jupyter "
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

    # -- the cross-process queue ------------------------------------------------------------

    def _take_flock(self, deadline: float, timeout: float) -> int:
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            # queue in the kernel behind the holder; from here on the waiter owns ``fd``
            if not _FlockWait(fd).wait(deadline - time.monotonic()):
                raise StoreLocked(
                    f"{self.path} stayed locked by another forge-jupyter process "
                    f"({self._holder()}) for {timeout:g} s; it may be running a long read or "
                    "be stuck. Wait and retry, stop that process, or give the store a longer "
                    "lock_timeout."
                ) from None
        except BaseException:
            os.close(fd)
            raise
        # who holds the queue, for the message of whoever times out waiting behind us
        with suppress(OSError):  # fixed width: no truncate needed
            os.pwrite(fd, f"pid {os.getpid():<12}\n".encode(), 0)
        return fd

    def _holder(self) -> str:
        try:
            return self.lock_path.read_text().strip() or "pid unknown"
        except OSError:
            return "pid unknown"

    def _release_flock(self) -> None:
        fd, self._lock_fd = self._lock_fd, None
        if fd is not None:
            with suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


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
